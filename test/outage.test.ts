import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OPS } from '../src/commands/ops';
import { freePort } from '../e2e/loopback';
import { RecordingServer } from '../e2e/webhook-sink';
import { ROOT, runInProcess } from './support';

// `npm run ops -- outage notify` (6: outage communication) against loopback stand-ins of
// the team chat's and the stakeholders' webhooks and of Statuspage's API: what each
// receives, and how a target that refuses, does not answer or is not configured is reported.

const chat = new RecordingServer();
const stakeholders = new RecordingServer();
const statusPage = new RecordingServer();
beforeAll(async () => {
  await Promise.all([chat.start(), stakeholders.start(), statusPage.start()]);
});
afterAll(async () => {
  await Promise.all([chat.close(), stakeholders.close(), statusPage.close()]);
});
beforeEach(() => {
  for (const server of [chat, stakeholders, statusPage]) {
    server.requests.length = 0;
    server.answers.clear();
  }
  statusPage.answers.set('/v1/pages/page-1/incidents', { status: 201, body: JSON.stringify({ id: 'incident-7', status: 'investigating' }) });
});

// The webhook paths stand for the secret part of a real webhook's address.
const variables = () => ({
  OUTAGE_CHAT_WEBHOOK_URL: `${chat.url}/hooks/chat-secret`,
  OUTAGE_STAKEHOLDERS_WEBHOOK_URL: `${stakeholders.url}/hooks/stakeholders-secret`,
  STATUSPAGE_API_URL: `${statusPage.url}/v1`,
  STATUSPAGE_API_KEY: 'key-1',
  STATUSPAGE_PAGE_ID: 'page-1',
});
const notify = (args: readonly string[], env: NodeJS.ProcessEnv = variables()) => runInProcess(OPS, ['outage', 'notify', '--env', 'staging', ...args], ROOT, env);

