import { OPERATOR_SYNC_ANNOTATION } from '../contract/choices';
import { oneLine, operationInProgress, operationRequested, starterOf } from './argo-cd';
import { type LiveObject, resourceId } from './connection';

/** One Application's state, as `ops status`, the e2e's progress lines and its report show it. */
export interface ApplicationState {
  readonly name: string;
  readonly wave: number;
  readonly sync: string;
  readonly health: string;
  /** Why it is not Synced and Healthy (empty when it is). */
  readonly message: string;
  /** Only an operator syncs it (OPERATOR_SYNC_ANNOTATION: Argo CD's own release). */
  readonly operatorSynced?: boolean;
  /**
   * A sync operation is requested, runs, or ended and was not compared since (operationInProgress).
   * @default false
   */
  readonly operationInProgress?: boolean;
}

/**
 * Whether an Application counts as converged: Synced and Healthy, with no sync operation in
 * progress (`argocd app wait`'s default). Before the operator's step (`beforeOperatorSync`),
 * an Application only an operator syncs counts when Healthy: nothing syncs it by itself, and
 * the app of apps does not wait for it either.
 */
export const converged = (state: ApplicationState, beforeOperatorSync = false): boolean =>
  state.health === 'Healthy' && state.operationInProgress !== true && (state.sync === 'Synced' || (beforeOperatorSync && state.operatorSynced === true));

/**
 * The results of a sync operation that failed, as `<Kind> <namespace>/<name>: <message>`:
 * an object the sync could not apply (SyncFailed) or a hook that ended Failed or Error.
 */
export function failedResults(operation: any): string[] {
  return ((operation?.syncResult?.resources ?? []) as any[])
    .filter((r) => r.status === 'SyncFailed' || r.hookPhase === 'Failed' || r.hookPhase === 'Error')
    .map((r) => `${resourceId(r.kind, r.name, r.namespace)}: ${oneLine(String(r.message ?? r.hookPhase))}`);
}

/**
 * The resources an Application's health names as its cause, as `resourceId`s: Argo CD keeps a
 * resource's own health out of the Application (v3.6.1 `--persist-resource-health` defaults to
 * false) and writes the worst ones into the Application's health message instead
 * ("Caused by <group>/<Kind>:<namespace>/<name>, ...", controller/health.go
 * `formatHealthCauses`).
 */
export function healthCauses(app: LiveObject | undefined): string[] {
  const message = String(app?.['status']?.health?.message ?? '');
  const causes = /^Caused by (.*)$/.exec(message)?.[1];
  if (causes === undefined) return [];
  return causes
    .replace(/ and \d+ more$/, '')
    .split(', ')
    .flatMap((cause) => {
      const found = /^(?:[^/:]+\/)?([^/:]+):(?:([^/]+)\/)?(.+)$/.exec(cause);
      return found === null ? [] : [resourceId(found[1]!, found[3]!, found[2])];
    });
}

/**
 * The state of an Application from its status: sync and health as Argo CD reports
 * them, and a message that says why it is not converged: its error conditions, a sync
 * operation that failed or is still running, and the resources that are not healthy
 * or not synced. `podNotes` adds what is known about pods that did not start, by
 * `<namespace>/<pod>` (the e2e's kubelet checks).
 */
export function applicationState(app: LiveObject | undefined, name: string, wave: number, podNotes: ReadonlyMap<string, string> = new Map()): ApplicationState {
  if (!app) return { name, wave, sync: 'Missing', health: 'Missing', message: 'the Application does not exist (its parent has not created it)' };
  const status = app['status'] ?? {};
  const sync = String(status.sync?.status ?? 'Unknown');
  const health = String(status.health?.status ?? 'Unknown');
  const operatorSynced = app.metadata.annotations?.[OPERATOR_SYNC_ANNOTATION.key] === OPERATOR_SYNC_ANNOTATION.value;
  const parts: string[] = [];
  if (operatorSynced && sync !== 'Synced') parts.push("waits for an operator's sync (never automated)");
  for (const condition of status.conditions ?? []) parts.push(`${condition.type}: ${oneLine(String(condition.message ?? ''))}`);
  const operation = status.operationState;
  const inProgress = operationInProgress(app);
  if (operation && operation.phase !== 'Succeeded') {
    parts.push(`sync ${operation.phase}${operation.retryCount ? ` (retry ${operation.retryCount})` : ''}: ${oneLine(String(operation.message ?? ''))}`);
    for (const result of operation.syncResult?.resources ?? []) {
      if (result.status === 'SyncFailed' || (result.hookPhase && !['Succeeded', 'Running'].includes(result.hookPhase))) {
        parts.push(`${resourceId(result.kind, result.name, result.namespace)}: ${oneLine(String(result.message ?? result.hookPhase))}`);
      }
    }
  } else if (inProgress) {
    parts.push(operationRequested(app) ? 'a sync operation is requested' : 'the sync operation ended, not compared since');
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
    const namespace = app['spec']?.destination?.namespace;
    for (const [pod, reason] of podNotes) {
      if (namespace && pod.startsWith(`${namespace}/`)) parts.push(`Pod ${pod} not started, ${reason}`);
    }
  }
  // The health's causes, when no resource's own health says more (Argo CD keeps those out of the Application).
  if (!(sync === 'Synced' && health === 'Healthy') && status.health?.message && (parts.length === 0 || health !== 'Healthy')) parts.push(`health ${health}: ${oneLine(status.health.message)}`);
  return { name, wave, sync, health, message: [...new Set(parts)].join('; '), ...(operatorSynced ? { operatorSynced } : {}), ...(inProgress ? { operationInProgress: inProgress } : {}) };
}

/** A table of Applications with their sync, health and message, in wave order. */
export function formatApplicationTable(states: readonly ApplicationState[], extra: readonly { readonly header: string; readonly cells: readonly string[] }[] = []): string {
  const header = ['APPLICATION', 'WAVE', 'SYNC', 'HEALTH', ...extra.map((column) => column.header), 'MESSAGE'];
  const rows = [header, ...states.map((s, row) => [s.name, String(s.wave), s.sync, s.health, ...extra.map((column) => column.cells[row] ?? ''), s.message])];
  const last = header.length - 1;
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i < last ? cell.padEnd(widths[i]!) : cell)).join('  ').trimEnd()).join('\n');
}

/** The revision an Application is synced to (the first source's, for several sources), shortened; `-` before its first comparison. */
export function syncedRevision(app: LiveObject): string {
  const sync = app['status']?.sync ?? {};
  const revision = String(sync.revisions?.[0] ?? sync.revision ?? '');
  return revision === '' ? '-' : /^[0-9a-f]{40}$/.test(revision) ? revision.slice(0, 7) : revision;
}

/** The last sync operation: its phase, who started it and when it ended; `-` when none ran. */
export function lastOperation(app: LiveObject): string {
  const operation = app['status']?.operationState;
  if (operation === undefined) return '-';
  return `${operation.phase} (${starterOf(operation.operation)}${operation.finishedAt ? `, ${operation.finishedAt}` : ''})`;
}
