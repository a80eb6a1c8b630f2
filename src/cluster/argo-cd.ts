import { randomUUID } from 'node:crypto';
import { RefusedError } from '../base/errors';
import { compareText } from '../base/text-order';
import { applicationHistory } from './application-history';
import { OPERATOR_SYNC_ANNOTATION, SYNC_PAUSE_ANNOTATIONS } from '../contract/choices';
import { SYNC_WAVE_ANNOTATION, TRACKING_ANNOTATION } from '../contract/upstream';
import { type ClusterConnection, ClusterRefusal, type LiveObject, resourceId } from './connection';
import { type WaitResult, waitFor } from './wait';

/**
 * Argo CD through its resources, as its own core mode works (`argocd --core`): an
 * Application is read, refreshed, synced, paused and resumed by reading and patching the
 * Application object; no Argo CD API server, login or token is needed, only the Kubernetes
 * permissions of ./operations-role.ts.
 */
export const APPLICATION_API = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application' } as const;

/** Argo CD's annotation that asks the controller for a refresh; it removes it once done (argo-cd v3.6.1 pkg/apis/application/v1alpha1/application_annotations.go, AnnotationKeyRefresh). */
export const REFRESH_ANNOTATION = 'argocd.argoproj.io/refresh';

/**
 * The annotation that names one refresh request, set beside REFRESH_ANNOTATION (util/argo/argo.go,
 * RefreshApp): the controller removes it only at the end of a comparison that read it
 * (controller/appcontroller.go, removeRefreshAnnotationCombo, whose JSON patch tests its value).
 */
export const REFRESH_TIMESTAMP_ANNOTATION = 'argocd.argoproj.io/refresh-timestamp';

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
 * Whether a sync operation of the Application is in progress, as `argocd app wait` judges it
 * (argo-cd v3.6.1 cmd/argocd/commands/app.go, checkAppWaitConditions): `operation` is set
 * (requested, running, or failed and awaiting a retry: the controller removes it only when the
 * operation has completed), or status.operationState has not finished, or it finished and the
 * controller has not compared the Application since (`reconciledAt` before `finishedAt`; a dry
 * run excepted).
 */
