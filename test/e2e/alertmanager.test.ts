import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument, stringify } from 'yaml';
import { OPS } from '../../src/commands/ops';
import { ALERT_ROUTING, BACKUP_ALERT } from '../../src/contract/choices';
import { ALERTS } from '../../src/contract/contract';
import { freePort } from '../../e2e/loopback';
import { locateToolchain } from '../../toolchain';
import { RecordingServer } from '../../e2e/webhook-sink';
import type { KubeObject } from '../../e2e/kube-client';
import { helmTemplate } from '../../e2e/real-chart';
import { MONITORING_STACK_TEMPLATE } from '../../e2e/stand-in-monitoring-stack';
import { INFRASTRUCTURE_RELEASES } from '../../src/infrastructure/releases';
import { committedObjects, ENVIRONMENT_ORDER, findObject, ROOT, runInProcess, temporaryDirectory } from '../support';

// The rendered alert routing and the silences on Alertmanager itself (v0.35.0, built by
// toolchain/build.sh), on loopback: alerts are posted to its API and the receivers are
// loopback webhooks standing in for the on-call pager and the team chat. Its configuration is
// what prometheus-operator generates from each environment's rendered routing, by the
// operator's own code (test/e2e/converge.test.ts shows the operator selecting and accepting it
// on the e2e cluster).

const toolchain = locateToolchain(ROOT);
const alertmanagerBinary = toolchain.bin('alertmanager', 'alertmanager');
const alertmanagerConfig = toolchain.bin('prometheus-operator', 'alertmanager-config');
const helm = toolchain.bin('helm', 'helm');
const work = temporaryDirectory('platform-gitops-alertmanager-');
const processes: ChildProcess[] = [];
afterAll(() => {
  for (const child of processes) child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

/**
 * The Alertmanager of an environment as kube-prometheus-stack renders it from the platform's
 * values (the committed release Application's `valuesObject`, through the harness's template of
 * the chart's Alertmanager and its configuration Secret, MONITORING_STACK_TEMPLATE): the object
 * and the base configuration.
 */
function renderedAlertmanager(environment: string, dir: string): { alertmanager: KubeObject; base: string } {
  const release = findObject(committedObjects(environment), 'Application', INFRASTRUCTURE_RELEASES.kubePrometheusStack.name);
  const chart = path.join(dir, 'chart');
  fs.mkdirSync(path.join(chart, 'templates'), { recursive: true });
  fs.writeFileSync(path.join(chart, 'Chart.yaml'), stringify({ apiVersion: 'v2', name: release.spec.source.chart, version: release.spec.source.targetRevision }));
  fs.writeFileSync(path.join(chart, 'templates', 'reconciled.yaml'), MONITORING_STACK_TEMPLATE);
  const objects = helmTemplate(helm, chart, { name: release.spec.source.helm.releaseName, namespace: release.spec.destination.namespace, values: release.spec.source.helm.valuesObject }, dir);
  const alertmanager = objects.find((o) => o.kind === 'Alertmanager')!;
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === `alertmanager-${alertmanager.metadata.name}`)!;
  return { alertmanager, base: Buffer.from(secret['data']['alertmanager.yaml'], 'base64').toString('utf8') };
}

/**
 * What prometheus-operator generates for the environment's Alertmanager from its base
 * configuration and the rendered AlertmanagerConfig, by the operator's own code (the
 * toolchain's alertmanager-config, over v0.93.1's pkg/alertmanager: the selection, the check
 * of each selected object, the generation), each receiver's Secret holding a path of the
 * loopback receivers: the configuration, and what the operator would say of the routing.
 * `change` changes the routing or drops the Secrets first.
 */
function generate(environment: string, receiversUrl: string, change: { routing?: (routing: KubeObject) => void; withSecrets?: boolean } = {}): { config: string; said: string } {
  const dir = path.join(work, `generated-${environment}-${++generations}`);
  fs.mkdirSync(dir, { recursive: true });
  const { alertmanager, base } = renderedAlertmanager(environment, dir);
  const routing = structuredClone(findObject(committedObjects(environment), 'AlertmanagerConfig', ALERT_ROUTING.name)) as KubeObject;
  change.routing?.(routing);
  const secrets = (change.withSecrets === false ? [] : [ALERT_ROUTING.onCall.secret, ALERT_ROUTING.teamChat.secret]).map((secret) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secret.name, namespace: routing.metadata.namespace },
    data: { [secret.key]: Buffer.from(`${receiversUrl}/${secret.name}/${secret.key}`).toString('base64') },
  }));
  const write = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  const documents = (objects: readonly unknown[]) => objects.map((object) => stringify(object)).join('---\n');
  const result = spawnSync(alertmanagerConfig, [
    '--alertmanager', write('alertmanager.yaml', documents([alertmanager])),
    '--base', write('base.yaml', base),
    '--configs', write('configs.yaml', documents([routing])),
    '--secrets', write('secrets.yaml', documents(secrets)),
  ], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`alertmanager-config failed (exit ${result.status}): ${result.stderr}`);
  return { config: result.stdout, said: result.stderr.trim() };
}
let generations = 0;

