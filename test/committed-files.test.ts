import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCommittedHead, readCommittedFiles } from '../src/base/git';
import { git } from './project-copy';
import { ROOT, temporaryDirectory } from './support';

// Committed files are read by one `git cat-file --batch` process: each must come back byte
// for byte, whatever its size or characters, and a path a commit lacks as undefined.

const FIRST = {
  'dist/local/a.yaml': 'kind: ConfigMap\ndata:\n  greeting: "grüße 👋"\n',
  'dist/local/empty.yaml': '',
  'dist/local/no-newline.yaml': 'kind: Service',
  'dist/local/blank-lines.yaml': '\n\n---\n\n',
  'dist/local/with space.yaml': 'kind: Namespace\n',
};
const SECOND = { 'dist/local/a.yaml': 'kind: Secret\n', 'dist/staging/b.yaml': 'x: 1\n' };

const directories: string[] = [];
afterAll(() => {
  for (const dir of directories) fs.rmSync(dir, { recursive: true, force: true });
});

/** A new, empty git repository. */
function repositoryWithoutCommits(): string {
  const dir = temporaryDirectory('platform-gitops-git-');
  directories.push(dir);
  git(dir, 'init', '-q', '-b', 'main');
  return dir;
}

/** Commit `files` in `repository`; the commit's id. */
function commit(repository: string, files: Record<string, string>, message: string): string {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repository, file)), { recursive: true });
    fs.writeFileSync(path.join(repository, file), text);
  }
  git(repository, 'add', '-A');
  git(repository, 'commit', '-qm', message);
  return git(repository, 'rev-parse', 'HEAD').trim();
}

describe('whether a project has a committed HEAD', () => {
  it('has none before the first commit and outside a repository; has one in a folder below the top (a project in a folder of its repository)', () => {
    const repository = repositoryWithoutCommits();
    expect(hasCommittedHead(repository)).toBe(false);
    commit(repository, FIRST, 'first');
    expect(hasCommittedHead(repository)).toBe(true);
    expect(hasCommittedHead(path.join(repository, 'dist'))).toBe(true);
    expect(hasCommittedHead(path.join(repository, '..'))).toBe(false);
  });

  it('has none where git is not installed: synth then judges against the output folder', () => {
    const searchPath = process.env.PATH;
    const empty = temporaryDirectory('platform-gitops-no-git-');
    process.env.PATH = empty;
    try {
      expect(hasCommittedHead(ROOT)).toBe(false);
    } finally {
      process.env.PATH = searchPath;
      fs.rmSync(empty, { recursive: true, force: true });
    }
    expect(hasCommittedHead(ROOT)).toBe(true);
  });
});

describe('reading committed files', () => {
  let repository = '';
  let first = '';
  let second = '';
  beforeAll(() => {
    repository = repositoryWithoutCommits();
    first = commit(repository, FIRST, 'first');
    second = commit(repository, SECOND, 'second');
  });

  it('gives every file of several commits as committed, and undefined for paths a commit lacks', () => {
    const objects = [
      ...Object.keys(FIRST).map((file) => `${first}:${file}`),
      `${first}:dist/staging/b.yaml`,
      `${second}:dist/local/a.yaml`,
      'HEAD:dist/staging/b.yaml',
      'HEAD:dist/local',
      'HEAD:dist/nosuch.yaml',
    ];
    const read = readCommittedFiles(repository, objects);
    expect([...read.keys()]).toEqual(objects);
    for (const [file, text] of Object.entries(FIRST)) expect(read.get(`${first}:${file}`), file).toBe(text);
    expect(read.get(`${first}:dist/staging/b.yaml`)).toBeUndefined();
    expect(read.get(`${second}:dist/local/a.yaml`)).toBe(SECOND['dist/local/a.yaml']);
    expect(read.get('HEAD:dist/staging/b.yaml')).toBe(SECOND['dist/staging/b.yaml']);
    expect(read.get('HEAD:dist/local'), 'a folder is no file').toBeUndefined();
    expect(read.get('HEAD:dist/nosuch.yaml')).toBeUndefined();
  });

  it('reads the answers after a missing path with spaces (whose "missing" line has three words) right', () => {
    const read = readCommittedFiles(repository, ['HEAD:dist/a missing', 'HEAD:dist/local/with space.yaml', 'HEAD:dist/staging/b.yaml']);
    expect(read.get('HEAD:dist/a missing')).toBeUndefined();
    expect(read.get('HEAD:dist/local/with space.yaml')).toBe(FIRST['dist/local/with space.yaml']);
    expect(read.get('HEAD:dist/staging/b.yaml')).toBe(SECOND['dist/staging/b.yaml']);
  });

  it('refuses a path with a line break instead of misreading the answers after it', () => {
    expect(() => readCommittedFiles(repository, ['HEAD:dist/a\nb.yaml'])).toThrow('cannot read "HEAD:dist/a\\nb.yaml" from git: a line break in a path');
  });
});
