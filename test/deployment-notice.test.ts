import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OPS } from '../src/commands/ops';
import { withDeploymentNotice } from '../src/commands/ops/deployment-notice';
import { applicationChartId } from '../src/contract/layout';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { RecordingServer } from '../e2e/webhook-sink';
import { fakeApiServerForTests } from './fake-api-server';
import { ROOT, runInProcess } from './support';

// 1.6: a significant deployment (a production sync, every rollback) tells the stakeholders'
// channel as well as the team chat, through the outage notice's webhooks, against loopback
// stand-ins of both.

const chat = new RecordingServer();
const stakeholders = new RecordingServer();
beforeAll(async () => {
  await Promise.all([chat.start(), stakeholders.start()]);
});
afterAll(async () => {
  await Promise.all([chat.close(), stakeholders.close()]);
});
beforeEach(() => {
  for (const server of [chat, stakeholders]) server.requests.length = 0;
});
const webhooks = () => ({ OUTAGE_CHAT_WEBHOOK_URL: `${chat.url}/hooks/chat-secret`, OUTAGE_STAKEHOLDERS_WEBHOOK_URL: `${stakeholders.url}/hooks/stakeholders-secret` });
const posted = () => [chat.to('/hooks/chat-secret').map((r) => r.body), stakeholders.to('/hooks/stakeholders-secret').map((r) => r.body)];

describe('the notice of a significant deployment', () => {
  const verb = (code: number) => ({ name: 'stub', usage: 'usage: stub', options: { env: { type: 'string' } } as const, run: () => code });

  it('posts to the team chat and the stakeholders after the verb, whose exit code stands', async () => {
    const noticed = withDeploymentNotice(verb(1), (values, code) => ({ environment: values.env!, message: `stub ${code}` }));
    const run = await runInProcess(noticed, ['--env', 'staging'], ROOT, webhooks());
    expect(run.status).toBe(1);
    expect(posted()).toEqual([[{ text: '[staging] Deployment: stub 1' }], [{ text: '[staging] Deployment: stub 1' }]]);
    expect(run.stderr).toContain(`deployment notice to chat: told: ${chat.url} answered HTTP 200`);
    expect(run.stderr).toContain(`deployment notice to stakeholders: told: ${stakeholders.url} answered HTTP 200`);
    expect(run.stderr).not.toContain('secret');
  });

  it('reports a target that is not configured without changing the exit code', async () => {
    const noticed = withDeploymentNotice(verb(0), (values) => ({ environment: values.env!, message: 'stub' }));
    const run = await runInProcess(noticed, ['--env', 'staging'], ROOT, { OUTAGE_CHAT_WEBHOOK_URL: `${chat.url}/hooks/chat-secret`, OUTAGE_STAKEHOLDERS_WEBHOOK_URL: '' });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('deployment notice to stakeholders: FAILED: not configured: set OUTAGE_STAKEHOLDERS_WEBHOOK_URL');
    expect(posted()[0]).toHaveLength(1);
  });

  it('tells nobody when the run is not significant', async () => {
    const noticed = withDeploymentNotice(verb(0), () => undefined);
    const run = await runInProcess(noticed, ['--env', 'staging'], ROOT, webhooks());
    expect(run.status).toBe(0);
    expect(posted()).toEqual([[], []]);
  });
});

describe('ops sync and ops rollback post the notice', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-deployment-notice-');
  const namespace = loadPlatform().controller.namespace;
  const application = (name: string, status: object = {}) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace, annotations: {} }, spec: {}, status });

  it('a production sync, whatever its outcome', async () => {
    const production = ENVIRONMENT_ORDER.at(-1)!;
    const app = loadEnvironments().find((environment) => environment.name === production)!.applications[0]!;
    api.objects = { Application: [application(applicationChartId(app.name))] };
    const run = await runInProcess(OPS, ['sync', '--env', production, '--app', app.name, '--confirm', production, '--by', 'ana', '--sync-timeout', '1', '--no-verify'], ROOT, { ...webhooks(), KUBECONFIG: kubeconfig() });
    expect(run.status).toBe(1);
    const text = `[${production}] Deployment: sync of ${app.name} by ana: FAILED`;
    expect(posted()).toEqual([[{ text }], [{ text }]]);
  });

  it('no notice for a sync of another environment', async () => {
    const app = loadEnvironments().find((environment) => environment.name === 'local')!.applications[0]!;
    api.objects = { Application: [application(applicationChartId(app.name))] };
    await runInProcess(OPS, ['sync', '--env', 'local', '--app', app.name, '--sync-timeout', '1', '--no-verify'], ROOT, { ...webhooks(), KUBECONFIG: kubeconfig() });
    expect(posted()).toEqual([[], []]);
  });

  it('every rollback, in any environment', async () => {
    const app = loadEnvironments().find((environment) => environment.name === 'local')!.applications[0]!;
    // Two entries of different revisions: the default target is the one that does not run, so
    // the rollback starts (a refusal before any change posts nothing) and then fails here.
    const history = [
      { id: 0, revision: 'abc', deployedAt: '2026-01-01T00:00:00Z', initiatedBy: { automated: true } },
      { id: 1, revision: 'def', deployedAt: '2026-01-02T00:00:00Z', initiatedBy: { automated: true } },
    ];
    api.objects = { Application: [application('root'), application(applicationChartId(app.name), { history, sync: { revision: 'def' } })] };
    const run = await runInProcess(OPS, ['rollback', '--env', 'local', '--app', app.name, '--level', 'controller', '--by', 'ana', '--reason', 'INC-9'], ROOT, { ...webhooks(), KUBECONFIG: kubeconfig() });
    expect(run.status).toBe(1);
    const text = `[local] Deployment: rollback (controller) of ${app.name} by ana (INC-9): FAILED`;
    expect(posted()).toEqual([[{ text }], [{ text }]]);
  });
});
