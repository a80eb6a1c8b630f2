import { describe, expect, it } from 'vitest';
import { OPS } from '../src/commands/ops';
import { VERB_CHANGES, changeOf } from '../src/commands/ops/production-gate';
import { loadEnvironments } from '../src/environments';
import { fakeApiServerForTests } from './fake-api-server';
import { ROOT, runInProcess } from './support';

// Contract 1.2: an environment that does not sync automatically (production) changes only
// when a person says so. Every verb of `npm run ops` that changes the cluster is refused there
// without --confirm <environment>, before the kubeconfig is even read.
describe('ops: production changes only when confirmed', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-gate-');
  const manual = loadEnvironments().find((environment) => !environment.autoSync)!;
  const automatic = loadEnvironments().find((environment) => environment.autoSync)!;
  const app = manual.applications[0]!.name;
  const env = ['--env', manual.name];

  /** Every changing use of a verb, as a person would type it against production. */
  const CHANGES: readonly (readonly string[])[] = [
    ['sync', ...env, '--app', app],
    ['sync', ...env, '--application', 'envoy-gateway'],
    ['pause', ...env, '--reason', 'INC-1'],
    ['resume', ...env],
    ['resume', ...env, '--app', app],
    ['rollback', ...env, '--app', app, '--level', 'orchestrator'],
    ['rollback', ...env, '--app', app, '--level', 'controller'],
    ['rollback', ...env, '--app', app, '--level', 'database', '--to', '0001_initial'],
    ['rollback', ...env, '--app', app, '--level', 'package'],
    ['rollback', ...env, '--release', 'envoy-gateway', '--level', 'package'],
    ['emergency', 'outage', ...env, '--reason', 'INC-1'],
    ['emergency', 'restore', ...env, '--app', app, '--reason', 'INC-1'],
    ['emergency', 'crashloop', ...env, '--app', app, '--fix', '--reason', 'INC-1'],
    ['emergency', 'drain', 'node-1', ...env],
    ['emergency', 'uncordon', 'node-1', ...env],
    ['canary', ...env, '--app', app, '--promote'],
    ['canary', ...env, '--app', app, '--rollback'],
    ['canary', ...env, '--app', app, '--close'],
    ['silence', ...env, '--alert', 'DeploymentFailed', '--comment', 'INC-1'],
    ['silence', ...env, '--expire', '7c2a7e1e-0000-4000-8000-000000000000'],
  ];

  it('classifies every verb of the ops command table, and no verb it does not have', () => {
    expect(Object.keys(VERB_CHANGES).sort()).toEqual(Object.keys(OPS.subcommands).sort());
  });

  it('names what each changing use changes, and nothing for the reading ones', () => {
    for (const args of CHANGES) {
      const [verb, ...rest] = args;
      const positionals = rest.filter((word, index) => !word.startsWith('-') && !rest[index - 1]?.startsWith('-'));
      const values = Object.fromEntries(rest.flatMap((word, index) => (word.startsWith('--') ? [[word.slice(2), rest[index + 1]?.startsWith('--') || rest[index + 1] === undefined ? true : rest[index + 1]]] : [])));
      expect(changeOf(verb!, values, positionals), args.join(' ')).toEqual(expect.any(String));
    }
    expect(changeOf('status', { env: manual.name }, [])).toBeUndefined();
    expect(changeOf('canary', { env: manual.name }, [])).toBeUndefined();
    expect(changeOf('emergency', { env: manual.name }, ['crashloop'])).toBeUndefined();
    expect(changeOf('silence', { env: manual.name, list: true }, [])).toBeUndefined();
  });

  it(`refuses every changing verb in ${manual.name} without --confirm ${manual.name}, before any request reaches the cluster (exit 1)`, async () => {
    for (const args of CHANGES) {
      api.requests.length = 0;
      const run = await runInProcess(OPS, args, ROOT, { KUBECONFIG: kubeconfig(), ALERTMANAGER_URL: '' });
      expect(run.status, `${args.join(' ')}\n${run.stderr}`).toBe(1);
      expect(run.stderr, args.join(' ')).toContain(`${manual.name} does not sync automatically`);
      expect(run.stderr, args.join(' ')).toContain(`give --confirm ${manual.name}`);
      expect(api.requests, args.join(' ')).toEqual([]);
      expect(api.connections, args.join(' ')).toBe(0);
    }
  });

  it('refuses a --confirm that names another environment than --env, as a bad argument (exit 2), before any request', async () => {
    api.requests.length = 0;
    const run = await runInProcess(OPS, ['resume', ...env, '--confirm', automatic.name], ROOT, { KUBECONFIG: kubeconfig() });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--confirm "${automatic.name}" must name the environment acted on, ${manual.name}`);
    expect(api.requests).toEqual([]);
  });

  it('lets a confirmed change reach the cluster, and an environment that syncs automatically without confirmation', async () => {
    api.objects = { Application: [] };
    const confirmed = await runInProcess(OPS, ['resume', ...env, '--confirm', manual.name], ROOT, { KUBECONFIG: kubeconfig() });
    expect(api.requests.length, confirmed.stderr).toBeGreaterThan(0);
    api.requests.length = 0;
    await runInProcess(OPS, ['resume', '--env', automatic.name], ROOT, { KUBECONFIG: kubeconfig() });
    expect(api.requests.length).toBeGreaterThan(0);
  });

  it('lets the reading verbs read production without confirmation', async () => {
    api.objects = { Application: [] };
    api.requests.length = 0;
    await runInProcess(OPS, ['status', ...env], ROOT, { KUBECONFIG: kubeconfig() });
    expect(api.requests.length).toBeGreaterThan(0);
  });

  it('says in the usage of every changing verb that it takes --confirm, and in no reading one', () => {
    for (const [verb, definition] of Object.entries(OPS.subcommands)) {
      expect(definition.usage.includes('--confirm <env>'), verb).toBe(VERB_CHANGES[verb] !== 'reads');
    }
  });
});