export function operationInProgress(app: LiveObject): boolean {
  if (operationRequested(app)) return true;
  const operation = app['status']?.operationState;
  if (operation === undefined || operation === null) return false;
  const finishedAt = Date.parse(String(operation.finishedAt ?? ''));
  if (!Number.isFinite(finishedAt)) return true;
  if (operation.operation?.sync?.dryRun === true) return false;
  const reconciledAt = Date.parse(String(app['status']?.reconciledAt ?? ''));
  return !Number.isFinite(reconciledAt) || reconciledAt < finishedAt;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

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

/** The sync wave Argo CD orders the Application by. */
export function waveOf(app: LiveObject | undefined, fallback = 0): number {
  return Number(app?.metadata.annotations?.[SYNC_WAVE_ANNOTATION] ?? fallback);
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

/** Who started an operation (an Application's `operation` or `status.operationState.operation`): `automated`, or the person's name. */
function starterOf(operation: { initiatedBy?: { automated?: boolean; username?: string } } | undefined): string {
  return operation?.initiatedBy?.automated === true ? 'automated' : String(operation?.initiatedBy?.username ?? 'unknown');
}

/**
 * Whether an operation state has not completed: Running (a retry awaited included) or
 * Terminating (gitops-engine pkg/sync/common/types.go, OperationPhase.Completed).
 */
export function operationRuns(state: { readonly phase?: unknown } | undefined | null): boolean {
  return state?.phase === 'Running' || state?.phase === 'Terminating';
}

/** Whether a sync operation is requested of the Application (`operation` set): the controller removes it once the operation has completed. */
function operationRequested(app: LiveObject): boolean {
  return app['operation'] !== undefined && app['operation'] !== null;
}

/** The last sync operation: its phase, who started it and when it ended; `-` when none ran. */
export function lastOperation(app: LiveObject): string {
  const operation = app['status']?.operationState;
  if (operation === undefined) return '-';
  return `${operation.phase} (${starterOf(operation.operation)}${operation.finishedAt ? `, ${operation.finishedAt}` : ''})`;
}

/**
 * The Applications of the controller's namespace, in wave order (then by name); refused, naming
 * it, where the API server does not serve Argo CD's Application resource (no Argo CD there).
 */
export async function listApplications(cluster: ClusterConnection, namespace: string): Promise<LiveObject[]> {
  const apps = await cluster.listServed(APPLICATION_API.apiVersion, APPLICATION_API.kind, namespace, `Argo CD's Application resource (${APPLICATION_API.apiVersion} applications)`, 'is Argo CD installed there?');
  return apps.sort((a, b) => waveOf(a) - waveOf(b) || compareText(a.metadata.name, b.metadata.name));
}

/** One Application, refused when it does not exist. */
export async function readApplication(cluster: ClusterConnection, namespace: string, name: string): Promise<LiveObject> {
  const app = await cluster.get(APPLICATION_API.apiVersion, APPLICATION_API.kind, name, namespace);
  if (app === undefined) throw new RefusedError(`Application ${namespace}/${name} does not exist on ${cluster.server} (context ${cluster.context}): is the environment bootstrapped there?`);
  return app;
}

/**
 * The annotations that ask Argo CD for a normal refresh, as `argocd app get --refresh` sets them
 * (argo-cd v3.6.1 util/argo/argo.go, RefreshApp): the request and a timestamp naming it.
 */
function refreshRequest(): Record<string, string> {
  return { [REFRESH_ANNOTATION]: 'normal', [REFRESH_TIMESTAMP_ANNOTATION]: new Date().toISOString() };
}

/**
 * Whether Argo CD has compared the Application since the refresh asked of it (refreshRequest):
 * the controller removes the timestamp only at the end of a comparison that read it
 * (controller/appcontroller.go, persistReconciliationStatus, removeRefreshAnnotationCombo,
 * whose JSON patch tests its value). A comparison that began before the request may remove the
 * refresh annotation alone and leave the timestamp; the refresh is then asked for again, or no
 * comparison would come before the periodic one.
 */
async function comparedSinceRequest(cluster: ClusterConnection, namespace: string, app: LiveObject): Promise<boolean> {
  const annotations = app.metadata.annotations ?? {};
  if (annotations[REFRESH_TIMESTAMP_ANNOTATION] === undefined) return true;
  if (annotations[REFRESH_ANNOTATION] === undefined) {
    await cluster.mergePatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, app.metadata.name, namespace, { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } });
  }
  return false;
}

/**
 * Ask Argo CD to compare the Applications again with git and the cluster (a normal
 * refresh) and wait until each is done (comparedSinceRequest).
 */
export async function refreshApplications(cluster: ClusterConnection, namespace: string, names: readonly string[], timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult> {
  for (const name of names) {
    await cluster.mergePatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, name, namespace, { metadata: { annotations: refreshRequest() } });
  }
  return waitFor({
    what: `refresh of ${names.length === 1 ? `Application ${names[0]}` : `${names.length} Applications`}`,
    timeoutSeconds,
    progress,
    intervalSeconds: 1,
    check: async () => {
      const pending: string[] = [];
      for (const name of names) {
        if (!(await comparedSinceRequest(cluster, namespace, await readApplication(cluster, namespace, name)))) pending.push(name);
      }
      return { done: pending.length === 0, state: pending.length === 0 ? 'compared' : `waiting for ${pending.join(', ')}` };
    },
  });
}

/** How a sync operation is asked for (`argocd app sync` has the same options). */
export interface SyncRequest {
  /** Who asks: Argo CD records it as the operation's `initiatedBy.username`. */
  readonly by: string;
  /**
   * Delete live objects that git no longer has.
   * @default false
   */
  readonly prune?: boolean;
  /**
   * Replace objects that cannot be patched (delete and re-create), as `argocd app sync --force`.
   * @default false
   */
  readonly force?: boolean;
}

/** The `info` entry that marks an operation this program asked for, so its wait knows it from any other. */
const REQUEST_INFO = 'platform-gitops-request';

/**
 * Set the Application's `operation` as Argo CD's own clients do (argo-cd v3.6.1
 * util/argo/argo.go SetAppOperation): refused while another operation is set or running,
 * written with the resourceVersion it was read at and, on a conflict (409), read, checked and
 * written again: an automated sync that started in between is then seen and refused, never
 * merged into. The operation carries a request id in its `info`, which the controller keeps in
 * status.operationState.
 */