/** The receivers of a generated configuration that the routing brought, by name. */
function routingReceivers(config: string): string[] {
  const receivers: Array<{ name: string }> = parseDocument(config).toJS().receivers ?? [];
  return receivers.map((receiver) => receiver.name).filter((name) => name.includes(`/${ALERT_ROUTING.name}/`));
}

/** A running Alertmanager on loopback with this configuration: its URL. */
async function startAlertmanager(name: string, config: string): Promise<string> {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'alertmanager.yaml'), config);
  const port = await freePort();
  const child = spawn(
    alertmanagerBinary,
    [`--config.file=${path.join(dir, 'alertmanager.yaml')}`, `--storage.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='],
    { stdio: ['ignore', 'ignore', fs.openSync(path.join(dir, 'alertmanager.log'), 'w')] },
  );
  processes.push(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`alertmanager exited ${child.exitCode}: ${fs.readFileSync(path.join(dir, 'alertmanager.log'), 'utf8')}`);
    if (await fetch(`${url}/-/ready`).then((r) => r.ok, () => false)) return url;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`alertmanager did not become ready: ${fs.readFileSync(path.join(dir, 'alertmanager.log'), 'utf8')}`);
}

async function postAlerts(url: string, alerts: readonly Record<string, string>[]): Promise<void> {
  const response = await fetch(`${url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(alerts.map((labels) => ({ labels, annotations: { summary: labels.alertname }, startsAt: new Date().toISOString() }))),
  });
  expect(response.status).toBe(200);
}

/** The alert names a receiver was sent: a webhook's alerts, or the Slack message's title. */
function alertNamesSent(receivers: RecordingServer, secret: { name: string; key: string }): string[] {
  const sent = receivers.to(`/${secret.name}/${secret.key}`).map((request) => request.body);
  return sent.flatMap((body) => (Array.isArray(body.alerts) ? body.alerts.map((a: any) => a.labels.alertname) : body.attachments.map((a: any) => /\] (\S+)/.exec(a.title)?.[1] ?? a.title))).sort();
}

describe('the rendered alert routing on Alertmanager (6)', () => {
  const receivers = new RecordingServer();
  const urls = new Map<string, string>();
  beforeAll(async () => {
    await receivers.start();
    for (const environment of ENVIRONMENT_ORDER) {
      const { config, said } = generate(environment, `${receivers.url}/${environment}`);
      expect(said, environment).toBe('');
      urls.set(environment, await startAlertmanager(`routing-${environment}`, config));
    }
  });
  afterAll(() => receivers.close());

  it("is the operator's: a routing whose receiver's Secret does not exist is rejected and left out, as the operator says", () => {
    const { config, said } = generate('local', receivers.url, { withSecrets: false });
    expect(said).toMatch(new RegExp(`^AlertmanagerConfig ${ALERT_ROUTING.name} was rejected due to invalid configuration: .*unable to get secret "(${ALERT_ROUTING.onCall.secret.name}|${ALERT_ROUTING.teamChat.secret.name})"`));
    expect(routingReceivers(config)).toEqual([]);
    expect(routingReceivers(generate('local', receivers.url).config).length).toBeGreaterThan(0);
  });

  it("is the operator's: a routing without the label the Alertmanager selects by is not merged", () => {
    const { config, said } = generate('local', receivers.url, { routing: (routing) => (routing.metadata.labels = {}) });
    expect(said).toBe('');
    expect(routingReceivers(config)).toEqual([]);
  });

  it('pages on-call and posts to the team chat for a critical alert, posts a warning to the chat only, and leaves other alerts alone', async () => {
    for (const url of urls.values()) {
      await postAlerts(url, [
        { alertname: ALERTS.deploymentFailed.name, severity: ALERTS.deploymentFailed.severity, namespace: 'webapp' },
        { alertname: ALERTS.highErrorRate.name, severity: ALERTS.highErrorRate.severity, namespace: 'webapp' },
        { alertname: BACKUP_ALERT.name, severity: BACKUP_ALERT.severity, namespace: 'database' },
        { alertname: 'Watchdog', severity: 'none', namespace: 'monitoring' },
      ]);
    }
    // Alertmanager holds a new group for the rendered group_wait before it notifies.
    const waitMs = Number.parseInt(ALERT_ROUTING.groupWait, 10) * 1000 + 15_000;
    const critical = [ALERTS.deploymentFailed.name, BACKUP_ALERT.name].sort();
    const chat = [ALERTS.deploymentFailed.name, BACKUP_ALERT.name, ALERTS.highErrorRate.name].sort();
    const secret = (environment: string, s: { name: string; key: string }) => ({ name: `${environment}/${s.name}`, key: s.key });
    const deadline = Date.now() + waitMs;
    const all = () => ENVIRONMENT_ORDER.every((e) => alertNamesSent(receivers, secret(e, ALERT_ROUTING.onCall.secret)).length >= critical.length && alertNamesSent(receivers, secret(e, ALERT_ROUTING.teamChat.secret)).length >= chat.length);
    while (Date.now() < deadline && !all()) await new Promise((resolve) => setTimeout(resolve, 500));
    for (const environment of ENVIRONMENT_ORDER) {
      expect(alertNamesSent(receivers, secret(environment, ALERT_ROUTING.onCall.secret)), `${environment} on-call`).toEqual(critical);
      expect(alertNamesSent(receivers, secret(environment, ALERT_ROUTING.teamChat.secret)), `${environment} team chat`).toEqual(chat);
    }
  }, 90_000);
});

