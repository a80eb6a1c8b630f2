import { RefusedError } from '../base/errors';
import { APPLICATION_API } from './argo-cd';
import type { ClusterConnection, LiveObject } from './connection';

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