async function setOperation(cluster: ClusterConnection, namespace: string, name: string, operation: (app: LiveObject) => Record<string, any>): Promise<string> {
  const request = randomUUID();
  // The controller writes the Application's status every few seconds: a conflict is read again and retried, as SetAppOperation does.
  for (let attempt = 1; ; attempt++) {
    const app = await readApplication(cluster, namespace, name);
    const running = app['status']?.operationState;
    const runs = operationRuns(running);
    if (operationRequested(app) || runs) {
      throw new RefusedError(`Application ${name} has a sync operation ${runs ? `running (${running.phase}` : '(requested'}, by ${starterOf(runs ? running.operation : app['operation'])}): wait for it, or terminate it in Argo CD`);
    }
    const body = operation(app);
    try {
      await cluster.mergePatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, name, namespace, {
        metadata: { resourceVersion: app.metadata['resourceVersion'] },
        operation: { ...body, info: [...(body['info'] ?? []), { name: REQUEST_INFO, value: request }] },
      });
      return request;
    } catch (error) {
      if (!(error instanceof ClusterRefusal && error.status === 409) || attempt >= 10) throw error;
    }
  }
}

/**
 * Start a sync operation, as `argocd app sync` does (argo-cd v3.6.1
 * pkg/apis/application/v1alpha1/types.go: Operation, SyncOperation, SyncStrategyHook with
 * `force`), with the Application's sync options, which the controller reads from the
 * operation. Returns the request id waitForSync follows.
 */
export async function startSync(cluster: ClusterConnection, namespace: string, name: string, request: SyncRequest): Promise<string> {
  return setOperation(cluster, namespace, name, (app) => {
    const syncOptions = app['spec']?.syncPolicy?.syncOptions;
    return {
      initiatedBy: { username: request.by },
      sync: { prune: request.prune ?? false, ...(syncOptions === undefined ? {} : { syncOptions }), syncStrategy: { hook: { force: request.force ?? false } } },
    };
  });
}

