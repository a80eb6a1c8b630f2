import { RefusedError } from '../base/errors';
import { compareText } from '../base/text-order';
import { FLAGGER_LOAD_TESTER } from '../contract/choices';
import { FLAGGER } from '../contract/upstream';
import type { ClusterConnection, LiveObject } from './connection';
import { eventTime } from './events';
import { callService } from './service-call';
import { forwardToReadyPod, labelSelector } from './workloads';

/** The API version of Flagger's Canary the platform renders. */
export const CANARY_API_VERSION = 'flagger.app/v1beta1';

/** A Canary as `kubectl describe canary` shows it: its state, its analysis and each metric's threshold. */
export interface CanaryReport {
  readonly name: string;
  readonly namespace: string;
  /** Flagger's phase: Initializing, Initialized, Waiting, Progressing, WaitingPromotion, Promoting, Finalising, Succeeded, Failed. */
  readonly phase: string;
  readonly canaryWeight: number;
  readonly failedChecks: number;
  readonly iterations: number;
  /** The `Promoted` condition's message, what Flagger last said. */
  readonly message: string;
  readonly analysis: { readonly interval: string; readonly threshold: number; readonly maxWeight: number; readonly stepWeight: number };
  readonly metrics: readonly { readonly name: string; readonly threshold: string; readonly interval: string; readonly lastSeen?: string }[];
  /** The Canary's events, oldest first (Flagger reports each check and each metric value there). */
  readonly events: readonly string[];
}

/** A metric's threshold range as text: `>= 99`, `<= 500`, `99 .. 100`. */
function thresholdText(range: { min?: number; max?: number } | undefined): string {
  if (range?.min !== undefined && range.max !== undefined) return `${range.min} .. ${range.max}`;
  if (range?.min !== undefined) return `>= ${range.min}`;
  if (range?.max !== undefined) return `<= ${range.max}`;
  return '(none)';
}

/** The Canary and its events, read as `kubectl describe canary` reads them. */
export async function describeCanary(cluster: ClusterConnection, namespace: string, name: string): Promise<CanaryReport> {
  const canary = await cluster.get(CANARY_API_VERSION, 'Canary', name, namespace);
  if (canary === undefined) throw new RefusedError(`Canary ${namespace}/${name} does not exist on ${cluster.server}: is Flagger's analysis rendered for this environment (strategy canary) and synced?`);
  const status = (canary.status ?? {}) as { phase?: string; canaryWeight?: number; failedChecks?: number; iterations?: number; conditions?: { type: string; message?: string }[] };
  const analysis = (canary.spec?.analysis ?? {}) as { interval?: string; threshold?: number; maxWeight?: number; stepWeight?: number; metrics?: { name: string; interval?: string; thresholdRange?: { min?: number; max?: number } }[] };
  const events = (await cluster.list('v1', 'Event', namespace, undefined, `involvedObject.kind=Canary,involvedObject.name=${name}`))
    .map((event: LiveObject) => ({ at: eventTime(event), text: `${String(event['type'] ?? '')} ${String(event['reason'] ?? '')}: ${String(event['message'] ?? '')}` }))
    .sort((a, b) => compareText(a.at, b.at))
    .map((event) => `${event.at} ${event.text}`);
  return {
    name,
    namespace,
    phase: status.phase ?? 'Unknown',
    canaryWeight: status.canaryWeight ?? 0,
    failedChecks: status.failedChecks ?? 0,
    iterations: status.iterations ?? 0,
    message: status.conditions?.find((c) => c.type === 'Promoted')?.message ?? '',
    analysis: { interval: analysis.interval ?? '', threshold: analysis.threshold ?? 0, maxWeight: analysis.maxWeight ?? 0, stepWeight: analysis.stepWeight ?? 0 },
    metrics: (analysis.metrics ?? []).map((metric) => {
      const lastSeen = [...events].reverse().find((event) => event.includes(metric.name));
      return { name: metric.name, threshold: thresholdText(metric.thresholdRange), interval: metric.interval ?? '', ...(lastSeen === undefined ? {} : { lastSeen }) };
    }),
    events,
  };
}

/** The load tester's two manual gates (FLAGGER_LOAD_TESTER.gates). */
export type Gate = keyof typeof FLAGGER_LOAD_TESTER.gates;

/**
 * Flagger's load tester's gates for one Canary (fluxcd/flagger v1.44.0 pkg/loadtester/server.go):
 * `check` answers 200 when the gate is open and 403 when it is closed; `open` and `close`
 * answer 202. The body names the Canary (`CanaryWebhookPayload`).
 */
export class LoadTesterGates {
  constructor(
    /** The load tester's base URL. */
    readonly baseUrl: string,
  ) {}

  async isOpen(gate: Gate, canary: { name: string; namespace: string }): Promise<boolean> {
    const status = await this.call(FLAGGER_LOAD_TESTER.gates[gate].check, canary, [200, 403]);
    return status === 200;
  }

  async set(gate: Gate, open: boolean, canary: { name: string; namespace: string }): Promise<void> {
    const paths = FLAGGER_LOAD_TESTER.gates[gate];
    await this.call(open ? paths.open : paths.close, canary, [202]);
  }

  private async call(route: string, canary: { name: string; namespace: string }, expected: readonly number[]): Promise<number> {
    return (await callService('the load tester', this.baseUrl, { method: 'POST', route, body: canary, expected })).status;
  }
}

/** The load tester reached for a verb, and how to let go of it. */
export interface LoadTesterConnection {
  readonly gates: LoadTesterGates;
  readonly via: string;
  close(): Promise<void>;
}

/**
 * Flagger's load tester: the URL given, else a local port forwarded to one of its ready pods
 * (FLAGGER.loadTesterPodLabels in FLAGGER_LOAD_TESTER.namespace, on FLAGGER.loadTesterPort).
 * Its gates are in that process's memory, so any one replica's is the gate Flagger asks only
 * when the load tester runs one replica, as the platform's values say.
 */
export async function connectLoadTester(url: string | undefined, cluster: () => ClusterConnection): Promise<LoadTesterConnection> {
  if (url !== undefined) return { gates: new LoadTesterGates(url), via: url, close: async () => {} };
  const selector = labelSelector(FLAGGER.loadTesterPodLabels);
  const forward = await forwardToReadyPod(cluster(), FLAGGER_LOAD_TESTER.namespace, selector, FLAGGER.loadTesterPort, { name: 'load tester', hint: ' (or give --load-tester-url)' });
  return { gates: new LoadTesterGates(forward.url), via: forward.via, close: () => forward.close() };
}
