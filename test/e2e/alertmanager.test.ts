import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { OPS } from '../../src/commands/ops';
import { ALERT_ROUTING, BACKUP_ALERT } from '../../src/contract/choices';
import { ALERTS } from '../../src/contract/contract';
import { freePort } from '../../e2e/loopback';
import { locateToolchain } from '../../toolchain';
import { RecordingServer } from '../../e2e/webhook-sink';
import { committedObjects, ENVIRONMENT_ORDER, findObject, ROOT, runInProcess, temporaryDirectory } from '../support';

// The rendered alert routing and the silences on Alertmanager itself (v0.35.0, built by
// toolchain/build.sh), on loopback: alerts are posted to its API and the receivers are
// loopback webhooks standing in for the on-call pager and the team chat.

const alertmanagerBinary = locateToolchain(ROOT).bin('alertmanager', 'alertmanager');
const work = temporaryDirectory('platform-gitops-alertmanager-');
const processes: ChildProcess[] = [];
afterAll(() => {
  for (const child of processes) child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

/** A matcher of an AlertmanagerConfig as Alertmanager's configuration writes it (`name=~"value"`). */
function matcherText(matcher: { name: string; matchType?: string; value: string }): string {
  return `${matcher.name}${matcher.matchType ?? '='}${JSON.stringify(matcher.value)}`;
}

const TRANSLATED_ROUTE_FIELDS = new Set(['receiver', 'matchers', 'groupBy', 'groupWait', 'groupInterval', 'repeatInterval', 'continue', 'routes']);

/**
 * An AlertmanagerConfig's route as prometheus-operator writes it into the Alertmanager's
 * configuration (v0.94 pkg/alertmanager/amcfg.go: `convertRoute`; receivers named
 * `<namespace>/<name>/<receiver>` by `makeNamespacedString`). A field it is not written
 * for fails the test, so a new field of the routing is translated here before it counts.
 */
function translateRoute(route: any, key: string): any {
  for (const field of Object.keys(route)) if (!TRANSLATED_ROUTE_FIELDS.has(field)) throw new Error(`route field ${field} is not translated by this test`);
  return {
    receiver: `${key}/${route.receiver}`,
    ...(route.matchers ? { matchers: route.matchers.map(matcherText) } : {}),
    ...(route.groupBy ? { group_by: route.groupBy } : {}),
    ...(route.groupWait ? { group_wait: route.groupWait } : {}),
    ...(route.groupInterval ? { group_interval: route.groupInterval } : {}),
    ...(route.repeatInterval ? { repeat_interval: route.repeatInterval } : {}),
    ...(route.continue ? { continue: true } : {}),
    ...(route.routes ? { routes: route.routes.map((child: any) => translateRoute(child, key)) } : {}),
  };
}

/**
 * The Alertmanager configuration prometheus-operator generates from the platform's routing
 * (amcfg.go `AddAlertmanagerConfigs`): the chart's root route (receiver `null`), with the
 * AlertmanagerConfig's route first among its children and `continue: true`; no namespace
 * matcher, as the routing lives in the Alertmanager's own namespace and the strategy is
 * `OnNamespaceExceptForAlertmanagerNamespace` (`otherNamespaceEnforcer`). Each receiver's
 * Secret is resolved to a path of the loopback receivers.
 */
function generatedConfig(routing: any, receiversUrl: string): string {
  const key = `${routing.metadata.namespace}/${routing.metadata.name}`;
  const receivers = routing.spec.receivers.map((receiver: any) => {
    const { name, webhookConfigs, slackConfigs, ...rest } = receiver;
    if (Object.keys(rest).length > 0) throw new Error(`receiver fields ${Object.keys(rest).join(', ')} are not translated by this test`);
    const url = (secret: { name: string; key: string }) => `${receiversUrl}/${secret.name}/${secret.key}`;
    return {
      name: `${key}/${name}`,
      ...(webhookConfigs ? { webhook_configs: webhookConfigs.map((c: any) => ({ url: url(c.urlSecret), send_resolved: c.sendResolved })) } : {}),
      ...(slackConfigs ? { slack_configs: slackConfigs.map((c: any) => ({ api_url: url(c.apiURL), send_resolved: c.sendResolved })) } : {}),
    };
  });
  return stringify({
    route: { receiver: 'null', routes: [{ ...translateRoute(routing.spec.route, key), continue: true }] },
    receivers: [{ name: 'null' }, ...receivers],
  });
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
      const routing = findObject(committedObjects(environment), 'AlertmanagerConfig', ALERT_ROUTING.name);
      const perEnvironment = `${receivers.url}/${environment}`;
      urls.set(environment, await startAlertmanager(`routing-${environment}`, generatedConfig(routing, perEnvironment)));
    }
  });
  afterAll(() => receivers.close());

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