/** Wait for the sync operation of request `request` (startSync, startRollback) to end; ok when it Succeeded. */
export async function waitForSync(cluster: ClusterConnection, namespace: string, name: string, request: string, timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult> {
  return waitFor({
    what: `sync of Application ${name}`,
    timeoutSeconds,
    progress,
    check: async () => {
      const app = await readApplication(cluster, namespace, name);
      const operation = app['status']?.operationState;
      // The controller records the operation it starts in status.operationState, info
      // included, and removes `operation` once it has ended.
      const ours = (operation?.operation?.info ?? []).some((entry: { name?: string; value?: string }) => entry.name === REQUEST_INFO && entry.value === request);
      if (!ours) return { done: false, state: 'requested, not started yet' };
      if (app['operation'] !== undefined && !operationRuns(operation)) return { done: false, state: 'ending' };
      const phase = String(operation.phase);
      const message = oneLine(String(operation.message ?? ''));
      if (phase === 'Succeeded') return { done: true, state: `Succeeded${message ? `: ${message}` : ''}` };
      if (phase === 'Failed' || phase === 'Error') {
        return { done: false, state: phase, failed: [`sync ${phase}: ${message}`, ...failedResults(operation)].join('; ') };
      }
      return { done: false, state: `${phase}${message ? `: ${message}` : ''}` };
    },
  });
}

/**
 * The Application that applied `app` (an app of apps: the root, `infrastructure`): the first
 * part of its tracking annotation (TRACKING_ANNOTATION). Undefined for one no Application
 * applied (the root, which the bootstrap creates).
 */
export function managingApplication(app: LiveObject): string | undefined {
  const tracking = app.metadata.annotations?.[TRACKING_ANNOTATION];
  const manager = tracking?.split(':')[0];
  return manager === undefined || manager === '' || manager === app.metadata.name ? undefined : manager;
}

/**
 * `apps` in generations, each Application after the one that applied it when that one is
 * among them (managingApplication); one that no tracking annotation ties to a manager (its
 * tracking written by another method, or none yet) counts as `root`'s, as every Application
 * but the root is the root's or a descendant's. The first generation holds those whose
 * manager is not in `apps`; each keeps the order of `apps`.
 */
export function applicationGenerations<T extends LiveObject>(apps: readonly T[], root: string): T[][] {
  const byName = new Map(apps.map((app) => [app.metadata.name, app]));
  const depth = new Map<string, number>();
  const managerOf = (app: T) => managingApplication(app) ?? (app.metadata.name === root ? undefined : root);
  const depthOf = (app: T, seen: ReadonlySet<string>): number => {
    const known = depth.get(app.metadata.name);
    if (known !== undefined) return known;
    const manager = managerOf(app);
    const parent = manager === undefined || seen.has(manager) ? undefined : byName.get(manager);
    const found = parent === undefined ? 0 : depthOf(parent, new Set([...seen, app.metadata.name])) + 1;
    depth.set(app.metadata.name, found);
    return found;
  };
  const generations: T[][] = [];
  for (const app of apps) (generations[depthOf(app, new Set([app.metadata.name]))] ??= []).push(app);
  return generations.filter((generation) => generation !== undefined);
}

/**
 * Whether the Application has an automated sync policy, running or paused (`automated` set);
 * production's have none, and there is nothing to pause or resume there.
 */
export function hasAutomatedPolicy(app: LiveObject): boolean {
  return app['spec']?.syncPolicy?.automated != null;
}

/** Whether automated sync runs for the Application (argo-cd v3.6.1 SyncPolicy.IsAutomatedSyncEnabled: `automated` set and `enabled` not false). */
export function automatedSyncEnabled(app: LiveObject): boolean {
  return hasAutomatedPolicy(app) && app['spec'].syncPolicy.automated.enabled !== false;
}

/** Who paused an Application's automated sync and why, when `ops pause` did. */
export function pauseRecord(app: LiveObject): { readonly by: string; readonly reason: string } | undefined {
  const annotations = app.metadata.annotations ?? {};
  const by = annotations[SYNC_PAUSE_ANNOTATIONS.by];
  return by === undefined ? undefined : { by, reason: annotations[SYNC_PAUSE_ANNOTATIONS.reason] ?? '' };
}

/**
 * Pause automated sync (self-heal and prune with it) of an Application: `automated.enabled:
 * false`, which keeps the rendered policy to resume to (argo-cd v3.6.1 types.go,
 * SyncPolicyAutomated.Enabled), and who and why as annotations. An Application without
 * automated sync (production) is left as it is: there is nothing to pause.
 *
 * The same patch asks for a refresh (refreshRequest), which settlePause waits on: the pause is
 * only in force once Argo CD has stopped what it started under the old policy.
 */
export async function pauseApplication(cluster: ClusterConnection, namespace: string, app: LiveObject, by: string, reason: string): Promise<'paused' | 'already paused' | 'manual'> {
  if (!hasAutomatedPolicy(app)) return 'manual';
  const already = !automatedSyncEnabled(app);
  await cluster.mergePatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, app.metadata.name, namespace, {
    metadata: { annotations: { [SYNC_PAUSE_ANNOTATIONS.by]: by, [SYNC_PAUSE_ANNOTATIONS.reason]: reason, ...refreshRequest() } },
    spec: { syncPolicy: { automated: { enabled: false } } },
  });
  return already ? 'already paused' : 'paused';
}

/**
 * Terminate the Application's running automated sync operation, the one that started at
 * `startedAt`, as `argocd app terminate-op` does (argo-cd v3.6.1
 * server/application/application.go, TerminateOperation): status.operationState.phase set to
 * Terminating, written at the resourceVersion read and, on a conflict, read and written again.
 * Only while `operation` is set, which is when the controller processes an operation
 * (controller/appcontroller.go, shouldProcessOperation); it then stops the sync and ends it
 * Failed ("Operation terminated") or Error, without a retry (gitops-engine pkg/sync
 * sync_context.go, Terminate; processRequestedAppOperation). Whether it was written: not when
 * that operation has ended meanwhile, or another one runs (a person's is never terminated).
 */
