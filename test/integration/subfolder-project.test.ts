import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/base/errors';
import { DIFF } from '../../src/commands/diff';
import { loadEnvironments } from '../../src/environments';
import { readValuesTexts } from '../../src/environments/values-file';
import { synthesize } from '../../src/synth';
import { git } from '../project-copy';
import { ROOT, runInProcess, temporaryDirectory } from '../support';

// A platform repository is often one folder of a larger repository: what reads the committed
// state (the blue-green guard, diff) reads it there too, never silently nothing.

let top: string;
let project: string;

beforeAll(() => {
  top = temporaryDirectory('platform-gitops-monorepo-');
  project = path.join(top, 'platform');
  for (const entry of ['src/environments', 'dist', 'package.json']) fs.cpSync(path.join(ROOT, entry), path.join(project, entry), { recursive: true });
  fs.writeFileSync(path.join(top, 'README.md'), 'another project beside the platform\n');
  git(top, 'init', '-q', '-b', 'main');
  git(top, 'add', '-A');
  git(top, 'commit', '-qm', 'base');
});
afterAll(() => fs.rmSync(top, { recursive: true, force: true }));

describe('a project in a folder of its git repository', () => {
  it('diffs against the committed rendering of its own folder', async () => {
    const result = await runInProcess(DIFF, [], project);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^No rendered changes from merge-base\(HEAD, main\)@[0-9a-f]{7} to working tree\n$/);
    expect(result.status).toBe(0);
  });

  it('judges a blue-green step against its folder of HEAD', () => {
    const environments = loadEnvironments(readValuesTexts(project));
    const staging = structuredClone(environments.find((environment) => environment.name === 'staging')!) as any;
    const blueGreen = staging.applications[0].strategy.blueGreen;
    // Remove the unit the committed Service selects, in the same change as moving to the other.
    const live = blueGreen.active;
    delete blueGreen.units[live];
    blueGreen.active = live === 'blue' ? 'green' : 'blue';
    blueGreen.units[blueGreen.active] ??= { tag: 'v99.0.0' };
    const order = environments.map((environment) => (environment.name === 'staging' ? staging : environment));
    const outdir = path.join(temporaryDirectory(), 'dist');
    try {
      expect(() => synthesize({ outdir, root: project, environments: order })).toThrow(ConfigError);
      expect(() => synthesize({ outdir, root: project, environments: order })).toThrow('in HEAD');
    } finally {
      fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
    }
  });
});
