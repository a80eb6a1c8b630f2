import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningTagOf } from '../../src/strategies/values-registry';
import { applicationValuesPath, environmentValuesPath, ValuesFile } from '../../src/environments/values-file';
import { DIFF } from '../../src/commands/diff';
import { SYNTH } from '../../src/commands/synth';
import { commitCopy, dataCopy, git as gitIn } from '../project-copy';
import { projectEnvironments, runCli, runInProcess } from '../support';

/** A throwaway git repository: the project committed on `main`, then a branch that edits it. */
let root: string;

function git(...args: string[]): string {
  return gitIn(root, ...args);
}

/** Set a field of a values file of the copy, through the yaml document API. */
function setValue(file: string, field: readonly string[], value: unknown): void {
  const full = path.join(root, file);
  const text = new ValuesFile(file, fs.readFileSync(full, 'utf8')).edited((document) => document.setIn(field, value));
  fs.writeFileSync(full, text);
}

/** The data the values files hold: the test derives what it expects from them, never from literals. */
const environments = projectEnvironments();
const testingTag = runningTagOf(environments.testing!.applications[0]!);
const NEW_TAG = 'v99.0.0';
const stagingApplication = environments.staging!.applications[0]!.name;
const stagingStrategy = environments.staging!.applications[0]!.strategy;
/** The staging unit that takes no traffic: the new version goes there. */
const inactive = stagingStrategy.type === 'blue-green' && stagingStrategy.blueGreen.active === 'green' ? 'blue' : 'green';

