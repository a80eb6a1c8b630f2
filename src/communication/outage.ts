/**
 * Outage communication (6): a text message to the team chat's webhook, an incident on the
 * status page, and the stakeholders' channel, each at an address given by a variable of the
 * operator's shell (never in git: the addresses are credentials).
 *
 * The status page is Atlassian Statuspage (not in the contract): the most widely used hosted
 * status page, with a documented, stable REST API (https://developer.statuspage.io: v1
 * `POST /pages/{page_id}/incidents`, `PATCH /pages/{page_id}/incidents/{incident_id}`,
 * header `Authorization: OAuth <key>`, the incident statuses below). The chat and the
 * stakeholders' channel take Slack's incoming-webhook message (`{"text": ...}`), which
 * Slack, Mattermost, Rocket.Chat and Google Chat all accept, as the alert routing's chat
 * receiver does.
 */

import { unreachableReason } from '../base/errors';

/** The variables that give the targets' addresses. */
export const OUTAGE_VARIABLES = {
  chatWebhook: 'OUTAGE_CHAT_WEBHOOK_URL',
  stakeholdersWebhook: 'OUTAGE_STAKEHOLDERS_WEBHOOK_URL',
  statusPageApiKey: 'STATUSPAGE_API_KEY',
  statusPagePageId: 'STATUSPAGE_PAGE_ID',
  /** The API's base URL; another one for a Statuspage-compatible server or a test. */
  statusPageApiUrl: 'STATUSPAGE_API_URL',
} as const;

/** Statuspage's API, unless STATUSPAGE_API_URL names another. */
export const STATUSPAGE_API_URL = 'https://api.statuspage.io/v1';

/** Statuspage's statuses of a realtime incident, in the order an outage goes through them. */
export const INCIDENT_STATUSES = ['investigating', 'identified', 'monitoring', 'resolved'] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

/** The targets, in the order they are tried. */
export const OUTAGE_TARGETS = ['chat', 'status-page', 'stakeholders'] as const;
export type OutageTarget = (typeof OUTAGE_TARGETS)[number];

/** How long one target may take. Not in the contract. */
const TARGET_TIMEOUT_MS = 10_000;

/** What to tell. */
export interface OutageNotice {
  /** The environment it is about: named first in every message. */
  readonly environment: string;
  readonly message: string;
  /** The incident's status on the status page. */
  readonly status: IncidentStatus;
  /** An incident already on the status page to update, instead of a new one. */
  readonly incident?: string;
}

/** What became of one target. */
export interface TargetResult {
  readonly target: OutageTarget;
  readonly ok: boolean;
  /** Where it went (the host only: the rest of an address is a credential), or what is missing. */
  readonly detail: string;
  /** The status page's incident id, to update it later. */
  readonly incident?: string;
}

/** The address of a URL that may be shown: scheme and host. */
function shown(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/** A reason with the credentials it may quote (an address's path, a key) replaced by what may be shown. */
function redacted(text: string, url: URL, secrets: readonly string[]): string {
  let out = text.split(url.href).join(shown(url));
  for (const secret of [url.pathname + url.search, ...secrets]) if (secret.length > 1) out = out.split(secret).join('<redacted>');
  return out;
}

async function post(method: string, url: URL, body: unknown, headers: Record<string, string> = {}, secrets: readonly string[] = []): Promise<{ ok: boolean; detail: string; json?: any }> {
  try {
    const response = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TARGET_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) return { ok: false, detail: redacted(`${shown(url)} answered HTTP ${response.status}: ${text.trim().slice(0, 200) || response.statusText}`, url, secrets) };
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { ok: true, detail: `${shown(url)} answered HTTP ${response.status}`, json };
  } catch (error) {
    return { ok: false, detail: `${shown(url)} did not answer: ${redacted(unreachableReason(error), url, secrets)}` };
  }
}

/** A variable's URL, or why it cannot be used. */
function urlOf(env: NodeJS.ProcessEnv, variable: string): URL | string {
  const value = env[variable];
  if (value === undefined || value === '') return `not configured: set ${variable}`;
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${variable} must be an http:// or https:// URL`;
    // Never echoed: a user or password in the address is a credential.
    if (url.username !== '' || url.password !== '') return `${variable} must not carry a user or password (a webhook's address is its credential)`;
    return url;
  } catch {
    return `${variable} is not a URL`;
  }
}

