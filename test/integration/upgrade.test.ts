import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROMOTE } from '../../src/commands/promote';
import { UPGRADE } from '../../src/commands/upgrade';
import { environmentValuesPath } from '../../src/environments/values-file';
import { knownVersions, RELEASE_NAMES, type ReleaseName } from '../../src/contract/release-versions';
import { commitAll, commitCopy, copyEnvironments, dataCopy, editedFiles, filesChangedSince } from '../project-copy';
import { runInProcess } from '../support';

/**
 * `npm run upgrade` and `npm run promote -- --release` on a throwaway copy of the project's
 * data, committed in its own git repository: the commands write the values and dist/.
 */
let root: string;
let before: Map<string, string>;

/** A release the table knows two versions of. */
const MOVED = RELEASE_NAMES.find((name) => knownVersions(name).length > 1)! as ReleaseName;
const [OLDER, NEWER] = knownVersions(MOVED).slice(-2) as [string, string];

const snapshot = () => editedFiles(root);
/** Files that differ from `before`. */
const changedFiles = () => filesChangedSince(root, before);

const upgrade = (...args: string[]) => runInProcess(UPGRADE, args, root);
const versionIn = (environment: string) => copyEnvironments(root)[environment]!.infrastructure.versions[MOVED];

beforeEach(() => {
  root = dataCopy();
  commitCopy(root);
  before = snapshot();
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('npm run upgrade', () => {
  it('changes the version line of one environment values file, keeps its comments, re-renders its Application and prints the diff', async () => {
    const file = environmentValuesPath('local');
    const running = versionIn('local');
    const other = running === NEWER ? OLDER : NEWER;
    const result = await upgrade('--env', 'local', '--release', MOVED, '--version', other, ...(other === OLDER ? ['--allow-downgrade'] : []));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`local: ${MOVED} ${running} -> ${other}`);
    expect(result.stdout).toContain(`~ argoproj.io/v1alpha1 Application argocd/${MOVED} (infrastructure.yaml)`);
    expect(result.stdout).toMatch(new RegExp(`-\\s+targetRevision: ${running.replace(/\./g, '\\.')}\n\\s+\\+\\s+targetRevision: ${other.replace(/\./g, '\\.')}\n`));
    // Only local: its values, its infrastructure chart (and the values digests of its applications' chart versions).
    expect(changedFiles().filter((changed) => !changed.endsWith('chart-versions.json'))).toEqual(['dist/local/infrastructure.yaml', file]);
    const old = before.get(file)!.split('\n');
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    expect(lines).toHaveLength(old.length);
    expect(lines.filter((line, i) => line !== old[i])).toEqual([`    ${MOVED}: ${other}`]);
  });

  it.each([
    [['--env', 'local', '--release', MOVED, '--version', '0.0.0'], 2, `upgrade: --version "0.0.0" is not a version of ${MOVED} the release table knows (src/contract/release-versions.ts): one of ${knownVersions(MOVED).join(', ')}`],
    [['--env', 'local', '--release', 'nginx', '--version', NEWER], 2, `upgrade: --release "nginx" is not an infrastructure release (src/infrastructure/releases.ts): one of ${RELEASE_NAMES.join(', ')}`],
    [['--env', 'qa', '--release', MOVED, '--version', NEWER], 2, 'upgrade: --env "qa" is not an environment; choose one of local, testing, staging, production'],
    [['--env', 'local', '--version', NEWER], 2, 'upgrade: --release <release> is required'],
  ])('refuses %j, writing nothing', async (args, status, message) => {
    const result = await upgrade(...args);
    expect(result.status).toBe(status);
    expect(result.stderr.split('\n')[0]).toBe(message);
    expect(changedFiles()).toEqual([]);
  });

  it('moves local and testing to another version while staging and production keep theirs, then promotes it in order', async () => {
    // Every environment on the older version first (a downgrade, allowed), committed.
    for (const environment of ['local', 'testing', 'staging', 'production']) {
      const down = await upgrade('--env', environment, '--release', MOVED, '--version', OLDER, '--allow-downgrade');
      expect(down.status, down.stderr).toBe(0);
    }
    commitAll(root, 'older');
    const downgrade = await upgrade('--env', 'local', '--release', MOVED, '--version', OLDER);
    expect(downgrade.stdout).toBe(`local already runs ${MOVED} ${OLDER}; nothing was written.\n`);
    expect((await upgrade('--env', 'local', '--release', MOVED, '--version', NEWER)).status).toBe(0);
    expect((await upgrade('--env', 'testing', '--release', MOVED, '--version', NEWER)).status).toBe(0);
    const early = await upgrade('--env', 'production', '--release', MOVED, '--version', NEWER);
    expect(early.status).toBe(1);
    expect(early.stderr.split('\n')[0]).toContain(`upgrade: production runs a version after staging runs it`);
    expect(['local', 'testing', 'staging', 'production'].map(versionIn)).toEqual([NEWER, NEWER, OLDER, OLDER]);
    const promoted = await runInProcess(PROMOTE, ['--from', 'testing', '--to', 'staging', '--release', MOVED], root);
    expect(promoted.stderr).toBe('');
    expect(promoted.stdout).toContain(`staging: ${MOVED} ${OLDER} -> ${NEWER} (promoted from testing)`);
    expect(['local', 'testing', 'staging', 'production'].map(versionIn)).toEqual([NEWER, NEWER, NEWER, OLDER]);
    const both = await runInProcess(PROMOTE, ['--from', 'staging', '--to', 'production', '--release', MOVED, '--app', 'webapp'], root);
    expect(both.status).toBe(2);
    // Nine commands, each rendering the project: beside the e2e in `npm test`, past the default minute.
  }, 300_000);
});
