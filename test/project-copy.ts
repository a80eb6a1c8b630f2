import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Environment, loadEnvironments } from '../src/environments';
import { compareTags } from '../src/environments/strategy-values';
import { runningTagOf } from '../src/environments/strategy-registry';
import { readValuesTexts } from '../src/environments/values-file';
import { ROOT, temporaryDirectory, treeContents } from './support';

/** What a copy of the project needs to build, render and run its commands. */
const COPIED = ['src', 'e2e', 'pulumi', 'toolchain', 'scripts', 'dist', 'package.json', 'package-lock.json', 'tsconfig.json', 'build'] as const;

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

/** What the commands that edit values and render read and write: the values files, dist/ and the project marker. */
const DATA = ['src/environments', 'dist', 'package.json'] as const;

/**
 * A throwaway copy of the project's data only (values files, committed dist/), for commands
 * run in process (`runInProcess(..., copy)`): the code stays this checkout's. Remove it with `fs.rmSync`.
 */
export function dataCopy(): string {
  const dir = temporaryDirectory('platform-gitops-data-');
  for (const entry of DATA) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  return dir;
}

/** Run `node scripts/run.cjs <command> ...` in a project copy: builds the copy, then runs it. */
export function runInCopy(root: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'run.cjs'), command, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Run git in the repository at `root` as a test user; its output, or an error naming the command. */
export function git(root: string, ...args: string[]): string {
  const result = spawnSync('git', ['-C', root, '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** Make the copy at `root` a git repository with everything committed on `main`. */
export function commitCopy(root: string): void {
  fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules\nbuild\n');
  git(root, 'init', '-q', '-b', 'main');
  commitAll(root, 'base');
}

/** Commit everything in the copy at `root`. */
export function commitAll(root: string, message: string): void {
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', message);
}

/** The copy's environments by name, read from its values files: expectations derive from them, not from literals. */
export function copyEnvironments(root: string): Record<string, Environment> {
  return Object.fromEntries(loadEnvironments(readValuesTexts(root)).map((env) => [env.name, env]));
}

/** A tag newer than every tag the copy at `root` runs. */
export function newerTag(root: string): string {
  const newest = Object.values(copyEnvironments(root))
    .flatMap((env) => env.applications.map(runningTagOf))
    .sort(compareTags)
    .pop()!;
  const [major, minor] = newest.slice(1).split('.').map(Number) as [number, number];
  return `v${major}.${minor + 1}.0`;
}

/** What the edit commands write in a copy: every file below src/environments/ and dist/, by project-relative path. */
export function editedFiles(root: string): Map<string, string> {
  return new Map([
    ...[...treeContents(path.join(root, 'src', 'environments'))].map(([f, c]) => [`src/environments/${f}`, c] as const),
    ...[...treeContents(path.join(root, 'dist'))].map(([f, c]) => [`dist/${f}`, c] as const),
  ]);
}

/** The files of `editedFiles(root)` that differ from `before`, sorted. */
export function filesChangedSince(root: string, before: ReadonlyMap<string, string>): string[] {
  const after = editedFiles(root);
  return [...new Set([...before.keys(), ...after.keys()])].filter((file) => before.get(file) !== after.get(file)).sort();
}
