import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectCopy } from '../project-copy';

const copies: string[] = [];
afterEach(() => {
  for (const dir of copies.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Whether `ensureBuilt()` of the copy's scripts/build.cjs compiled (true) or found build/ current. */
function ensureBuiltIn(root: string): boolean {
  const result = spawnSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(path.join(root, 'scripts', 'build.cjs'))}).ensureBuilt()))`], {
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout === 'true';
}

describe('the build of the commands (scripts/build.cjs)', () => {
  it('is not redone after a values file changes, only after a source does', () => {
    const root = projectCopy();
    copies.push(root);
    expect(ensureBuiltIn(root)).toBe(false);
    // Data: the values files are read when a command runs, never compiled in.
    fs.appendFileSync(path.join(root, 'src', 'environments', 'testing', 'environment.yaml'), '# an edit of data\n');
    expect(ensureBuiltIn(root)).toBe(false);
    // Code.
    fs.appendFileSync(path.join(root, 'src', 'naming.ts'), '// an edit of code\n');
    expect(ensureBuiltIn(root)).toBe(true);
    expect(ensureBuiltIn(root)).toBe(false);
  });
});
