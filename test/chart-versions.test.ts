import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RELEASE } from '../src/commands/release';
import { SYNTH } from '../src/commands/synth';
import { CHART_VERSIONS_FILE, FIRST_CHART_VERSION, nextChartVersion, sha256, versionIncrementProblems } from '../src/synth/chart-versions';
import { commitCopy, dataCopy, newerTag } from './project-copy';
import { nextPatch, ROOT, runInProcess } from './support';

// Each application's chart version (dist/<environment>/chart-versions.json) changes exactly
// when its rendered content does: a patch with the values, a minor when only the code changed.

const chart = (content: string, values: string) => ({ appVersion: 'v1.0.0', digest: sha256(content), values: sha256(values) });

describe('the next chart version', () => {
  it('starts at the first version, and stays while the content does', () => {
    const first = nextChartVersion(undefined, chart('a', 'v'));
    expect(first.version).toBe(FIRST_CHART_VERSION);
    expect(nextChartVersion(first, chart('a', 'v'))).toEqual(first);
    // The values may change without changing what is rendered (a comment, an unused field): no new chart.
    expect(nextChartVersion(first, chart('a', 'w')).version).toBe(first.version);
  });

  it('is a patch when the values changed the content, a minor when the same values render differently (the code changed)', () => {
    const current = { version: '1.4.2', ...chart('a', 'v') };
    expect(nextChartVersion(current, chart('b', 'w'))).toEqual({ version: '1.4.3', ...chart('b', 'w') });
    expect(nextChartVersion(current, chart('b', 'v'))).toEqual({ version: '1.5.0', ...chart('b', 'v') });
  });

  it('fails a content change whose version did not go up since the base, as chart-testing does', () => {
    const base = { webapp: { version: '0.2.0', ...chart('a', 'v') }, billing: { version: '0.1.0', ...chart('x', 'v') } };
    expect(versionIncrementProblems('f', base, { ...base, webapp: { version: '0.2.1', ...chart('b', 'v') } }, 'main')).toEqual([]);
    expect(versionIncrementProblems('f', base, { ...base, webapp: { version: '0.2.0', ...chart('b', 'v') } }, 'main')).toEqual([
      "f: webapp: its chart's content changed since main, but version 0.2.0 is not higher than 0.2.0 there (run npm run synth: it bumps the version)",
    ]);
    // A new application has nothing to compare with.
    expect(versionIncrementProblems('f', {}, base, 'main')).toEqual([]);
  });
});

describe('chart versions in the project', () => {
  const copies: string[] = [];
  afterEach(() => {
    for (const copy of copies.splice(0)) fs.rmSync(copy, { recursive: true, force: true });
  });
  const versionsOf = (root: string, environment: string) => JSON.parse(fs.readFileSync(path.join(root, 'dist', environment, CHART_VERSIONS_FILE), 'utf8'));

  it('a release bumps the chart in the same write; a content change without a bump fails the check against the base', async () => {
    const root = dataCopy();
    copies.push(root);
    commitCopy(root);
    const before = versionsOf(root, 'testing');
    const [application] = Object.keys(before);
    const released = await runInProcess(RELEASE, ['--env', 'testing', '--app', application!, '--tag', newerTag(root)], root);
    expect(released.status, released.stderr).toBe(0);
    const after = versionsOf(root, 'testing');
    expect(after[application!].version).toBe(nextPatch(before[application!].version));
    expect((await runInProcess(SYNTH, ['--check', '--base', 'HEAD'], root)).status).toBe(0);

    // The version set back by hand: dist/ still renders the same, but the content moved and the version did not.
    fs.writeFileSync(path.join(root, 'dist', 'testing', CHART_VERSIONS_FILE), `${JSON.stringify({ ...after, [application!]: { ...after[application!], version: before[application!].version } }, null, 2)}\n`);
    const check = await runInProcess(SYNTH, ['--check', '--base', 'HEAD'], root);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain(`dist/testing/${CHART_VERSIONS_FILE}: ${application}: its chart's content changed since HEAD, but version ${before[application!].version} is not higher`);
  });

  it('refuses a versions file that is not one, naming the file and the field, and leaves dist/ as it was', async () => {
    const root = dataCopy();
    copies.push(root);
    const file = path.join(root, 'dist', 'local', CHART_VERSIONS_FILE);
    const versions = JSON.parse(fs.readFileSync(file, 'utf8'));
    const [application] = Object.keys(versions);
    fs.writeFileSync(file, JSON.stringify({ ...versions, [application!]: { ...versions[application!], version: 'latest' } }));
    const text = fs.readFileSync(file, 'utf8');
    const result = await runInProcess(SYNTH, [], root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`dist/local/${CHART_VERSIONS_FILE}: ${application}.version: a version <major>.<minor>.<patch>`);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expect((await runInProcess(SYNTH, ['--base', 'HEAD'], root)).stderr).toContain('--base goes with --check');
  });

  // CI's gate on every commit: its changed charts carry higher versions than its parent's
  // (chart-testing's rule); a clone without the parent (shallow) has nothing to compare with.
  const parent = spawnSync('git', ['-C', ROOT, 'rev-parse', '--verify', '--quiet', 'HEAD~1^{commit}'], { encoding: 'utf8' });
  it.skipIf(parent.status !== 0)('the last commit moved the version of every chart whose content it changed', async () => {
    const check = await runInProcess(SYNTH, ['--check', '--base', 'HEAD~1']);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('the committed versions are the ones synth renders from the committed content', () => {
    for (const environment of ['local', 'testing', 'staging', 'production']) {
      for (const [application, entry] of Object.entries(versionsOf(path.resolve(__dirname, '..'), environment)) as [string, { digest: string }][]) {
        expect(entry.digest, `${environment}/${application}`).toBe(sha256(fs.readFileSync(path.resolve(__dirname, '..', 'dist', environment, `${application}.yaml`), 'utf8')));
      }
    }
  });
});
