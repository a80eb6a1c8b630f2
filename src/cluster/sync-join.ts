import { readApplication, operationInProgress } from './argo-cd';
import type { ClusterConnection, LiveObject } from './connection';
import { waitFor } from './wait';

/** What a sync operation already in progress left, once awaited (awaitOperationInProgress). */
export type JoinedOperation =
  /** None was in progress. */
  | { readonly joined: false }
  /** It was not over within the bound. */
  | { readonly joined: true; readonly ok: false; readonly reason: string }
  /**
   * It is over and Argo CD compared the Application since. `current` when it Succeeded at the
   * revision git names now and the Application is Synced: a sync of one's own would change
   * nothing; `why` says otherwise what it left to do.
   */
  | { readonly joined: true; readonly ok: true; readonly current: boolean; readonly why: string };

const firstRevision = (record: { readonly revision?: unknown; readonly revisions?: readonly unknown[] } | undefined): string => String(record?.revisions?.[0] ?? record?.revision ?? '');
const short = (revision: string): string => (/^[0-9a-f]{40}$/.test(revision) ? revision.slice(0, 7) : revision || '-');

/** Whether the operation that ended deployed what git names now, and why not. */
function outcome(app: LiveObject): { readonly current: boolean; readonly why: string } {
  const state = app['status']?.operationState ?? {};
  const deployed = firstRevision(state.syncResult);
  const named = firstRevision(app['status']?.sync);
  if (state.phase !== 'Succeeded') return { current: false, why: `it ended ${String(state.phase)}` };
  if (deployed !== named) return { current: false, why: `it deployed ${short(deployed)}, and git names ${short(named)} now` };
  if (app['status']?.sync?.status !== 'Synced') return { current: false, why: `it deployed ${short(deployed)}, and the Application is ${String(app['status']?.sync?.status ?? 'not compared')} since` };
  return { current: true, why: `it deployed ${short(deployed)}, the revision git names` };
}

/**
 * Await the sync operation in progress on Application `name`, if any (a person's, or automated
 * sync's right after a resume), as `argocd app wait` judges one in progress (operationInProgress:
 * requested, running, awaiting a retry, or ended and not compared since), within
 * `timeoutSeconds`; then what it left (JoinedOperation). A sync of one's own cannot start while
 * it runs (Argo CD refuses a second operation), and stopping it is not the caller's to decide.
 */
export async function awaitOperationInProgress(cluster: ClusterConnection, namespace: string, name: string, timeoutSeconds: number, progress: (line: string) => void): Promise<JoinedOperation> {
  const app = await readApplication(cluster, namespace, name);
  if (!operationInProgress(app)) return { joined: false };
  const started = app['operation'] ?? app['status']?.operationState?.operation;
  const by = started?.initiatedBy?.automated === true ? 'automated' : String(started?.initiatedBy?.username ?? 'unknown');
  progress(`ops sync: Application ${name} has a sync operation in progress (by ${by}): awaiting it`);
  let last = app;
  const waited = await waitFor({
    what: `the sync operation in progress on Application ${name}`,
    timeoutSeconds,
    progress,
    intervalSeconds: 1,
    check: async () => {
      last = await readApplication(cluster, namespace, name);
      const phase = String(last['status']?.operationState?.phase ?? 'requested');
      return { done: !operationInProgress(last), state: operationInProgress(last) ? phase : `${phase}, compared since` };
    },
  });
  if (!waited.ok) return { joined: true, ok: false, reason: waited.reason ?? waited.state };
  return { joined: true, ok: true, ...outcome(last) };
}
