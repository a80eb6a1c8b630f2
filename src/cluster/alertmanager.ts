import { RefusedError, UsageError } from '../base/errors';
import { compareText } from '../base/text-order';
import { INFRASTRUCTURE_NAMESPACES } from '../contract/choices';
import { KUBE_PROMETHEUS_STACK } from '../contract/upstream';
import type { ClusterConnection } from './connection';
import { callService } from './service-call';
import { forwardToReadyPod } from './workloads';

/**
 * The units of a Prometheus duration and their milliseconds, longest first, as Alertmanager
 * reads `--duration` (github.com/prometheus/common model.ParseDuration: `1h30m`, `2d`, `90s`;
 * each unit at most once, in this order).
 */
const DURATION_UNITS: ReadonlyArray<readonly [string, number]> = [
  ['y', 365 * 24 * 3_600_000],
  ['w', 7 * 24 * 3_600_000],
  ['d', 24 * 3_600_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];
const DURATION_PATTERN = new RegExp(`^${DURATION_UNITS.map(([unit]) => `(?:(\\d+)${unit})?`).join('')}$`);

/** Milliseconds of a Prometheus duration (`1h`, `1h30m`); a usage error naming `option` otherwise. */
export function parseDuration(text: string, option: string): number {
  const match = text === '' ? null : DURATION_PATTERN.exec(text);
  const ms = match === null ? 0 : DURATION_UNITS.reduce((sum, [, unit], index) => sum + Number(match[index + 1] ?? 0) * unit, 0);
  if (ms <= 0) throw new UsageError(`${option} "${text}" must be a positive duration such as 1h, 30m or 1h30m`);
  return ms;
}

/** One label matcher of a silence (Alertmanager API v2 `matcher`). */
export interface SilenceMatcher {
  readonly name: string;
  readonly value: string;
  readonly isRegex: boolean;
  readonly isEqual: boolean;
}

/** A silence as Alertmanager's API v2 returns it (`gettableSilence`). */
export interface Silence {
  readonly id: string;
  readonly status: { readonly state: 'active' | 'pending' | 'expired' };
  readonly matchers: readonly SilenceMatcher[];
  readonly startsAt: string;
  readonly endsAt: string;
  readonly createdBy: string;
  readonly comment: string;
}

/** What a new silence says (`postableSilence`). */
export interface NewSilence {
  readonly matchers: readonly SilenceMatcher[];
  readonly startsAt: Date;
  readonly endsAt: Date;
  readonly createdBy: string;
  readonly comment: string;
}

/** `name=value` (`!=`, `=~`, `!~` as in amtool) as a matcher; a usage error naming the option otherwise. */
export function parseMatcher(text: string, option: string): SilenceMatcher {
  const match = /^([a-zA-Z_][a-zA-Z0-9_]*)(=~|!~|!=|=)(.+)$/.exec(text);
  if (match === null) throw new UsageError(`${option} "${text}" must be <label>=<value> (or !=, =~, !~ as in amtool), the label a Prometheus label name`);
  const [, name, operator, value] = match;
  return { name: name!, value: value!, isRegex: operator!.includes('~'), isEqual: !operator!.startsWith('!') };
}

/** A matcher as amtool prints it: `severity="critical"`, `alertname=~"A|B"`. */
export function formatMatcher(matcher: SilenceMatcher): string {
  return `${matcher.name}${matcher.isEqual ? '' : '!'}${matcher.isRegex ? '~' : '='}${JSON.stringify(matcher.value)}`;
}

/**
 * Alertmanager's HTTP API v2 (api/v2/openapi.yaml of github.com/prometheus/alertmanager):
 * the silences, which gossip to every replica of the cluster, so one replica is enough.
 */
export class AlertmanagerApi {
  constructor(
    /** The base URL, without a trailing `/api/v2`. */
    readonly baseUrl: string,
  ) {}

  async createSilence(silence: NewSilence): Promise<string> {
    const body = { ...silence, startsAt: silence.startsAt.toISOString(), endsAt: silence.endsAt.toISOString() };
    const answer = (await this.call('POST', '/api/v2/silences', body)) as { silenceID?: string };
    if (typeof answer.silenceID !== 'string') throw new RefusedError(`Alertmanager at ${this.baseUrl} created a silence without an id`);
    return answer.silenceID;
  }

  async silence(id: string): Promise<Silence> {
    return (await this.call('GET', `/api/v2/silence/${encodeURIComponent(id)}`)) as Silence;
  }

  /** Every silence Alertmanager keeps (expired ones for its retention too), newest end first. */
  async silences(): Promise<Silence[]> {
    const all = (await this.call('GET', '/api/v2/silences')) as Silence[];
    return [...all].sort((a, b) => compareText(b.endsAt, a.endsAt) || compareText(a.id, b.id));
  }

  async expireSilence(id: string): Promise<void> {
    await this.call('DELETE', `/api/v2/silence/${encodeURIComponent(id)}`);
  }

  private async call(method: string, route: string, body?: unknown): Promise<unknown> {
    const { text } = await callService('Alertmanager', this.baseUrl, { method, route, body });
    return text === '' ? {} : JSON.parse(text);
  }
}

/** Alertmanager reached for a verb: its API, and how to let go of it. */
export interface AlertmanagerConnection {
  readonly api: AlertmanagerApi;
  /** How it was reached: the URL, or the pod a port is forwarded to. */
  readonly via: string;
  close(): Promise<void>;
}

/**
 * Alertmanager of the environment's monitoring stack: the URL given, else a local port
 * forwarded to one ready Alertmanager pod of the monitoring namespace (the pods
 * prometheus-operator runs, by `app.kubernetes.io/name: alertmanager`, on 9093).
 */
export async function connectAlertmanager(url: string | undefined, cluster: () => ClusterConnection): Promise<AlertmanagerConnection> {
  if (url !== undefined) {
    if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--alertmanager-url "${url}" must be an http:// or https:// URL`);
    // Never echoed: a user or password in the address is a credential, and fetch refuses it.
    if (/^https?:\/\/[^/]*@/.test(url)) throw new UsageError('--alertmanager-url must not carry a user or password');
    return { api: new AlertmanagerApi(url), via: url, close: async () => {} };
  }
  const selector = `${KUBE_PROMETHEUS_STACK.nameLabel}=${KUBE_PROMETHEUS_STACK.alertmanager}`;
  const forward = await forwardToReadyPod(cluster(), INFRASTRUCTURE_NAMESPACES.monitoringStack, selector, KUBE_PROMETHEUS_STACK.ports.alertmanager, {
    name: 'Alertmanager',
    hint: ': is the monitoring stack running? (or give --alertmanager-url)',
  });
  return { api: new AlertmanagerApi(forward.url), via: forward.via, close: () => forward.close() };
}
