import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasCommittedHead, readCommittedFiles } from '../src/dist-layout';
import { git } from './project-copy';
import { temporaryDirectory } from './support';

// Committed files are read by one `git cat-file --batch` process: each must come back byte
// for byte, whatever its size or characters, and a path a commit lacks as undefined.

const repository = temporaryDirectory('platform-gitops-git-');
afterAll(() => fs.rmSync(repository, { recursive: true, force: true }));

const FIRST = {
  'dist/local/a.yaml': 'kind: ConfigMap\ndata:\n  greeting: "grüße 👋"\n',
  'dist/local/empty.yaml': '',
  'dist/local/no-newline.yaml': 'kind: Service',
  'dist/local/blank-lines.yaml': '\n\n---\n\n',
};

function commit(files: Record<string, string>, message: string): string {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repository, file)), { recursive: true });
    fs.writeFileSync(path.join(repository, file), text);
  }
  git(repository, 'add', '-A');
  git(repository, 'commit', '-qm', message);
  return git(repository, 'rev-parse', 'HEAD').trim();
}

describe('reading committed files', () => {
  it('has no committed HEAD before the first commit, and outside a repository', () => {
    git(repository, 'init', '-q', '-b', 'main');
    expect(hasCommittedHead(repository)).toBe(false);
    expect(hasCommittedHead(path.join(repository, '..'))).toBe(false);
  });

  it('gives every file of several commits as committed, and undefined for paths a commit lacks', () => {
    const first = commit(FIRST, 'first');
    const second = commit({ 'dist/local/a.yaml': 'kind: Secret\n', 'dist/staging/b.yaml': 'x: 1\n' }, 'second');
    expect(hasCommittedHead(repository)).toBe(true);
    expect(hasCommittedHead(path.join(repository, 'dist'))).toBe(false);

    const objects = [
      ...Object.keys(FIRST).map((file) => `${first}:${file}`),
      `${first}:dist/staging/b.yaml`,
      `${second}:dist/local/a.yaml`,
      `HEAD:dist/staging/b.yaml`,
      'HEAD:dist/local',
      'HEAD:dist/nosuch.yaml',
    ];
    const read = readCommittedFiles(repository, objects);
    expect([...read.keys()]).toEqual(objects);
    for (const [file, text] of Object.entries(FIRST)) expect(read.get(`${first}:${file}`), file).toBe(text);
    expect(read.get(`${first}:dist/staging/b.yaml`)).toBeUndefined();
    expect(read.get(`${second}:dist/local/a.yaml`)).toBe('kind: Secret\n');
    expect(read.get('HEAD:dist/staging/b.yaml')).toBe('x: 1\n');
    expect(read.get('HEAD:dist/local'), 'a folder is no file').toBeUndefined();
    expect(read.get('HEAD:dist/nosuch.yaml')).toBeUndefined();
  });

  it('reads the answers after a missing path with spaces (whose "missing" line has three words) right', () => {
    commit({ 'dist/local/with space.yaml': 'kind: Namespace\n' }, 'spaces');
    const read = readCommittedFiles(repository, ['HEAD:dist/a missing', 'HEAD:dist/local/with space.yaml', 'HEAD:dist/staging/b.yaml']);
    expect(read.get('HEAD:dist/a missing')).toBeUndefined();
    expect(read.get('HEAD:dist/local/with space.yaml')).toBe('kind: Namespace\n');
    expect(read.get('HEAD:dist/staging/b.yaml')).toBe('x: 1\n');
  });

  it('refuses a path with a line break instead of misreading the answers after it', () => {
    expect(() => readCommittedFiles(repository, ['HEAD:dist/a\nb.yaml'])).toThrow('cannot read "HEAD:dist/a\\nb.yaml" from git: a line break in a path');
  });
});
