import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RELEASE } from '../src/commands/release';
import { SYNTH } from '../src/commands/synth';
import { chartVersionsPath, FIRST_CHART_VERSION, nextChartVersion, sha256, versionIncrementProblems } from '../src/synth/chart-versions';
import { ENVIRONMENT_ORDER } from '../src/environments';
import { chartVersionChanges, hasChanges } from '../src/diff/rendered-diff';
import { formatMarkdown, formatText } from '../src/diff/format';
import { commitAll, commitCopy, dataCopy, git, newerTag } from './project-copy';
import { nextPatch, ROOT, runInProcess, treeContents } from './support';

// Each application's chart version (src/environments/<environment>/chart-versions.json, the
// record beside the values, outside the generated dist/) changes exactly when its rendered
// content does: a patch with the values, a minor when only the code changed.

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

  it('fails a version that repeats with other content or goes down since the base, as chart-testing does', () => {
    const base = { webapp: { version: '0.2.0', ...chart('a', 'v') }, billing: { version: '0.1.0', ...chart('x', 'v') } };
    expect(versionIncrementProblems('f', base, { ...base, webapp: { version: '0.2.1', ...chart('b', 'v') } }, 'main')).toEqual([]);
    expect(versionIncrementProblems('f', base, { ...base, webapp: { version: '0.2.0', ...chart('b', 'v') } }, 'main')).toEqual([
      'f: webapp: version 0.2.0 names other content than at main (its chart\'s rendered content changed): a chart version names one content for good (run npm run synth: it bumps the version)',
    ]);
    // Down is refused whatever the content: the same content at a lower version is a record set back.
    for (const content of ['a', 'b']) {
      expect(versionIncrementProblems('f', base, { ...base, webapp: { version: '0.1.9', ...chart(content, 'v') } }, 'main')).toEqual([
        'f: webapp: version 0.1.9 is lower than 0.2.0 at main: a chart version never goes down (restore f from main, then npm run synth)',
      ]);
    }
    // A new application has nothing to compare with.
    expect(versionIncrementProblems('f', {}, base, 'main')).toEqual([]);
  });
});

describe('the rendered diff of chart versions', () => {
  it('names each moved version and the record it is in, in text and markdown', () => {
    const entry = (version: string) => ({ version });
    type Records = Map<string, Record<string, { version: string }>>;
    const changes = chartVersionChanges(
      new Map([['testing', { webapp: entry('0.2.0'), gone: entry('0.1.0') }]]) as Records,
      new Map([['testing', { webapp: entry('0.2.1'), added: entry(FIRST_CHART_VERSION) }], ['local', { webapp: entry('0.1.0') }]]) as Records,
      chartVersionsPath,
    );
    expect(changes.map((change) => [change.environment, change.application, change.before, change.after])).toEqual([
      ['local', 'webapp', undefined, '0.1.0'],
      ['testing', 'added', undefined, FIRST_CHART_VERSION],
      ['testing', 'gone', '0.1.0', undefined],
      ['testing', 'webapp', '0.2.0', '0.2.1'],
    ]);
    const sides = { base: 'main@1234567', head: 'working tree' };
    const text = formatText({ environments: [], versions: changes }, sides);
    expect(text).toContain(`  testing: webapp 0.2.0 -> 0.2.1 in ${chartVersionsPath('testing')}\n`);
    expect(text).toContain(`  testing: added new at ${FIRST_CHART_VERSION} in ${chartVersionsPath('testing')}\n`);
    expect(text).toContain(`  testing: gone 0.1.0, removed in ${chartVersionsPath('testing')}\n`);
    expect(hasChanges({ environments: [], versions: changes })).toBe(true);
    expect(formatMarkdown({ environments: [], versions: changes }, sides)).toContain(`- <code>testing: webapp 0.2.0 -&gt; 0.2.1 in ${chartVersionsPath('testing')}</code>`);
    expect(formatText({ environments: [], versions: [] }, sides)).toBe('No rendered changes from main@1234567 to working tree\n');
  });
});

