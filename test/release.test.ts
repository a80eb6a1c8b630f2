import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectCopy, runInCopy } from './project-copy';
import { treeContents } from './support';

/** A throwaway copy of the project per test: release and promote write files. */
let root: string;
let before: Map<string, string>;

beforeEach(() => {
  root = projectCopy();
  before = new Map([...treeContents(path.join(root, 'src', 'environments')), ...[...treeContents(path.join(root, 'dist'))].map(([f, c]) => [`dist/${f}`, c] as const)]);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function snapshot(): Map<string, string> {
  return new Map([...treeContents(path.join(root, 'src', 'environments')), ...[...treeContents(path.join(root, 'dist'))].map(([f, c]) => [`dist/${f}`, c] as const)]);
}

/** Files that differ from the copy's start. */
function changedFiles(): string[] {
  const after = snapshot();
  return [...new Set([...before.keys(), ...after.keys()])].filter((file) => before.get(file) !== after.get(file)).sort();
}

function environmentSource(name: string): string {
  return fs.readFileSync(path.join(root, 'src', 'environments', `${name}.ts`), 'utf8');
}

describe('npm run release', () => {
  it('changes one environment tag line, re-renders only its image lines, and prints the rendered diff', () => {
    const result = runInCopy(root, 'cli/release', ['--env', 'testing', '--tag', 'v1.6.0']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('testing: image.tag v1.5.0 -> v1.6.0 (rolling)');
    expect(result.stdout).toContain('+          image: registry.example.com/platform/webapp:v1.6.0');
    expect(changedFiles()).toEqual(['dist/testing/application.yaml', 'testing.ts']);
    const sourceDiff = environmentSource('testing').split('\n').filter((line, i) => line !== before.get('testing.ts')!.split('\n')[i]);
    expect(sourceDiff).toEqual(["    tag: 'v1.6.0',"]);
  });

  it('puts a blue-green release on the inactive unit, beside the active one', () => {
    const result = runInCopy(root, 'cli/release', ['--env', 'staging', '--tag', 'v1.6.0']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('staging: unit green added with v1.6.0 beside blue (active, v1.4.2)');
    expect(environmentSource('staging')).toMatch(/units: \{ blue: \{ tag: 'v1\.4\.2' \}, green: \{ tag: 'v1\.6\.0' \} \}/);
    const application = fs.readFileSync(path.join(root, 'dist', 'staging', 'application.yaml'), 'utf8');
    expect(application).toContain('name: webapp-green');
    expect(application).toMatch(/selector:\n    app: webapp\n    version: blue/);
  });

  it.each([
    [['--env', 'testing', '--tag', 'latest'], 'release: --tag "latest" must look like v<major>.<minor>.<patch>'],
    [['--env', 'qa', '--tag', 'v1.6.0'], 'release: --env "qa" is not an environment; choose one of local, testing, staging, production'],
    [['--tag', 'v1.6.0'], 'release: --env <environment> is required'],
  ])('refuses %j, writing nothing', (args, message) => {
    const result = runInCopy(root, 'cli/release', args);
    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(message);
    expect(changedFiles()).toEqual([]);
  });

  it('writes nothing when the environment already runs the tag', () => {
    const result = runInCopy(root, 'cli/release', ['--env', 'local', '--tag', 'v1.5.0']);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('local already runs v1.5.0; nothing was written.\n');
    expect(changedFiles()).toEqual([]);
  });
});

describe('npm run promote', () => {
  it('copies the running tag to the next environment', () => {
    runInCopy(root, 'cli/release', ['--env', 'local', '--tag', 'v1.7.0']);
    before = snapshot();
    const result = runInCopy(root, 'cli/promote', ['--from', 'local', '--to', 'testing']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('testing: image.tag v1.5.0 -> v1.7.0 (rolling)');
    expect(changedFiles()).toEqual(['dist/testing/application.yaml', 'testing.ts']);
  });

  it('promotes blue-green staging by its active unit, to production', () => {
    const result = runInCopy(root, 'cli/promote', ['--from', 'staging', '--to', 'production']);
    // staging's active blue runs v1.4.2, which production already runs.
    expect(result.stdout).toBe('production already runs v1.4.2; nothing was written.\n');
    expect(result.status).toBe(0);
  });

  it.each([
    [['--from', 'local', '--to', 'staging'], 'promote: "local" -> "staging" skips testing; promotion follows local -> testing -> staging -> production: promote to testing first'],
    [['--from', 'staging', '--to', 'testing'], 'promote: "staging" -> "testing" moves backward; promotion follows local -> testing -> staging -> production. To run an older version in testing, use `npm run release -- --env testing --tag <tag>`'],
    [['--from', 'testing', '--to', 'testing'], 'promote: --from and --to are both "testing": promotion moves a version to the next environment (local -> testing -> staging -> production)'],
    [['--from', 'production', '--to', 'local'], 'promote: "production" is the last environment (local -> testing -> staging -> production); there is nothing to promote it to'],
  ])('refuses %j, writing nothing', (args, message) => {
    const result = runInCopy(root, 'cli/promote', args);
    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(message);
    expect(changedFiles()).toEqual([]);
  });
});
