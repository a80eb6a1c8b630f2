import { compareText } from '../src/base/text-order';
import { OPERATOR_SYNC_ANNOTATION } from '../src/contract/choices';
import { type KubeClient, type KubeObject, resourceId } from './kube-client';
import { sleep } from './processes';

/** One Application's state, as the report and the progress lines show it. */
export interface ApplicationState {
  readonly name: string;
  readonly wave: number;
  readonly sync: string;
  readonly health: string;
  /** Why it is not Synced and Healthy (empty when it is). */
  readonly message: string;
  /** Only an operator syncs it (OPERATOR_SYNC_ANNOTATION: Argo CD's own release). */
  readonly operatorSynced?: boolean;
}

/**
 * Whether an Application counts as converged: Synced and Healthy. Before the operator's
 * step (`beforeOperatorSync`), an Application only an operator syncs counts when Healthy:
 * nothing syncs it by itself, and the app of apps does not wait for it either.
 */
export const converged = (state: ApplicationState, beforeOperatorSync = false): boolean =>
  state.health === 'Healthy' && (state.sync === 'Synced' || (beforeOperatorSync && state.operatorSynced === true));

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The state of an Application from its status: sync and health as Argo CD reports
 * them, and a message that says why it is not converged: its error conditions, a sync
 * operation that failed or is still running, and the resources that are not healthy
 * or not synced (with the kubelet stand-in's reason for a pod that did not start).
 */
export function applicationState(app: KubeObject | undefined, name: string, wave: number, waitingPods: ReadonlyMap<string, string> = new Map()): ApplicationState {
  if (!app) return { name, wave, sync: 'Missing', health: 'Missing', message: 'the Application does not exist (its parent has not created it)' };
  const status = app.status ?? {};
  const sync = String(status.sync?.status ?? 'Unknown');
  const health = String(status.health?.status ?? 'Unknown');
  const operatorSynced = app.metadata.annotations?.[OPERATOR_SYNC_ANNOTATION.key] === OPERATOR_SYNC_ANNOTATION.value;
  const parts: string[] = [];
  if (operatorSynced && sync !== 'Synced') parts.push('waits for an operator\'s sync (never automated)');
  for (const condition of status.conditions ?? []) parts.push(`${condition.type}: ${oneLine(String(condition.message ?? ''))}`);
  const operation = status.operationState;
  if (operation && operation.phase !== 'Succeeded') {
    parts.push(`sync ${operation.phase}${operation.retryCount ? ` (retry ${operation.retryCount})` : ''}: ${oneLine(String(operation.message ?? ''))}`);
    for (const result of operation.syncResult?.resources ?? []) {
      if (result.status === 'SyncFailed' || (result.hookPhase && !['Succeeded', 'Running'].includes(result.hookPhase))) {
        parts.push(`${resourceId(result.kind, result.name, result.namespace)}: ${oneLine(String(result.message ?? result.hookPhase))}`);
      }
    }
  }
  if (!(sync === 'Synced' && health === 'Healthy')) {
    for (const resource of status.resources ?? []) {
      const id = resourceId(resource.kind, resource.name, resource.namespace);
      if (resource.health && resource.health.status !== 'Healthy') {
        parts.push(`${id} ${resource.health.status}${resource.health.message ? `: ${oneLine(resource.health.message)}` : ''}`);
      } else if (resource.status && resource.status !== 'Synced') {
        parts.push(`${id} ${resource.status}`);
      }
    }
    const namespace = app.spec?.destination?.namespace;
    for (const [pod, reason] of waitingPods) {
      if (namespace && pod.startsWith(`${namespace}/`)) parts.push(`Pod ${pod} not started, ${reason}`);
    }
  }
  if (parts.length === 0 && !(sync === 'Synced' && health === 'Healthy') && status.health?.message) parts.push(oneLine(status.health.message));
  return { name, wave, sync, health, message: [...new Set(parts)].join('; '), ...(operatorSynced ? { operatorSynced } : {}) };
}

/**
 * Watch the Applications of `expected` (name to sync wave) until every one is Synced
 * and Healthy or `timeoutMs` passes, printing each change of an Application's state as
 * it happens, wave by wave. `between` runs every poll (the stand-in controllers).
 */
export async function watchConvergence(options: {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly expected: ReadonlyMap<string, number>;
  readonly timeoutMs: number;
  readonly log: (line: string) => void;
  readonly between: () => Promise<void>;
  readonly waitingPods: () => ReadonlyMap<string, string>;
  readonly startedAt: number;
  /**
   * The operator has not synced yet: Applications only an operator syncs count when Healthy.
   * @default false
   */
  readonly beforeOperatorSync?: boolean;
}): Promise<{ states: ApplicationState[]; converged: boolean }> {
  const { client, expected, log } = options;
  const last = new Map<string, string>();
  const deadline = Date.now() + options.timeoutMs;
  let states: ApplicationState[] = [];
  for (;;) {
    await options.between();
    const apps = await client.list('argoproj.io/v1alpha1', 'Application', options.namespace);
    const byName = new Map(apps.map((a) => [a.metadata.name, a]));
    const names = [...new Set([...expected.keys(), ...byName.keys()])];
    states = names
      .map((name) => {
        const app = byName.get(name);
        const wave = Number(app?.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? expected.get(name) ?? 0);
        return applicationState(app, name, wave, options.waitingPods());
      })
      .sort((a, b) => a.wave - b.wave || compareText(a.name, b.name));
    const elapsed = Math.round((Date.now() - options.startedAt) / 1000);
    for (const state of states) {
      const line = `${state.sync.padEnd(10)} ${state.health.padEnd(12)} ${state.message}`.trimEnd();
      if (last.get(state.name) === line) continue;
      last.set(state.name, line);
      log(`${String(elapsed).padStart(4)} s  wave ${String(state.wave).padStart(2)}  ${state.name.padEnd(26)} ${line.length > 220 ? `${line.slice(0, 217)}...` : line}`);
    }
    const missing = [...expected.keys()].filter((name) => !byName.has(name));
    if (missing.length === 0 && states.every((state) => converged(state, options.beforeOperatorSync))) return { states, converged: true };
    if (Date.now() > deadline) return { states, converged: false };
    await sleep(2_000);
  }
}

/** The final table: every Application with its sync, health and message. */
export function formatTable(states: readonly ApplicationState[]): string {
  const rows = [['APPLICATION', 'WAVE', 'SYNC', 'HEALTH', 'MESSAGE'], ...states.map((s) => [s.name, String(s.wave), s.sync, s.health, s.message])];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]!) : cell)).join('  ').trimEnd()).join('\n');
}
