import { RefusedError } from '../base/errors';
import type { LiveObject } from './connection';

/** One entry of an Application's sync history (`argocd app history`). */
export interface HistoryEntry {
  readonly id: number;
  /** The revision (the first source's, for several sources). */
  readonly revision: string;
  readonly deployedAt: string;
  readonly initiatedBy: string;
  /**
   * The chart version a Helm chart's entry deployed: its source's `targetRevision`, else its
   * revision (a Helm source's revision is the chart version); for several sources, the
   * revision at the Helm source's position.
   * @default - undefined: none of the entry's sources is a Helm chart
   */
  readonly chartVersion?: string;
  /** What the entry recorded it deployed, for a person reading the history: each source (`chart <name>` or `<repoURL> <path>`) with its revision. */
  readonly recorded: string;
}

/**
 * The chart version a history entry deployed. Argo CD records a single source's entry in
 * `source` and `revision`, several sources' in `sources` and `revisions`, one revision per
 * source in the same order (argo-cd v3.6.1 pkg/apis/application/v1alpha1/types.go,
 * RevisionHistory; controller/state.go, persistRevisionHistory).
 */
function chartVersionOf(entry: any, revision: string): string | undefined {
  const sources = (entry.sources ?? []) as any[];
  if (sources.length > 0) {
    const index = sources.findIndex((source) => source?.chart !== undefined);
    return index < 0 ? undefined : String(entry.revisions?.[index] ?? sources[index].targetRevision);
  }
  return entry.source?.chart === undefined ? undefined : String(entry.source.targetRevision ?? revision);
}

/** The Application's sync history, oldest first, as Argo CD records it in `status.history`. */
export function applicationHistory(app: LiveObject): HistoryEntry[] {
  return ((app['status']?.history ?? []) as any[]).map((entry) => {
    const revision = String(entry.revisions?.[0] ?? entry.revision ?? '');
    const chartVersion = chartVersionOf(entry, revision);
    return {
      id: Number(entry.id),
      revision,
      deployedAt: String(entry.deployedAt ?? ''),
      initiatedBy: entry.initiatedBy?.automated ? 'automated' : String(entry.initiatedBy?.username ?? ''),
      ...(chartVersion === undefined ? {} : { chartVersion }),
      recorded: recordedSources(entry),
    };
  });
}

/** A history entry's sources as recorded (`sources` and `revisions`, or `source` and `revision`), one phrase. */
function recordedSources(entry: any): string {
  const describe = (source: any, revision: unknown) => `${source?.chart !== undefined ? `chart ${source.chart}` : `${source?.repoURL ?? '?'} ${source?.path ?? ''}`.trim()} at ${String(revision ?? source?.targetRevision ?? '?')}`;
  const sources = (entry.sources ?? []) as any[];
  if (sources.length > 0) return sources.map((source, index) => describe(source, entry.revisions?.[index])).join(', ');
  if (entry.source !== undefined) return describe(entry.source, entry.revision);
  return `no source recorded (revisions ${JSON.stringify(entry.revisions ?? entry.revision ?? null)})`;
}

/**
 * The history entry a controller rollback goes back to: the one `id` names, else the newest
 * whose revision differs from the revision that runs (the newest entry's: what was synced
 * last), so a revision synced twice is not "rolled back" to itself. Refused, naming the
 * entries, when there is none.
 */
export function rollbackEntry(name: string, history: readonly HistoryEntry[], id: number | undefined): HistoryEntry {
  if (id !== undefined) {
    const named = history.find((entry) => entry.id === id);
    if (named === undefined) throw new RefusedError(`Application ${name} has no history entry ${id} (its entries: ${history.map((entry) => entry.id).join(', ') || 'none'})`);
    return named;
  }
  const running = history.at(-1);
  const earlier = history.filter((entry) => entry.revision !== running?.revision).at(-1);
  if (running === undefined || earlier === undefined) {
    throw new RefusedError(`Application ${name} has no history entry with another revision than the one that runs (${running === undefined ? 'no history' : running.revision.slice(0, 12)})`);
  }
  return earlier;
}