async function terminateAutomatedOperation(cluster: ClusterConnection, namespace: string, name: string, startedAt: unknown): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const app = await readApplication(cluster, namespace, name);
    const state = app['status']?.operationState;
    if (!operationRequested(app) || state?.phase !== 'Running' || state.startedAt !== startedAt || starterOf(state.operation) !== 'automated') return false;
    try {
      await cluster.mergePatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, name, namespace, {
        metadata: { resourceVersion: app.metadata['resourceVersion'] },
        status: { operationState: { phase: 'Terminating' } },
      });
      return true;
    } catch (error) {
      if (!(error instanceof ClusterRefusal && error.status === 409) || attempt >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** How settlePause ended: the wait, and whether it terminated an automated sync. */
export interface PauseSettled extends WaitResult {
  /**
   * It set an automated sync operation to Terminating (terminateAutomatedOperation).
   * @default false
   */
  readonly terminated?: boolean;
}

/**
 * Wait until a pause is in force: nothing Argo CD decided under the old policy still changes
 * the cluster.
 * 1. The controller has compared the Application since the pause (comparedSinceRequest, the
 *    refresh pauseApplication asked for), and that comparison ends after its automated-sync
 *    decision (argo-cd v3.6.1 controller/appcontroller.go, processAppRefreshQueueItem: autoSync,
 *    then persistReconciliationStatus). The comparisons of one Application never overlap (one
 *    work queue key), and the controller writes an automated sync's operation without reading
 *    the policy again (util/argo/argo.go, SetAppOperation): one decided on the old policy is
 *    visible by then.
 * 2. An automated sync operation still requested or running (its retries included, which
 *    pausing does not stop) is terminated once the controller has started it (its
 *    operationState Running), and its end awaited; one a person started is awaited, not
 *    terminated. A requested operation is not withdrawn: the controller may have read it and be
 *    starting it, and it processes an operation only while `operation` is set.
 */
export async function settlePause(cluster: ClusterConnection, namespace: string, name: string, timeoutSeconds: number, progress: (line: string) => void): Promise<PauseSettled> {
  let terminated = false;
  const result = await waitFor({
    what: `pause of Application ${name}`,
    timeoutSeconds,
    progress,
    intervalSeconds: 1,
    check: async () => {
      const app = await readApplication(cluster, namespace, name);
      if (!(await comparedSinceRequest(cluster, namespace, app))) return { done: false, state: 'waiting for Argo CD to compare it with automated sync off' };
      // The controller processes an operation only while `operation` is set (shouldProcessOperation).
      if (!operationRequested(app)) return { done: true, state: terminated ? 'the automated sync terminated' : 'no sync running' };
      const state = app['status']?.operationState;
      const runs = operationRuns(state);
      const starter = starterOf(runs ? state.operation : app['operation']);
      if (starter !== 'automated') return { done: false, state: `waiting for the sync ${starter} started to end (${runs ? state.phase : 'requested'})` };
      if (state?.phase === 'Running') {
        if (await terminateAutomatedOperation(cluster, namespace, name, state.startedAt)) terminated = true;
        return { done: false, state: 'terminating the automated sync that runs' };
      }
      return { done: false, state: `waiting for the automated sync to ${runs ? 'end' : 'start, to terminate it'}` };
    },
  });
  return terminated ? { ...result, terminated } : result;
}

/**
 * The message of the Application's last operation when it is an automated sync that ended
 * Failed or Error (one a pause terminated among them): Argo CD does not start another automated
 * sync of the revisions that one tried, self-heal included, until git moves (argo-cd v3.6.1
 * controller/appcontroller.go, autoSync: "Skipping auto-sync: failed previous sync attempt",
 * the SyncError condition "Failed last sync attempt to ...").
 */
export function failedAutomatedSync(app: LiveObject): string | undefined {
  const state = app['status']?.operationState;
  if (state === undefined || !['Failed', 'Error'].includes(String(state.phase)) || starterOf(state.operation) !== 'automated') return undefined;
  return oneLine(String(state.message ?? state.phase));
}

/** Resume what pauseApplication paused: `enabled` removed (automated again), the record removed. */
export async function resumeApplication(cluster: ClusterConnection, namespace: string, app: LiveObject): Promise<'resumed' | 'not paused' | 'manual'> {
  if (!hasAutomatedPolicy(app)) return 'manual';
  const paused = !automatedSyncEnabled(app) || pauseRecord(app) !== undefined;
  await cluster.mergePatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, app.metadata.name, namespace, {
    metadata: { annotations: { [SYNC_PAUSE_ANNOTATIONS.by]: null, [SYNC_PAUSE_ANNOTATIONS.reason]: null } },
    spec: { syncPolicy: { automated: { enabled: null } } },
  });
  return paused ? 'resumed' : 'not paused';
}

/** The Helm chart an Application installs: the one source with a `chart`. */
export interface HelmSource {
  readonly repoURL: string;
  readonly chart: string;
  readonly targetRevision: string;
  /**
   * Its position in `spec.sources` (and so in `status.sync.revisions`).
   * @default - undefined: the Application has the single `spec.source`
   */
  readonly index?: number;
}

/** Where a Helm source is in the Application's spec: `spec.source` or `spec.sources[<i>]`. */
export function helmSourceField(source: HelmSource): string {
  return source.index === undefined ? 'spec.source' : `spec.sources[${source.index}]`;
}

/**
 * The Helm chart an Application installs: `spec.source` with a `chart`, or the one source of
 * `spec.sources` with a `chart` (its other sources, such as the Secrets from git through a
 * plugin, are left as they are). Argo CD reads `sources` whenever it is not empty and a source
 * with a `chart` as Helm (argo-cd v3.6.1 pkg/apis/application/v1alpha1/types.go,
 * ApplicationSpec.HasMultipleSources, ApplicationSource.IsHelm). Undefined when there is none;
 * refused when several sources are charts (which one the package level means is not known).
 */
export function helmSource(app: LiveObject): HelmSource | undefined {
  const spec = app['spec'] ?? {};
  const sources = (spec.sources ?? []) as any[];
  const found = (source: any, index?: number): HelmSource => ({
    repoURL: String(source.repoURL),
    chart: String(source.chart),
    targetRevision: String(source.targetRevision),
    ...(index === undefined ? {} : { index }),
  });
  if (sources.length === 0) return spec.source?.chart === undefined ? undefined : found(spec.source);
  const charts = sources.flatMap((source, index) => (source?.chart === undefined ? [] : [index]));
  if (charts.length > 1) {
    throw new RefusedError(`Application ${app.metadata.name} installs ${charts.length} Helm charts (${charts.map((index) => `spec.sources[${index}]`).join(', ')}): which chart version to set is not known`);
  }
  return charts.length === 0 ? undefined : found(sources[charts[0]!], charts[0]);
}

/**
 * The revision Argo CD last compared a Helm chart's Application at, which for a Helm source is
 * its chart version: `status.sync.revision` for a single source, `status.sync.revisions[<i>]`
 * at the Helm source's position for several (argo-cd v3.6.1 pkg/apis/application/v1alpha1/types.go,
 * SyncStatus; controller/state.go, CompareAppState). Empty before the first comparison.
 */
export function chartRevision(app: LiveObject, source: HelmSource): string {
  const sync = app['status']?.sync ?? {};
  return String((source.index === undefined ? sync.revision : sync.revisions?.[source.index]) ?? '');
}

/**
 * Point a Helm chart's Application at another chart version, as `argocd app set --revision`
 * (with `--source-position <i + 1>`, 1-based, for one of several sources) does; the next sync installs it. A single source
 * is merge-patched (`spec.source.targetRevision`); one of several is JSON-patched at its
 * position, after a test that the position still holds that chart (a merge patch would replace
 * the whole list). Refused for an Application without a Helm source.
 */
export async function setChartVersion(cluster: ClusterConnection, namespace: string, app: LiveObject, version: string): Promise<void> {
  const source = helmSource(app);
  if (source === undefined) throw new RefusedError(`Application ${app.metadata.name} does not install a Helm chart (spec.source.chart or spec.sources[].chart): its chart version cannot be set`);
  if (source.index === undefined) {
    await cluster.mergePatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, app.metadata.name, namespace, { spec: { source: { targetRevision: version } } });
    return;
  }
  await cluster.jsonPatch(APPLICATION_API.apiVersion, APPLICATION_API.kind, app.metadata.name, namespace, [
    { op: 'test', path: `/spec/sources/${source.index}/chart`, value: source.chart },
    { op: 'replace', path: `/spec/sources/${source.index}/targetRevision`, value: version },
  ]);
}

