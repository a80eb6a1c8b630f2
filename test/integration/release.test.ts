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
import { readRunHistory } from '../../src/release/run-history';
import { git } from '../project-copy';

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
    expect(result.stdout).toContain(`Chart versions (each environment's record, beside its values):\n  testing: ${name} ${chartVersion('testing', name, before).version} -> ${bumped} in ${chartVersionsPath('testing')}\n`);
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
  /** The environment's first application's values file and what its committed history says ran. */
  const historyOf = (environment: string) => readRunHistory(root, applicationValuesPath(environment, firstApplication(environments()[environment]!).name));
  /** The environment whose application runs the blue-green strategy, read from the values. */
  const blueGreen = () => Object.values(environments()).find((env) => firstApplication(env).strategy.type === 'blue-green')!;

  it('goes back to the tag the values file ran before, from its git history', async () => {
    const previous = runningTagOf(firstApplication(environments().testing!));
    expect((await run('release', ['--env', 'testing', '--tag', newerTag()])).status).toBe(0);
    commit('testing: new version');
    const result = await run('rollback', ['--env', 'testing']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(runningTagOf(firstApplication(environments().testing!))).toBe(previous);
  });

  it('goes to a --tag the environment ran, and refuses one it never ran, naming the rule, writing nothing', async () => {
    const previous = runningTagOf(firstApplication(environments().testing!));
    expect((await run('release', ['--env', 'testing', '--tag', newerTag()])).status).toBe(0);
    commit('testing: new version');
    before = snapshot();
    // Never run in production: newer than every tag any environment runs.
    const production = environments().production!;
    const app = firstApplication(production).name;
    const never = newerTag();
    expect(historyOf('production').ran).not.toContain(never);
    const refused = await run('rollback', ['--env', 'production', '--app', app, '--tag', never]);
    expect(refused.status).toBe(1);
    const label = production.applications.length > 1 ? `production/${app}` : 'production';
    expect(refused.stderr.split('\n')[0]).toBe(
      `rollback: ${label}: ${never} never ran in production; rollback goes only to a tag production ran before ` +
        `(the tags that served in the git history of ${applicationValuesPath('production', app)}: ${historyOf('production').ran.join(', ')}). ` +
        'A new version is a release or a promotion (npm run release, npm run promote)',
    );
    expect(changedFiles()).toEqual([]);
    // A tag testing ran, from its history: allowed.
    expect(historyOf('testing').ran).toContain(previous);
    const back = await run('rollback', ['--env', 'testing', '--tag', previous]);
    expect(back.stderr).toBe('');
    expect(back.status).toBe(0);
    expect(runningTagOf(firstApplication(environments().testing!))).toBe(previous);
  });

  it('refuses a values file with changes that are not committed, writing nothing', async () => {
    const previous = runningTagOf(firstApplication(environments().testing!));
    expect((await run('release', ['--env', 'testing', '--tag', newerTag()])).status).toBe(0);
    before = snapshot();
    const file = applicationValuesPath('testing', firstApplication(environments().testing!).name);
    const refused = await run('rollback', ['--env', 'testing', '--tag', previous]);
    expect(refused.status).toBe(1);
    expect(refused.stderr.split('\n')[0]).toBe(
      `rollback: ${file} has changes that are not committed; rollback reads what testing ran from the file's committed history and writes the file whole: ` +
        `commit the changes (reviewed) or discard them (git checkout -- ${file}) first`,
    );
    expect(changedFiles()).toEqual([]);
  });

  it('in a shallow clone, refuses a tag its cut history cannot show, saying so', async () => {
    const previous = runningTagOf(firstApplication(environments().testing!));
    expect((await run('release', ['--env', 'testing', '--tag', newerTag()])).status).toBe(0);
    commit('testing: new version');
    const full = root;
    root = `${full}-shallow`;
    try {
      git(full, 'clone', '-q', '--depth', '1', `file://${full}`, root);
      before = snapshot();
      expect(historyOf('testing').shallow).toBe(true);
      expect(historyOf('testing').ran).not.toContain(previous);
      const file = applicationValuesPath('testing', firstApplication(environments().testing!).name);
      for (const args of [['--tag', previous], []]) {
        const refused = await run('rollback', ['--env', 'testing', ...args]);
        expect(refused.status).toBe(1);
        expect(refused.stderr.split('\n')[0]).toContain(args.length > 0 ? `is not in the history of ${file} this shallow clone holds` : 'this is a shallow clone: fetch the whole history, git fetch --unshallow');
        expect(changedFiles()).toEqual([]);
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
      root = full;
    }
  });

  it('blue-green: a tag that only ran on the unit beside the active one never served, so --tag does not go to it; once switched to, rollback switches back', async () => {
    const environment = blueGreen().name;
    const order = Object.keys(environments());
    const from = order[order.indexOf(environment) - 1]!;
    const app = firstApplication(blueGreen()).name;
    const active = runningTagOf(firstApplication(blueGreen()));
    // A newer tag beside the active unit (promoted, never switched to).
    const tag = newerTag();
    await runChain(from, tag);
    expect((await run('promote', ['--from', from, '--to', environment, '--app', app])).status).toBe(0);
    commit(`${environment}: ${tag} beside ${active}`);
    before = snapshot();
    expect(historyOf(environment).neverServed).toContain(tag);
    const refused = await run('rollback', ['--env', environment, '--app', app, '--tag', tag]);
    expect(refused.status).toBe(1);
    expect(refused.stderr.split('\n')[0]).toContain(`${tag} never served in ${environment} (it ran only on a unit beside the one that served)`);
    expect(changedFiles()).toEqual([]);
    // Switched to, it served; rollback switches the traffic back to the unit that served before it.
    expect((await run('switch', ['--env', environment, '--app', app])).status).toBe(0);
    commit(`${environment}: traffic to ${tag}`);
    const back = await run('rollback', ['--env', environment, '--app', app]);
    expect(back.stderr).toBe('');
    expect(back.status).toBe(0);
    expect(runningTagOf(firstApplication(environments()[environment]!))).toBe(active);
  }, 300_000);

  it('blue-green: the switch back to an older unit that never served is refused too', async () => {
    const environment = blueGreen().name;
    const order = Object.keys(environments());
    const from = order[order.indexOf(environment) - 1]!;
    const app = firstApplication(blueGreen()).name;
    // An older tag than any the environment ran, beside the active unit (promoted with --allow-older, never switched to).
    const older = 'v0.0.1';
    expect(historyOf(environment).ran.every((tag) => compareTags(older, tag) < 0)).toBe(true);
    await runChain(from, older, ['--allow-older']);
    expect((await run('promote', ['--from', from, '--to', environment, '--app', app, '--allow-older'])).status).toBe(0);
    commit(`${environment}: ${older} beside the active unit`);
    before = snapshot();
    const switchBack = await run('rollback', ['--env', environment, '--app', app]);
    expect(switchBack.status).toBe(1);
    expect(switchBack.stderr.split('\n')[0]).toContain(`${older} never served in ${environment} (it ran only on a unit beside the one that served)`);
    expect(changedFiles()).toEqual([]);
  }, 300_000);

  /** Bring `tag` to `environment` as the promotion order does: a release where releases go, then promotions up to it. */
  async function runChain(environment: string, tag: string, extra: string[] = []): Promise<void> {
    const order = Object.keys(environments());
    const app = firstApplication(environments()[environment]!).name;
    const first = order[0]!;
    expect((await run('release', ['--env', first, '--app', app, '--tag', tag, ...extra])).status).toBe(0);
    for (let at = 1; at <= order.indexOf(environment); at++) {
      const promoted = await run('promote', ['--from', order[at - 1]!, '--to', order[at]!, '--app', app, ...extra]);
      expect(promoted.status, promoted.stderr).toBe(0);
    }
    commit(`${tag} up to ${environment}`);
  }
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
    // The diff names the record the version moved in, beside the values.
    expect(diff.stdout).toContain(`  testing: billing ${chartVersion('testing', 'billing', before).version} -> ${chartVersion('testing', 'billing', snapshot()).version} in ${chartVersionsPath('testing')}\n`);
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
