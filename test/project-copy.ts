import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, temporaryDirectory } from './support';

/** What a copy of the project needs to build, render and run its commands. */
const COPIED = ['src', 'e2e', 'pulumi', 'scripts', 'dist', 'package.json', 'package-lock.json', 'tsconfig.json', 'build'] as const;

/**
 * A throwaway copy of the project (sources, scripts, committed dist/) with node_modules
 * linked, so commands that write files run on the copy. Remove it with `fs.rmSync`.
 */
export function projectCopy(): string {
  const dir = temporaryDirectory('platform-gitops-copy-');
  // Timestamps kept, so the copied build/ stays current (scripts/build.cjs compares sizes and
  // modification times) and a command runs without rebuilding until a source changes.
  for (const entry of COPIED) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true, preserveTimestamps: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Run `node scripts/run.cjs <entry> ...` in a project copy: builds the copy, then runs it. */
export function runInCopy(root: string, entry: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'run.cjs'), entry, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
