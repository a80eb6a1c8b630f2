import { randomUUID } from 'node:crypto';
import { RefusedError } from '../base/errors';
import { applicationHistory } from './application-history';
import { applicationState, failedResults } from './application-state';
import { APPLICATION_API, oneLine, operationRequested, operationRuns, readApplication, starterOf, waveOf } from './argo-cd';
import { automatedSyncEnabled } from './argo-cd-pause';
import { type ClusterConnection, ClusterRefusal, type LiveObject, resourceId } from './connection';
import { chartRevision, helmSource } from './helm-source';
import { type WaitResult, waitFor } from './wait';

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