describe('npm run ops -- outage notify', () => {
  it('posts the message to the chat, opens an incident on the status page and tells the stakeholders, naming each', async () => {
    const run = await notify(['--message', 'Checkout fails for some users; next update in 30 min']);
    expect(run.status, run.stderr).toBe(0);
    const text = '[staging] Outage: Checkout fails for some users; next update in 30 min';
    expect(chat.to('/hooks/chat-secret').map((r) => [r.method, r.body])).toEqual([['POST', { text }]]);
    expect(stakeholders.to('/hooks/stakeholders-secret').map((r) => r.body)).toEqual([{ text }]);
    const [incident] = statusPage.to('/v1/pages/page-1/incidents');
    expect(incident!.method).toBe('POST');
    expect(incident!.headers.authorization).toBe('OAuth key-1');
    expect(incident!.body).toEqual({ incident: { name: 'staging: Checkout fails for some users; next update in 30 min', status: 'investigating', body: 'Checkout fails for some users; next update in 30 min' } });
    expect(run.stdout).toContain(`chat: told: ${chat.url} answered HTTP 200`);
    expect(run.stdout).toContain(`status-page: told: ${statusPage.url} answered HTTP 201: incident incident-7 investigating`);
    expect(run.stdout).toContain(`stakeholders: told: ${stakeholders.url} answered HTTP 200`);
    expect(run.stdout).toContain('npm run ops -- outage notify --env staging --incident incident-7 --status <status> --message <text>');
    // An address's path is a credential: never printed.
    expect(run.stdout).not.toContain('secret');
    expect(run.stdout).not.toContain('key-1');
  });

  it('updates the incident it opened, up to resolved', async () => {
    statusPage.answers.set('/v1/pages/page-1/incidents/incident-7', { status: 200, body: JSON.stringify({ id: 'incident-7', status: 'resolved' }) });
    const run = await notify(['--incident', 'incident-7', '--status', 'resolved', '--message', 'Checkout works again', '--output', 'json']);
    expect(run.status, run.stderr).toBe(0);
    const [update] = statusPage.to('/v1/pages/page-1/incidents/incident-7');
    expect(update!.method).toBe('PATCH');
    expect(update!.body).toEqual({ incident: { status: 'resolved', body: 'Checkout works again' } });
    expect(chat.requests[0]!.body).toEqual({ text: '[staging] Resolved: Checkout works again' });
    expect(JSON.parse(run.stdout).targets.map((t: { target: string; ok: boolean }) => [t.target, t.ok])).toEqual([['chat', true], ['status-page', true], ['stakeholders', true]]);
  });

  it('reports a target that refuses and still tells the ones after it, then fails', async () => {
    statusPage.answers.set('/v1/pages/page-1/incidents', { status: 401, body: '{"error":"Could not authenticate"}' });
    const run = await notify(['--message', 'Login is down']);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`status-page: FAILED: ${statusPage.url} answered HTTP 401: {"error":"Could not authenticate"}`);
    expect(stakeholders.requests).toHaveLength(1);
    expect(chat.requests).toHaveLength(1);
    expect(run.stdout).toContain('outage notify: 1 of 3 targets failed: status-page');
  });

  it('reports a target that does not answer and one that is not configured, and tells the rest', async () => {
    const closed = await freePort();
    const { OUTAGE_STAKEHOLDERS_WEBHOOK_URL: _left, ...rest } = variables();
    const run = await notify(['--message', 'Login is down'], { ...rest, OUTAGE_CHAT_WEBHOOK_URL: `http://127.0.0.1:${closed}/hooks/x`, OUTAGE_STAKEHOLDERS_WEBHOOK_URL: '' });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`chat: FAILED: http://127.0.0.1:${closed} did not answer`);
    expect(run.stdout).toContain('stakeholders: FAILED: not configured: set OUTAGE_STAKEHOLDERS_WEBHOOK_URL');
    expect(statusPage.requests).toHaveLength(1);
    expect(run.stdout).toContain('outage notify: 2 of 3 targets failed: chat, stakeholders');
  });

  it('never prints a credential: an address carrying a password is refused without echo, a key a server quotes back is redacted', async () => {
    statusPage.answers.set('/v1/pages/page-1/incidents', { status: 401, body: 'invalid token "OAuth key-1"' });
    const run = await notify(['--message', 'Login is down'], { ...variables(), OUTAGE_CHAT_WEBHOOK_URL: 'https://bot:hunter2@chat.example.com/hooks/x' });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('chat: FAILED: OUTAGE_CHAT_WEBHOOK_URL must not carry a user or password');
    expect(run.stdout).toContain('status-page: FAILED: ');
    expect(run.stdout).toContain('<redacted>');
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/hunter2|key-1/);
    expect(chat.requests).toHaveLength(0);
  });

  it('leaves out a target on request, and says so', async () => {
    const run = await notify(['--message', 'Login is down', '--skip', 'status-page'], { OUTAGE_CHAT_WEBHOOK_URL: variables().OUTAGE_CHAT_WEBHOOK_URL, OUTAGE_STAKEHOLDERS_WEBHOOK_URL: variables().OUTAGE_STAKEHOLDERS_WEBHOOK_URL });
    expect(run.status, run.stdout).toBe(0);
    expect(statusPage.requests).toHaveLength(0);
    expect(run.stdout).toContain('status-page: skipped (--skip)');
  });

  it('refuses a notice without a message, an unknown status or target, and every target skipped (exit 2)', async () => {
    for (const [args, message] of [
      [[], '--message <text> is required'],
      [['--message', 'x', '--status', 'fixed'], '--status must be one of investigating, identified, monitoring, resolved'],
      [['--message', 'x', '--skip', 'email'], '--skip must be one of chat, status-page, stakeholders'],
      [['--message', 'x', '--skip', 'chat', '--skip', 'status-page', '--skip', 'stakeholders'], 'every target is skipped'],
      [['--message', 'x', '--skip', 'status-page', '--incident', 'i'], '--incident goes with the status page'],
    ] as const) {
      const run = await notify(args);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
    }
    expect((await runInProcess(OPS, ['outage', 'send', '--env', 'staging', '--message', 'x'], ROOT, {})).stderr).toContain('the only action is notify');
    expect(chat.requests).toHaveLength(0);
  });
});
