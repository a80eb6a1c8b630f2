import { SYNC_PAUSE_ANNOTATIONS } from '../contract/choices';
import { TRACKING_ANNOTATION } from '../contract/upstream';
import { APPLICATION_API, comparedSinceRequest, oneLine, operationRequested, operationRuns, readApplication, refreshRequest, starterOf } from './argo-cd';
import { type ClusterConnection, ClusterRefusal, type LiveObject } from './connection';
import { type WaitResult, waitFor } from './wait';

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