describe('chart versions in the project', () => {
  const copies: string[] = [];
  afterEach(() => {
    for (const copy of copies.splice(0)) fs.rmSync(copy, { recursive: true, force: true });
  });
  const versionsOf = (root: string, environment: string) => JSON.parse(fs.readFileSync(path.join(root, chartVersionsPath(environment)), 'utf8'));
  /** A committed copy of the project's data, removed after the test. */
  const committedCopy = () => {
    const root = dataCopy();
    copies.push(root);
    commitCopy(root);
    return root;
  };
  /** What differs from HEAD in the copy, untracked files included (`git status --porcelain`). */
  const uncommitted = (root: string) => git(root, 'status', '--porcelain', '--untracked-files=all');

  it('keeps the record outside the generated folder: rm -rf dist && npm run synth gives the committed tree byte for byte', async () => {
    const root = committedCopy();
    fs.rmSync(path.join(root, 'dist'), { recursive: true });
    const result = await runInProcess(SYNTH, [], root);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(uncommitted(root)).toBe('');
    expect((await runInProcess(SYNTH, ['--check', '--base', 'HEAD'], root)).status).toBe(0);
  });

  it('a run killed at any moment leaves versions and dist/ that the next synth brings together, never set back', async () => {
    const root = committedCopy();
    const application = Object.keys(versionsOf(root, 'testing'))[0]!;
    const released = await runInProcess(RELEASE, ['--env', 'testing', '--app', application, '--tag', newerTag(root)], root);
    expect(released.status, released.stderr).toBe(0);
    commitAll(root, 'released');
    const record = chartVersionsPath('testing');
    // Each moment of a release's writes: the values file written, then the record, then dist/ in
    // two renames (the old folder aside, the new one in place); the values are the new ones throughout.
    const moments: Record<string, () => void> = {
      'values written, record and dist/ not': () => git(root, 'restore', '--source', 'HEAD~1', '--worktree', '--', record, 'dist'),
      'record written, dist/ not': () => git(root, 'restore', '--source', 'HEAD~1', '--worktree', '--', 'dist'),
      'between the two renames of dist/': () => fs.renameSync(path.join(root, 'dist'), path.join(root, '.dist-render-killed-previous')),
      'dist/ removed by hand': () => fs.rmSync(path.join(root, 'dist'), { recursive: true }),
    };
    for (const [moment, leave] of Object.entries(moments)) {
      leave();
      const synth = await runInProcess(SYNTH, [], root);
      expect(synth.status, `${moment}: ${synth.stderr}`).toBe(0);
      fs.rmSync(path.join(root, '.dist-render-killed-previous'), { recursive: true, force: true });
      expect(uncommitted(root), moment).toBe('');
    }
  });

  it('--check --base refuses a chart version that went down (a record removed or set back), which a plain check cannot see', async () => {
    const root = committedCopy();
    // Environments with a chart above the first version: derived from the record, not named here.
    const moved = ENVIRONMENT_ORDER.flatMap((environment) =>
      Object.entries(versionsOf(root, environment) as Record<string, { version: string }>)
        .filter(([, entry]) => entry.version !== FIRST_CHART_VERSION)
        .map(([application, entry]) => ({ environment, application, version: entry.version })),
    );
    expect(moved.length).toBeGreaterThan(0);
    for (const { environment } of moved) fs.rmSync(path.join(root, chartVersionsPath(environment)), { force: true });
    expect((await runInProcess(SYNTH, [], root)).status).toBe(0);
    // Rendered again from nothing, every chart starts over: dist/ agrees with its record.
    expect((await runInProcess(SYNTH, ['--check'], root)).status).toBe(0);
    const check = await runInProcess(SYNTH, ['--check', '--base', 'HEAD'], root);
    expect(check.status).toBe(1);
    for (const { environment, application, version } of moved) {
      expect(check.stderr).toContain(`${chartVersionsPath(environment)}: ${application}: version ${FIRST_CHART_VERSION} is lower than ${version} at HEAD: a chart version never goes down`);
    }
  });

  it('plain --check fails a record that is not what synth writes, naming it', async () => {
    const root = committedCopy();
    const file = path.join(root, chartVersionsPath('local'));
    const versions = versionsOf(root, 'local');
    const [application] = Object.keys(versions);
    fs.writeFileSync(file, `${JSON.stringify({ ...versions, [application!]: { ...versions[application!], digest: sha256('other') } }, null, 2)}\n`);
    const check = await runInProcess(SYNTH, ['--check'], root);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain(`  - ${chartVersionsPath('local')} (changed)`);
  });

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

    // The version set back by hand (and dist/ rendered from it): the content moved and the version did not.
    fs.writeFileSync(path.join(root, chartVersionsPath('testing')), `${JSON.stringify({ ...after, [application!]: { ...after[application!], version: before[application!].version } }, null, 2)}\n`);
    expect((await runInProcess(SYNTH, [], root)).status).toBe(0);
    expect(versionsOf(root, 'testing')[application!].version).toBe(before[application!].version);
    const check = await runInProcess(SYNTH, ['--check', '--base', 'HEAD'], root);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain(`${chartVersionsPath('testing')}: ${application}: version ${before[application!].version} names other content than at HEAD`);
  });

  it('refuses a record that is not one, naming the file and the field, and leaves it and dist/ as they were', async () => {
    const root = dataCopy();
    copies.push(root);
    const file = path.join(root, chartVersionsPath('local'));
    const versions = JSON.parse(fs.readFileSync(file, 'utf8'));
    const [application] = Object.keys(versions);
    fs.writeFileSync(file, JSON.stringify({ ...versions, [application!]: { ...versions[application!], version: 'latest' } }));
    const text = fs.readFileSync(file, 'utf8');
    const result = await runInProcess(SYNTH, [], root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${chartVersionsPath('local')}: ${application}.version: a version <major>.<minor>.<patch>`);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expect(treeContents(path.join(root, 'dist'))).toEqual(treeContents(path.join(ROOT, 'dist')));
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
      // The record lives beside the values only: the generated folder holds manifests.
      expect(fs.readdirSync(path.resolve(__dirname, '..', 'dist', environment)).filter((file) => file.endsWith('.json'))).toEqual([]);
    }
  });
});
