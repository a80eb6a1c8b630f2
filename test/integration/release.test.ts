import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIFF } from '../../src/commands/diff';
import { PROMOTE } from '../../src/commands/promote';
import { RELEASE } from '../../src/commands/release';
import { RETIRE } from '../../src/commands/retire';
import { ROLLBACK } from '../../src/commands/rollback';
import { SWITCH } from '../../src/commands/switch';
import { SYNTH } from '../../src/commands/synth';
import { runningTagOf } from '../../src/strategies/values-registry';
import { compareTags } from '../../src/strategies/strategy-values';
import { applicationValuesPath, ValuesFile } from '../../src/environments/values-file';
import type { CommandDefinition } from '../../src/tooling/cli';
import { commitAll, commitCopy, copyEnvironments, dataCopy, newerTag as newerTagOf } from '../project-copy';
import { firstApplication, nextPatch, ROOT, runCli, runInProcess, treeContents } from '../support';
import { chartVersionsPath } from '../../src/synth/chart-versions';

/**
 * A throwaway copy of the project's data per test, committed in its own git repository: the
 * commands write files. They run in this process (`runInProcess`); the last test runs each
 * entry point once as a person would.
 */
let root: string;
let before: Map<string, string>;

function snapshot(): Map<string, string> {
  return new Map([
    ...[...treeContents(path.join(root, 'src', 'environments'))].map(([f, c]) => [`src/environments/${f}`, c] as const),
    ...[...treeContents(path.join(root, 'dist'))].map(([f, c]) => [`dist/${f}`, c] as const),
  ]);
}

/** Files that differ from `before`. */
function changedFiles(): string[] {
  const after = snapshot();
  return [...new Set([...before.keys(), ...after.keys()])].filter((file) => before.get(file) !== after.get(file)).sort();
}

/** An application's chart version in a snapshot of the copy. */
function chartVersion(environment: string, application: string, tree: ReadonlyMap<string, string>): { version: string; appVersion: string } {
  return JSON.parse(tree.get(chartVersionsPath(environment))!)[application];
}

/** The copy's environments by name. */
function environments() {
  return copyEnvironments(root);
}

/** A tag newer than every tag the copy runs. */
function newerTag(): string {
  return newerTagOf(root);
}

/** The commands by name, as the README names them (`npm run <name>`). */
const COMMANDS: Record<string, CommandDefinition<any>> = {
  synth: SYNTH,
  'release': RELEASE,
  'promote': PROMOTE,
  'switch': SWITCH,
  'retire': RETIRE,
  'rollback': ROLLBACK,
  'diff': DIFF,
};

function run(command: string, args: readonly string[]) {
  return runInProcess(COMMANDS[command]!, args, root);
}

function commit(message: string): void {
  commitAll(root, message);
}