describe('npm run ops -- silence, on Alertmanager (6, 8: silence example)', () => {
  let url = '';
  beforeAll(async () => {
    url = await startAlertmanager('silences', stringify({ route: { receiver: 'null' }, receivers: [{ name: 'null' }] }));
  });

  /**
   * A silence's length: Alertmanager moves a start that has passed by the time the silence
   * arrives to that moment, so the end the verb asked for is kept and a few ms are lost.
   */
  const lengthMs = (silence: { startsAt: string; endsAt: string }) => Date.parse(silence.endsAt) - Date.parse(silence.startsAt);
  const ops = (...args: string[]) => runInProcess(OPS, ['silence', '--env', 'local', '--alertmanager-url', url, ...args], ROOT, {});

  it('silences an alert of an application for the contract\'s 1h with the comment, which mutes the firing alert, and expires it', async () => {
    const comment = 'canary under watch, see INC-123';
    const created = await ops('--alert', ALERTS.highErrorRate.name, '--app', 'webapp', '--comment', comment, '--by', 'e2e', '--output', 'json');
    expect(created.status, created.stderr).toBe(0);
    const id = JSON.parse(created.stdout).created.id as string;
    const silence = (await (await fetch(`${url}/api/v2/silence/${id}`)).json()) as any;
    expect(silence.status.state).toBe('active');
    expect(silence.comment).toBe(comment);
    expect(silence.createdBy).toBe('e2e');
    expect(lengthMs(silence)).toBeLessThanOrEqual(60 * 60 * 1000);
    expect(lengthMs(silence)).toBeGreaterThan(60 * 60 * 1000 - 5000);
    expect(silence.matchers).toEqual([
      { name: 'alertname', value: ALERTS.highErrorRate.name, isRegex: false, isEqual: true },
      { name: 'namespace', value: 'webapp', isRegex: false, isEqual: true },
    ]);

    // Alertmanager mutes the matching alert, not the same alert of another namespace.
    await postAlerts(url, [
      { alertname: ALERTS.highErrorRate.name, severity: 'warning', namespace: 'webapp' },
      { alertname: ALERTS.highErrorRate.name, severity: 'warning', namespace: 'billing' },
    ]);
    const alerts = (await (await fetch(`${url}/api/v2/alerts`)).json()) as any[];
    const state = (namespace: string) => alerts.find((a) => a.labels.namespace === namespace).status;
    expect(state('webapp')).toMatchObject({ state: 'suppressed', silencedBy: [id] });
    expect(state('billing')).toMatchObject({ state: 'active', silencedBy: [] });

    const listed = await ops('--list');
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${id} active`);
    expect(listed.stdout).toContain(`"${comment}"`);

    const expired = await ops('--expire', id);
    expect(expired.status, expired.stderr).toBe(0);
    expect(((await (await fetch(`${url}/api/v2/silence/${id}`)).json()) as any).status.state).toBe('expired');
    expect((await ops('--list')).stdout).not.toContain(id);
    expect((await ops('--list', '--all')).stdout).toContain(`${id} expired`);
  });

  it('takes another duration and a regular-expression matcher', async () => {
    const created = await ops('--alert', ALERTS.deploymentFailed.name, '--matcher', 'namespace=~web.*', '--duration', '1h30m', '--comment', 'maintenance', '--output', 'json');
    expect(created.status, created.stderr).toBe(0);
    const silence = JSON.parse(created.stdout).created;
    expect(lengthMs(silence)).toBeLessThanOrEqual(90 * 60 * 1000);
    expect(lengthMs(silence)).toBeGreaterThan(90 * 60 * 1000 - 5000);
    expect(silence.matchers[1]).toEqual({ name: 'namespace', value: 'web.*', isRegex: true, isEqual: true });
  });

  it('names Alertmanager\'s refusal of an unknown silence, and an Alertmanager that does not answer', async () => {
    const unknown = await ops('--expire', '00000000-0000-0000-0000-000000000000');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/Alertmanager refused DELETE .*\/api\/v2\/silence\/0{8}-.*: HTTP 404/);
    const port = await freePort();
    const down = await runInProcess(OPS, ['silence', '--env', 'local', '--alertmanager-url', `http://127.0.0.1:${port}`, '--list'], ROOT, {});
    expect(down.status).toBe(1);
    expect(down.stderr).toContain(`cannot reach Alertmanager: GET http://127.0.0.1:${port}/api/v2/silences`);
  });
});
