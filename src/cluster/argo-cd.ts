import { RefusedError } from '../base/errors';
import { compareText } from '../base/text-order';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import type { ClusterConnection, LiveObject } from './connection';
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

/** A text on one line, its runs of white space one space each. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The sync wave Argo CD orders the Application by. */
export function waveOf(app: LiveObject | undefined, fallback = 0): number {
  return Number(app?.metadata.annotations?.[SYNC_WAVE_ANNOTATION] ?? fallback);
}

/** Who started an operation (an Application's `operation` or `status.operationState.operation`): `automated`, or the person's name. */
export function starterOf(operation: { initiatedBy?: { automated?: boolean; username?: string } } | undefined): string {
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
export function operationRequested(app: LiveObject): boolean {
  return app['operation'] !== undefined && app['operation'] !== null;
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
export function refreshRequest(): Record<string, string> {
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
export async function comparedSinceRequest(cluster: ClusterConnection, namespace: string, app: LiveObject): Promise<boolean> {
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