async function webhook(target: OutageTarget, variable: string, text: string, env: NodeJS.ProcessEnv): Promise<TargetResult> {
  const url = urlOf(env, variable);
  if (typeof url === 'string') return { target, ok: false, detail: url };
  const answer = await post('POST', url, { text });
  return { target, ok: answer.ok, detail: answer.detail };
}

async function statusPage(notice: OutageNotice, env: NodeJS.ProcessEnv): Promise<TargetResult> {
  const target = 'status-page';
  const key = env[OUTAGE_VARIABLES.statusPageApiKey];
  const page = env[OUTAGE_VARIABLES.statusPagePageId];
  const missing = [OUTAGE_VARIABLES.statusPageApiKey, OUTAGE_VARIABLES.statusPagePageId].filter((variable) => !env[variable]);
  if (missing.length > 0 || key === undefined || page === undefined) return { target, ok: false, detail: `not configured: set ${missing.join(' and ')}` };
  const base = env[OUTAGE_VARIABLES.statusPageApiUrl] || STATUSPAGE_API_URL;
  const incidents = `${base.replace(/\/+$/, '')}/pages/${encodeURIComponent(page)}/incidents`;
  let url: URL;
  try {
    url = new URL(notice.incident === undefined ? incidents : `${incidents}/${encodeURIComponent(notice.incident)}`);
  } catch {
    return { target, ok: false, detail: `${OUTAGE_VARIABLES.statusPageApiUrl} is not a URL` };
  }
  const incident = notice.incident === undefined ? { name: `${notice.environment}: ${notice.message}`, status: notice.status, body: notice.message } : { status: notice.status, body: notice.message };
  const answer = await post(notice.incident === undefined ? 'POST' : 'PATCH', url, { incident }, { authorization: `OAuth ${key}` }, [key]);
  const id = typeof answer.json?.id === 'string' ? (answer.json.id as string) : notice.incident;
  return { target, ok: answer.ok, detail: answer.ok ? `${answer.detail}: incident ${id ?? '(no id returned)'} ${notice.status}` : answer.detail, ...(id === undefined ? {} : { incident: id }) };
}

/**
 * Tell every target, in order, whatever became of the ones before: a target that fails or is
 * not configured is reported and the next one is still told.
 */
export async function notifyOutage(notice: OutageNotice, targets: readonly OutageTarget[], env: NodeJS.ProcessEnv): Promise<TargetResult[]> {
  const text = `[${notice.environment}] ${notice.status === 'resolved' ? 'Resolved' : 'Outage'}: ${notice.message}`;
  const results: TargetResult[] = [];
  for (const target of targets) {
    if (target === 'chat') results.push(await webhook(target, OUTAGE_VARIABLES.chatWebhook, text, env));
    else if (target === 'stakeholders') results.push(await webhook(target, OUTAGE_VARIABLES.stakeholdersWebhook, text, env));
    else results.push(await statusPage(notice, env));
  }
  return results;
}

/**
 * The targets of a significant deployment's notice (1.6: stakeholders notified of significant
 * deployments): the team chat and the stakeholders' channel, the outage notice's webhooks.
 */
export const DEPLOYMENT_NOTICE_TARGETS = ['chat', 'stakeholders'] as const satisfies readonly OutageTarget[];

/**
 * Post a significant deployment's notice (a production sync, a rollback) to the team chat and
 * the stakeholders' channel, through the outage notice's webhooks (OUTAGE_CHAT_WEBHOOK_URL,
 * OUTAGE_STAKEHOLDERS_WEBHOOK_URL); each target's result, a missing address reported, never thrown.
 */
export async function notifyDeployment(environment: string, message: string, env: NodeJS.ProcessEnv): Promise<TargetResult[]> {
  const text = `[${environment}] Deployment: ${message}`;
  return Promise.all([
    webhook('chat', OUTAGE_VARIABLES.chatWebhook, text, env),
    webhook('stakeholders', OUTAGE_VARIABLES.stakeholdersWebhook, text, env),
  ]);
}
