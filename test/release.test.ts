import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadEnvironments } from '../src/environments';
import { runningTagOf } from '../src/environments/running-tag';
import { applicationValuesPath, readValuesTexts, ValuesFile } from '../src/environments/values-file';
import { compareTags } from '../src/release/release';
import { projectCopy, runInCopy } from './project-copy';
import { firstApplication, treeContents } from './support';

/** A throwaway copy of the project per test, committed in its own git repository: the commands write files. */
let root: string;
let before: Map<string, string>;

function git(...args: string[]): string {
  const result = spawnSync('git', ['-C', root, '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

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

/** The copy's environments, read from its values files: expectations derive from them, not from literals. */
function environments() {
  return Object.fromEntries(loadEnvironments(readValuesTexts(root)).map((env) => [env.name, env]));
}

/** A tag newer than every tag the copy runs. */
function newerTag(): string {
  const newest = Object.values(environments())
    .flatMap((env) => env.applications.map(runningTagOf))
    .sort(compareTags)
    .pop()!;
  const [major, minor] = newest.slice(1).split('.').map(Number) as [number, number];
  return `v${major}.${minor + 1}.0`;
}

function run(entry: string, args: readonly string[]) {
  return runInCopy(root, entry, args);
}

function commit(message: string): void {
  git('add', '-A');
  git('commit', '-qm', message);
}

beforeEach(() => {
  root = projectCopy();
  fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules\nbuild\n');
  git('init', '-q', '-b', 'main');
  commit('base');
  before = snapshot();
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('npm run release', () => {
  it('changes the tag line of one values file, keeps its comments, re-renders only its image lines and prints the diff', () => {
    const tag = newerTag();
    const previous = firstApplication(environments().testing!).image.tag;
    const file = applicationValuesPath('testing', firstApplication(environments().testing!).name);
    const result = run('cli/release', ['--env', 'testing', '--tag', tag]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`testing: image.tag ${previous} -> ${tag} (rolling)`);
    expect(result.stdout).toContain(`+          image: registry.example.com/platform/webapp:${tag}`);
    expect(changedFiles()).toEqual([`dist/testing/${firstApplication(environments().testing!).name}.yaml`, file]);
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
  ])('refuses %j, writing nothing', (args, status, message) => {
    const result = run('cli/release', args);
    expect(result.status).toBe(status);
    expect(result.stderr.split('\n')[0]).toBe(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(changedFiles()).toEqual([]);
  });

  it('writes nothing when the environment already runs the tag', () => {
    const application = firstApplication(environments().local!);
    const tag = runningTagOf(application);
    const result = run('cli/release', ['--env', 'local', '--app', application.name, '--tag', tag]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`local already runs ${application.name} ${tag}; nothing was written.\n`);
    expect(changedFiles()).toEqual([]);
  });
});

describe('npm run promote', () => {
  it.each([
    [['--from', 'local', '--to', 'staging'], 'promote: "local" -> "staging" skips testing; promotion follows local -> testing -> staging -> production: promote to testing first'],
    [['--from', 'staging', '--to', 'testing'], 'promote: "staging" -> "testing" moves backward; promotion follows local -> testing -> staging -> production. To run an older version in testing, use `npm run rollback -- --env testing`'],
    [['--from', 'testing', '--to', 'testing'], 'promote: --from and --to are both "testing": promotion moves a version to the next environment (local -> testing -> staging -> production)'],
    [['--from', 'production', '--to', 'local'], 'promote: "production" is the last environment (local -> testing -> staging -> production); there is nothing to promote it to'],
  ])('refuses %j with exit 1, writing nothing', (args, message) => {
    const result = run('cli/promote', args);
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(message);
    expect(changedFiles()).toEqual([]);
  });

  it('refuses to move an environment to an older version unless --allow-older is given', () => {
    expect(run('cli/release', ['--env', 'testing', '--tag', newerTag()]).status).toBe(0);
    commit('testing ahead');
    const tag = runningTagOf(firstApplication(environments().testing!));
    // The application testing runs, in local too.
    const application = firstApplication(environments().testing!).name;
    expect(run('cli/release', ['--env', 'local', '--app', application, '--tag', 'v0.0.1']).status).toBe(0);
    commit('local behind');
    before = snapshot();
    const refused = run('cli/promote', ['--from', 'local', '--to', 'testing']);
    expect(refused.status).toBe(1);
    expect(refused.stderr.split('\n')[0]).toBe(
      `promote: local runs v0.0.1, older than the ${tag} testing runs; promotion moves testing forward only. Pass --allow-older to move testing back to v0.0.1, or use \`npm run rollback -- --env testing\``,
    );
    expect(changedFiles()).toEqual([]);
    expect(run('cli/promote', ['--from', 'local', '--to', 'testing', '--allow-older']).status).toBe(0);
    expect(runningTagOf(firstApplication(environments().testing!))).toBe('v0.0.1');
  });
});

describe('npm run rollback', () => {
  it('goes back to the tag the values file ran before, from its git history', () => {
    const previous = runningTagOf(firstApplication(environments().testing!));
    expect(run('cli/release', ['--env', 'testing', '--tag', newerTag()]).status).toBe(0);
    commit('testing: new version');
    const result = run('cli/rollback', ['--env', 'testing']);
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

  it('releases and promotes one application by --app without touching the other, and diff shows it', () => {
    addApplication('testing', 'billing');
    addApplication('staging', 'billing');
    expect(run('main', []).status).toBe(0);
    commit('billing in testing and staging');
    before = snapshot();
    const names = environments().testing!.applications.map((app) => app.name).join(', ');
    const tag = newerTag();

    const ambiguous = run('cli/release', ['--env', 'testing', '--tag', tag]);
    expect(ambiguous.status).toBe(2);
    expect(ambiguous.stderr.split('\n')[0]).toBe(`release: testing has 2 applications (${names}): name one with --app <application>`);
    const unknown = run('cli/release', ['--env', 'testing', '--app', 'nosuch', '--tag', tag]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe(`release: --app "nosuch" is not an application of testing; choose one of ${names}`);
    expect(changedFiles()).toEqual([]);

    const released = run('cli/release', ['--env', 'testing', '--app', 'billing', '--tag', tag]);
    expect(released.stderr).toBe('');
    expect(released.status).toBe(0);
    expect(changedFiles()).toEqual(['dist/testing/billing.yaml', applicationValuesPath('testing', 'billing')]);
    const diff = run('cli/diff', ['--base', 'HEAD']);
    expect(diff.status).toBe(1);
    expect(diff.stdout).toContain('(billing.yaml)');
    expect(diff.stdout).not.toContain('(webapp.yaml)');
    commit(`testing: billing ${tag}`);
    before = snapshot();

    const promoted = run('cli/promote', ['--from', 'testing', '--to', 'staging', '--app', 'billing']);
    expect(promoted.stderr).toBe('');
    expect(promoted.status).toBe(0);
    expect(changedFiles()).toEqual(['dist/staging/billing.yaml', applicationValuesPath('staging', 'billing')]);
    const staging = environments().staging!;
    const billing = staging.applications.find((app) => app.name === 'billing')!;
    expect(billing.strategy.type === 'blue-green' && Object.values(billing.strategy.blueGreen.units).map((unit) => unit!.tag)).toContain(tag);
    expect(runningTagOf(staging.applications.find((app) => app.name !== 'billing')!)).not.toBe(tag);
  }, 300_000);
});

describe("the README's flows, in a copy of the project", () => {
  it('releases to testing, promotes to staging through the three blue-green steps and to production; the tests still pass', () => {
    const tag = newerTag();
    const step = (entry: string, args: readonly string[], message: string) => {
      const result = run(entry, args);
      expect(result.stderr, `${entry} ${args.join(' ')}`).toBe('');
      expect(result.status).toBe(0);
      commit(message);
    };
    step('cli/release', ['--env', 'testing', '--tag', tag], `testing: run ${tag}`);
    step('cli/promote', ['--from', 'testing', '--to', 'staging'], `staging: ${tag} beside the active unit`);
    const active = firstApplication(environments().staging!).strategy;
    const switched = run('cli/switch', ['--env', 'staging']);
    expect(switched.status, switched.stderr).toBe(0);
    // Two blue-green steps in one commit are refused: the guard reads dist/ of HEAD, not the working tree.
    const tooSoon = run('cli/retire', ['--env', 'staging']);
    expect(tooSoon.status).toBe(1);
    expect(tooSoon.stderr).toContain(`is the unit the committed Service still selects (dist/staging/${firstApplication(environments().staging!).name}.yaml in HEAD)`);
    commit('staging: switch traffic');
    step('cli/retire', ['--env', 'staging'], 'staging: retire the old unit');
    step('cli/promote', ['--from', 'staging', '--to', 'production'], `production: run ${tag}`);

    const after = environments();
    for (const name of ['testing', 'staging', 'production']) expect(runningTagOf(firstApplication(after[name]!))).toBe(tag);
    expect(active.type).toBe('blue-green');

    // The suite's assertions that read the project still pass on the copy, unchanged.
    for (const entry of ['test', 'schemas', 'vitest.config.mts', 'cdk8s.yaml', 'README.md']) {
      fs.cpSync(path.join(__dirname, '..', entry), path.join(root, entry), { recursive: true });
    }
    expect(run('main', ['--check']).status).toBe(0);
    const tests = spawnSync(
      process.execPath,
      [
        path.join(root, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        'test/application.test.ts',
        'test/smoke-hook.test.ts',
        'test/strategies.test.ts',
        'test/diff.test.ts',
        'test/environments.test.ts',
        'test/validation-gate.test.ts',
        'test/network-policies.test.ts',
        'test/gitops.test.ts',
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(tests.status, `${tests.stdout}\n${tests.stderr}`.slice(-4000)).toBe(0);
  }, 300_000);
});