beforeEach(() => {
  root = dataCopy();
  commitCopy(root);
  before = snapshot();
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('npm run release', () => {
  it('changes the tag line of one values file, keeps its comments, re-renders only its image lines and prints the diff', async () => {
    const tag = newerTag();
    const previous = firstApplication(environments().testing!).image.tag;
    const file = applicationValuesPath('testing', firstApplication(environments().testing!).name);
    const result = await run('release', ['--env', 'testing', '--tag', tag]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`testing: image.tag ${previous} -> ${tag} (rolling)`);
    expect(result.stdout).toContain(`+          image: registry.example.com/platform/webapp:${tag}`);
    const name = firstApplication(environments().testing!).name;
    expect(changedFiles()).toEqual([`dist/testing/${name}.yaml`, chartVersionsPath('testing'), file].sort());
    // The same write bumps the application's chart: a patch (a values change), appVersion the tag.
    const bumped = nextPatch(chartVersion('testing', name, before).version);
    expect(chartVersion('testing', name, snapshot())).toMatchObject({ version: bumped, appVersion: tag });
    // The report says where the record lives: beside the values, not in dist/.
    expect(result.stdout).toContain(`Chart version of ${name} in ${chartVersionsPath('testing')}: ${chartVersion('testing', name, before).version} -> ${bumped}.`);
    const old = before.get(file)!.split('\n');
    const changed = fs.readFileSync(path.join(root, file), 'utf8').split('\n').filter((line, i) => line !== old[i]);
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatch(new RegExp(`^\\s+tag: ${tag.replace(/\./g, '\\.')}( #.*)?$`));
  });

  it.each([
    [['--env', 'testing', '--tag', 'latest'], 2, 'release: --tag "latest" must look like v<major>.<minor>.<patch>'],
    [['--env', 'qa', '--tag', 'v1.6.0'], 2, 'release: --env "qa" is not an environment; choose one of local, testing, staging, production'],
    [['--tag', 'v1.6.0'], 2, 'release: --env <environment> is required'],
    [['--env', 'testing', '--tag', 'v1.6.0', '--bogus'], 2, "release: Unknown option '--bogus'"],
  ])('refuses %j, writing nothing', async (args, status, message) => {
    const result = await run('release', args);
    expect(result.status).toBe(status);
    expect(result.stderr.split('\n')[0]).toBe(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(changedFiles()).toEqual([]);
  });

  it('writes nothing when the environment already runs the tag', async () => {
    const application = firstApplication(environments().local!);
    const tag = runningTagOf(application);
    const result = await run('release', ['--env', 'local', '--app', application.name, '--tag', tag]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`local already runs ${application.name} ${tag}; nothing was written.\n`);
    expect(changedFiles()).toEqual([]);
  });
});

describe('npm run release keeps the promotion order', () => {
  it.each(['staging', 'production'])('refuses a release straight to %s: a version reaches it by promotion', async (environment) => {
    const application = firstApplication(environments()[environment]!);
    const result = await run('release', ['--env', environment, '--app', application.name, '--tag', newerTag()]);
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toMatch(new RegExp(`^release: ${environment} receives a version by promotion \\(local -> testing -> staging -> production\\): npm run promote -- --from \\w+ --to ${environment}`));
    expect(changedFiles()).toEqual([]);
  });

  it('refuses an older tag than the environment runs unless --allow-older is given', async () => {
    const application = firstApplication(environments().testing!);
    const running = runningTagOf(application);
    const older = 'v0.0.0';
    expect(compareTags(older, running)).toBeLessThan(0);
    const refused = await run('release', ['--env', 'testing', '--tag', older]);
    expect(refused.status).toBe(1);
    // The environment is named with the application when it has several (`testing/<app>`).
    const which = environments().testing!.applications.length === 1 ? ['testing', '--env testing'] : [`testing/${application.name}`, `--env testing --app ${application.name}`];
    expect(refused.stderr.split('\n')[0]).toBe(
      `release: ${older} is older than the ${running} ${which[0]} runs; pass --allow-older to move it back, or use \`npm run rollback -- ${which[1]}\``,
    );
    expect(changedFiles()).toEqual([]);
    const allowed = await run('release', ['--env', 'testing', '--tag', older, '--allow-older']);
    expect(allowed.status, allowed.stderr).toBe(0);
  });
});

describe('npm run promote', () => {
  it.each([
    [['--from', 'local', '--to', 'staging'], 'promote: "local" -> "staging" skips testing; promotion follows local -> testing -> staging -> production: promote to testing first'],
    [['--from', 'staging', '--to', 'testing'], 'promote: "staging" -> "testing" moves backward; promotion follows local -> testing -> staging -> production. To run an older version in testing, use `npm run rollback -- --env testing`'],
    [['--from', 'testing', '--to', 'testing'], 'promote: --from and --to are both "testing": promotion moves a version to the next environment (local -> testing -> staging -> production)'],
    [['--from', 'production', '--to', 'local'], 'promote: "production" is the last environment (local -> testing -> staging -> production); there is nothing to promote it to'],
  ])('refuses %j with exit 1, writing nothing', async (args, message) => {
    const result = await run('promote', args);
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(message);
    expect(changedFiles()).toEqual([]);
  });

  it('refuses to move an environment to an older version unless --allow-older is given', async () => {
    expect((await run('release', ['--env', 'testing', '--tag', newerTag()])).status).toBe(0);
    commit('testing ahead');
    const tag = runningTagOf(firstApplication(environments().testing!));
    // The application testing runs, in local too.
    const application = firstApplication(environments().testing!).name;
    expect((await run('release', ['--env', 'local', '--app', application, '--tag', 'v0.0.1', '--allow-older'])).status).toBe(0);
    commit('local behind');
    before = snapshot();
    const refused = await run('promote', ['--from', 'local', '--to', 'testing']);
    expect(refused.status).toBe(1);
    expect(refused.stderr.split('\n')[0]).toBe(
      `promote: local runs v0.0.1, older than the ${tag} testing runs; promotion moves testing forward only. Pass --allow-older to move testing back to v0.0.1, or use \`npm run rollback -- --env testing\``,
    );
    expect(changedFiles()).toEqual([]);
    expect((await run('promote', ['--from', 'local', '--to', 'testing', '--allow-older'])).status).toBe(0);
    expect(runningTagOf(firstApplication(environments().testing!))).toBe('v0.0.1');
  });
});

describe('npm run rollback', () => {
  it('goes back to the tag the values file ran before, from its git history', async () => {
    const previous = runningTagOf(firstApplication(environments().testing!));
    expect((await run('release', ['--env', 'testing', '--tag', newerTag()])).status).toBe(0);
    commit('testing: new version');
    const result = await run('rollback', ['--env', 'testing']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(runningTagOf(firstApplication(environments().testing!))).toBe(previous);
  });
});

describe('several applications in one environment (issue 13)', () => {
  /** Add the application `name` to `environment` of the copy: its first application's file, another namespace and host. */
  function addApplication(environment: string, name: string): void {
    const first = firstApplication(environments()[environment]!);
    const source = applicationValuesPath(environment, first.name);
    const url = new URL(first.url);
    url.hostname = `${name}.${url.hostname}`;
    const text = new ValuesFile(source, fs.readFileSync(path.join(root, source), 'utf8')).edited((document) => {
      document.setIn(['namespace'], name);
      document.setIn(['url'], url.origin);
    });
    fs.writeFileSync(path.join(root, applicationValuesPath(environment, name)), text);
  }

  it('releases and promotes one application by --app without touching the other, and diff shows it', async () => {
    addApplication('testing', 'billing');
    addApplication('staging', 'billing');
    expect((await run('synth', [])).status).toBe(0);
    commit('billing in testing and staging');
    before = snapshot();
    const names = environments().testing!.applications.map((app) => app.name).join(', ');
    const tag = newerTag();

    const ambiguous = await run('release', ['--env', 'testing', '--tag', tag]);
    expect(ambiguous.status).toBe(2);
    expect(ambiguous.stderr.split('\n')[0]).toBe(`release: testing has 2 applications (${names}): name one with --app <application>`);
    const unknown = await run('release', ['--env', 'testing', '--app', 'nosuch', '--tag', tag]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe(`release: --app "nosuch" is not an application of testing; choose one of ${names}`);
    expect(changedFiles()).toEqual([]);

    const released = await run('release', ['--env', 'testing', '--app', 'billing', '--tag', tag]);
    expect(released.stderr).toBe('');
    expect(released.status).toBe(0);
    expect(changedFiles()).toEqual(['dist/testing/billing.yaml', applicationValuesPath('testing', 'billing'), chartVersionsPath('testing')].sort());
    expect(chartVersion('testing', 'billing', snapshot()).version).toBe(nextPatch(chartVersion('testing', 'billing', before).version));
    expect(chartVersion('testing', 'webapp', snapshot())).toEqual(chartVersion('testing', 'webapp', before));
    const diff = await run('diff', ['--base', 'HEAD']);
    expect(diff.status).toBe(1);
    expect(diff.stdout).toContain('(billing.yaml)');
    expect(diff.stdout).not.toContain('(webapp.yaml)');
    commit(`testing: billing ${tag}`);
    before = snapshot();

    const promoted = await run('promote', ['--from', 'testing', '--to', 'staging', '--app', 'billing']);
    expect(promoted.stderr).toBe('');
    expect(promoted.status).toBe(0);
    expect(changedFiles()).toEqual(['dist/staging/billing.yaml', applicationValuesPath('staging', 'billing'), chartVersionsPath('staging')].sort());
    expect(chartVersion('staging', 'billing', snapshot()).version).toBe(nextPatch(chartVersion('staging', 'billing', before).version));
    const staging = environments().staging!;
    const billing = staging.applications.find((app) => app.name === 'billing')!;
    expect(billing.strategy.type === 'blue-green' && Object.values(billing.strategy.blueGreen.units).map((unit) => unit!.tag)).toContain(tag);
    expect(runningTagOf(staging.applications.find((app) => app.name !== 'billing')!)).not.toBe(tag);
  }, 300_000);
});

describe('the edit commands, run as a person would', () => {
  // One spawn per command: the entry point parses argv, prints the usage and exits 2 on a
  // usage error, with no stack trace; everything else above runs in process. The compiled
  // command acts on this checkout (build/ belongs to it), so that is what must stay unchanged.
  it.each(['release', 'promote', 'switch', 'retire', 'rollback'])('%s: an unknown option exits 2 with the usage, writing nothing', (command) => {
    const checkout = () => [treeContents(path.join(ROOT, 'src', 'environments')), treeContents(path.join(ROOT, 'dist'))];
    const unchanged = checkout();
    const result = runCli(command, ['--bogus']);
    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(`${command}: Unknown option '--bogus'`);
    expect(result.stderr).toContain(`usage: npm run ${command} -- `);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe('');
    expect(checkout()).toEqual(unchanged);
  });
});
