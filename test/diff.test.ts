import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectCopy, runInCopy } from './project-copy';

/** A throwaway git repository: the project committed on `main`, then a branch that edits it. */
let root: string;

function git(...args: string[]): string {
  const result = spawnSync('git', ['-C', root, '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

function edit(file: string, from: string | RegExp, to: string): void {
  const full = path.join(root, file);
  const text = fs.readFileSync(full, 'utf8');
  const edited = text.replace(from, to);
  if (edited === text) throw new Error(`${file}: nothing to replace`);
  fs.writeFileSync(full, edited);
}

beforeAll(() => {
  root = projectCopy();
  fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules\nbuild\n');
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'base');
  git('checkout', '-qb', 'feature');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('npm run diff', () => {
  it('reports no change, exit 0, when the working tree renders what main committed', () => {
    const result = runInCopy(root, 'cli/diff', []);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^No rendered changes from merge-base\(HEAD, main\)@[0-9a-f]{7} to working tree\n$/);
    expect(result.status).toBe(0);
  });

  it('lists added, removed and changed objects per environment in promotion order, with a YAML diff of each change', () => {
    edit('src/environments/testing.ts', "tag: 'v1.5.0'", "tag: 'v1.6.0'");
    edit('src/environments/staging.ts', "units: { blue: { tag: 'v1.4.2' } }", "units: { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.6.0' } }");
    edit('src/environments/local.ts', /    users: \[\n[\s\S]*?\n    \],\n/, '    users: [],\n');

    const result = runInCopy(root, 'cli/diff', []);
    expect(result.status).toBe(1);
    const text = result.stdout;
    const headers = text.split('\n').filter((line) => /^\w+: \d+ added/.test(line));
    expect(headers).toEqual(['local: 0 added, 1 removed, 1 changed', 'testing: 0 added, 0 removed, 3 changed', 'staging: 1 added, 0 removed, 1 changed']);
    expect(text).toContain('  - kafka.strimzi.io/v1 KafkaUser kafka/webapp (broker.yaml)');
    expect(text).toContain('  + apps/v1 Deployment webapp/webapp-green (application.yaml)');
    expect(text).toContain('  ~ apps/v1 Deployment webapp/webapp (application.yaml)');
    expect(text).toContain('      -          image: registry.example.com/platform/webapp:v1.5.0\n      +          image: registry.example.com/platform/webapp:v1.6.0');
    // Stable: the same inputs print the same report.
    expect(runInCopy(root, 'cli/diff', []).stdout).toBe(text);
  });

  it('writes Markdown for a pull-request comment', () => {
    const result = runInCopy(root, 'cli/diff', ['--format', 'markdown']);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('| Environment | Added | Removed | Changed |\n|---|---:|---:|---:|\n| local | 0 | 1 | 1 |\n| testing | 0 | 0 | 3 |\n| staging | 1 | 0 | 1 |');
    expect(result.stdout).toContain('```diff\n');
    expect(result.stdout).toContain('<code>apps/v1 Deployment webapp/webapp-green</code> in <code>application.yaml</code>');
  });

  it('compares two commits with --base and --head, and refuses a ref that names nothing', () => {
    git('commit', '-qam', 'testing v1.6.0, green beside blue, no broker users');
    const committed = runInCopy(root, 'cli/diff', ['--base', 'main', '--head', 'feature']);
    // Sources changed, dist/ was not re-rendered: the committed trees are the same.
    expect(committed.stdout).toMatch(/^No rendered changes from main@[0-9a-f]{7} to feature@[0-9a-f]{7}\n$/);
    expect(committed.status).toBe(0);
    expect(runInCopy(root, 'main', []).status).toBe(0);
    git('commit', '-qam', 'render');
    const rendered = runInCopy(root, 'cli/diff', ['--base', 'main', '--head', 'feature']);
    expect(rendered.stdout.split('\n')[0]).toMatch(/^Rendered changes from main@[0-9a-f]{7} to feature@[0-9a-f]{7}$/);
    expect(rendered.stdout).toContain('staging: 1 added, 0 removed, 1 changed');
    expect(rendered.status).toBe(1);
    const refused = runInCopy(root, 'cli/diff', ['--base', 'no-such-ref']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('"no-such-ref" does not name a commit');
  });
});