/** The live objects Argo CD reports as not in the synced revision, which a sync with prune deletes (`status.resources[].requiresPruning`). */
export function resourcesToPrune(app: LiveObject): string[] {
  return ((app['status']?.resources ?? []) as any[]).filter((resource) => resource.requiresPruning === true).map((resource) => resourceId(resource.kind, resource.name, resource.namespace));
}

/**
 * Whether an Application's health was assessed after its last operation ended: its
 * `reconciledAt` is later than the operation's `finishedAt` (both whole seconds, so a
 * comparison in the same second does not count). A sync without hooks or waves ends as soon
 * as its objects are applied, and the health Argo CD shows until its next comparison is the
 * one from before the objects changed (a Deployment still Healthy before its rollout).
 */
export function assessedAfterOperation(app: LiveObject): boolean {
  const finishedAt = Date.parse(String(app['status']?.operationState?.finishedAt ?? ''));
  if (!Number.isFinite(finishedAt)) return app['status']?.operationState === undefined;
  const reconciledAt = Date.parse(String(app['status']?.reconciledAt ?? ''));
  return Number.isFinite(reconciledAt) && reconciledAt > finishedAt;
}

/**
 * Wait until a Helm chart's Application is Healthy and compared at chart version `revision`
 * (chartRevision: its Helm source's revision), as Argo CD assessed it after its last
 * operation ended (assessedAfterOperation): the objects of that version are in place and have
 * become healthy.
 */