beforeAll(async () => {
  root = dataCopy();
  commitCopy(root);
  // The test starts from staging running one unit, whatever step of a blue-green release the
  // project is at (a new unit beside the active one is a normal committed state): the unit
  // without traffic is retired on main first.
  if (stagingStrategy.type === 'blue-green' && stagingStrategy.blueGreen.units[inactive] !== undefined) {
    const file = applicationValuesPath('staging', stagingApplication);
    const full = path.join(root, file);
    fs.writeFileSync(full, new ValuesFile(file, fs.readFileSync(full, 'utf8')).edited((document) => document.deleteIn(['strategy', 'blueGreen', 'units', inactive])));
    expect((await runInProcess(SYNTH, [], root)).status).toBe(0);
    git('commit', '-qam', `staging: retire ${inactive}`);
  }
  git('checkout', '-qb', 'feature');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('npm run diff', () => {
  it('reports no change, exit 0, when the working tree renders what main committed', async () => {
    const result = await runInProcess(DIFF, [], root);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^No rendered changes from merge-base\(HEAD, main\)@[0-9a-f]{7} to working tree\n$/);
    expect(result.status).toBe(0);
  });

  it('lists added, removed and changed objects per environment in promotion order, with a YAML diff of each change', async () => {
    setValue(applicationValuesPath('testing', 'webapp'), ['image', 'tag'], NEW_TAG);
    setValue(applicationValuesPath('staging', 'webapp'), ['strategy', 'blueGreen', 'units', inactive, 'tag'], NEW_TAG);
    setValue(environmentValuesPath('local'), ['broker', 'users'], [{ name: 'reporting', acls: [{ topic: 'declarations', operations: ['Read'] }] }]);

    const result = await runInProcess(DIFF, [], root);
    expect(result.status).toBe(1);
    const text = result.stdout;
    const headers = text.split('\n').filter((line) => /^\w+: \d+ added/.test(line));
    // local: the new user, the operators' Role that reads its password Secret, and the broker
    // Application whose sops plugin now also accepts that Secret; testing: the Deployment and the
    // migrations Job run the new tag; staging: the new unit's Deployment and its PodDisruptionBudget.
    expect(headers).toEqual(['local: 1 added, 0 removed, 2 changed', 'testing: 0 added, 0 removed, 2 changed', 'staging: 2 added, 0 removed, 1 changed']);
    expect(text).toContain('  + kafka.strimzi.io/v1 KafkaUser kafka/reporting (broker.yaml)');
    expect(text).toContain('  ~ rbac.authorization.k8s.io/v1 Role kafka/platform-gitops-operations (broker.yaml)');
    expect(text).toContain('      +      - reporting-broker-user');
    expect(text).toContain('  ~ argoproj.io/v1alpha1 Application argocd/broker (gitops.yaml)');
    expect(text).toContain('      +              reporting-broker-user kafka Opaque password');
    expect(text).toContain(`  + apps/v1 Deployment webapp/webapp-${inactive} (webapp.yaml)`);
    expect(text).toContain(`  + policy/v1 PodDisruptionBudget webapp/webapp-${inactive} (webapp.yaml)`);
    expect(text).toContain('  ~ apps/v1 Deployment webapp/webapp (webapp.yaml)');
    expect(text).toContain(`      -          image: registry.example.com/platform/webapp:${testingTag}\n      +          image: registry.example.com/platform/webapp:${NEW_TAG}`);
    // Stable: the same inputs print the same report.
    expect((await runInProcess(DIFF, [], root)).stdout).toBe(text);
  });

  it('writes Markdown for a pull-request comment', async () => {
    const result = await runInProcess(DIFF, ['--format', 'markdown'], root);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('| Environment | Added | Removed | Changed |\n|---|---:|---:|---:|\n| local | 1 | 0 | 2 |\n| testing | 0 | 0 | 2 |\n| staging | 2 | 0 | 1 |');
    expect(result.stdout).toContain('```diff\n');
    expect(result.stdout).toContain(`<code>apps/v1 Deployment webapp/webapp-${inactive}</code> in <code>webapp.yaml</code>`);
  });

  it('compares two commits with --base and --head, and refuses a ref that names nothing', async () => {
    git('commit', '-qam', `testing ${NEW_TAG}, green beside blue, a reporting user in local`);
    const committed = await runInProcess(DIFF, ['--base', 'main', '--head', 'feature'], root);
    // Sources changed, dist/ was not re-rendered: the committed trees are the same.
    expect(committed.stdout).toMatch(/^No rendered changes from main@[0-9a-f]{7} to feature@[0-9a-f]{7}\n$/);
    expect(committed.status).toBe(0);
    expect((await runInProcess(SYNTH, [], root)).status).toBe(0);
    git('commit', '-qam', 'render');
    const rendered = await runInProcess(DIFF, ['--base', 'main', '--head', 'feature'], root);
    expect(rendered.stdout.split('\n')[0]).toMatch(/^Rendered changes from main@[0-9a-f]{7} to feature@[0-9a-f]{7}$/);
    expect(rendered.stdout).toContain('staging: 2 added, 0 removed, 1 changed');
    expect(rendered.status).toBe(1);
    const refused = await runInProcess(DIFF, ['--base', 'no-such-ref'], root);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('"no-such-ref" does not name a commit');
  });

  // The one spawn: the entry point parses argv, prints the usage and exits 2, without a stack trace.
  it('refuses a ref that names nothing, run as a person would', () => {
    const refused = runCli('diff', ['--base', 'no-such-ref']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('"no-such-ref" does not name a commit');
    expect(refused.stderr).toContain('usage: npm run diff');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });

  // 1 means "changes": a configuration that cannot be rendered is an error, 2.
  it('exits 2, not 1, when the working tree holds an invalid values file', async () => {
    const copy = dataCopy();
    try {
      commitCopy(copy);
      const file = applicationValuesPath('testing', 'webapp');
      fs.writeFileSync(path.join(copy, file), fs.readFileSync(path.join(copy, file), 'utf8').replace(/^(\s*tag:).*$/m, '$1 latest'));
      const result = await runInProcess(DIFF, [], copy);
      expect(result.stderr).toContain(`${file}:`);
      expect(result.stdout).toBe('');
      expect(result.status).toBe(2);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});