export async function waitForHealthy(cluster: ClusterConnection, namespace: string, name: string, revision: string, timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult> {
  return waitFor({
    what: `health of Application ${name} at ${revision}`,
    timeoutSeconds,
    progress,
    check: async () => {
      const app = await readApplication(cluster, namespace, name);
      const source = helmSource(app);
      const compared = source === undefined ? '' : chartRevision(app, source);
      const state = applicationState(app, name, waveOf(app));
      const assessed = assessedAfterOperation(app);
      return {
        done: state.health === 'Healthy' && compared === revision && assessed,
        state: `${state.health}${assessed ? '' : ' (not assessed since the sync ended)'}, ${state.sync} at ${compared || '-'}${state.message ? `: ${state.message}` : ''}`,
      };
    },
  });
}

/**
 * Roll an Application back to an entry of its history, as Argo CD's own rollback does (argo-cd
 * v3.6.1 server/application/application.go, Server.Rollback): refused while automated sync is
 * enabled (self-heal would undo it), otherwise a sync operation to the entry's revisions and
 * sources, with the Application's sync options. Returns the request id waitForSync follows.
 */
export async function startRollback(cluster: ClusterConnection, namespace: string, name: string, id: number, request: SyncRequest): Promise<string> {
  return setOperation(cluster, namespace, name, (app) => {
    if (app.metadata['deletionTimestamp'] !== undefined) throw new RefusedError(`Application ${name} is being deleted`);
    if (automatedSyncEnabled(app)) throw new RefusedError(`Application ${name}: rollback cannot be initiated when auto-sync is enabled (Argo CD's rule): pause it first`);
    const entry = ((app['status']?.history ?? []) as any[]).find((candidate) => Number(candidate.id) === id);
    if (entry === undefined) {
      throw new RefusedError(`Application ${name} has no history entry ${id} (its entries: ${applicationHistory(app).map((e) => e.id).join(', ') || 'none'})`);
    }
    if (entry.source === undefined && entry.sources === undefined) throw new RefusedError(`Application ${name}: history entry ${id} records no source; sync to its revision instead`);
    const syncOptions = app['spec']?.syncPolicy?.syncOptions;
    return {
      initiatedBy: { username: request.by },
      info: [{ name: 'Reason', value: `rollback to history ${id}` }],
      sync: {
        ...(entry.revision === undefined ? {} : { revision: entry.revision }),
        ...(entry.revisions === undefined ? {} : { revisions: entry.revisions }),
        ...(entry.source === undefined ? {} : { source: entry.source }),
        ...(entry.sources === undefined ? {} : { sources: entry.sources }),
        prune: request.prune ?? false,
        ...(syncOptions === undefined ? {} : { syncOptions }),
        syncStrategy: { apply: { force: request.force ?? false } },
      },
    };
  });
}
