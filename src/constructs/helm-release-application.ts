import type { Construct } from 'constructs';
import type { HelmChartRef } from '../chart-versions';
import { SYNC_WAVE_ANNOTATION } from '../constants';
import { Application, type ApplicationSpecIgnoreDifferences } from '../imports/application-argoproj.io';
import { IN_CLUSTER, syncPolicy } from '../argocd/sync-policy';
import { namespacePodSecurity } from '../pod-security';

export interface HelmReleaseApplicationProps {
  /** Application name; also the Helm release name. */
  readonly name: string;
  /** Namespace of Argo CD, where the Application object lives. */
  readonly controllerNamespace: string;
  /** The AppProject the Application belongs to. */
  readonly project: string;
  /** The upstream chart at its pinned version (src/chart-versions.ts). */
  readonly chart: HelmChartRef;
  /** Namespace the release installs into; Argo CD creates it on install. */
  readonly namespace: string;
  /** Helm values, rendered inline so a reviewer reads them in dist/. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Sync wave: lower waves are synced, and healthy, first (1.3.4). */
  readonly syncWave: number;
  /** Sync automatically with prune and self-heal (live environments). */
  readonly automated: boolean;
  /**
   * Further Argo CD sync options, e.g. `ServerSideApply=true` for charts whose CRDs are
   * too large for a client-side apply annotation.
   * @default - CreateNamespace=true only
   */
  readonly syncOptions?: readonly string[];
  /**
   * Fields of the chart's objects Argo CD does not compare, each with the upstream reason
   * in a comment where it is set.
   * @default - none
   */
  readonly ignoreDifferences?: readonly ApplicationSpecIgnoreDifferences[];
}

/**
 * An Argo CD Application that installs one upstream Helm chart at an exact version into
 * its own namespace (created on install), in its sync wave, with the platform's sync
 * policy (retries bounded by 300 s).
 */
export class HelmReleaseApplication extends Application {
  /** The Helm release (and Application) name. */
  public readonly releaseName: string;
  /** The sync wave of the release. */
  public readonly syncWave: number;

  constructor(scope: Construct, id: string, props: HelmReleaseApplicationProps) {
    const syncOptions = ['CreateNamespace=true', ...(props.syncOptions ?? [])];
    super(scope, id, {
      metadata: {
        name: props.name,
        namespace: props.controllerNamespace,
        annotations: { [SYNC_WAVE_ANNOTATION]: String(props.syncWave) },
      },
      spec: {
        project: props.project,
        source: {
          repoUrl: props.chart.repoURL,
          chart: props.chart.chart,
          targetRevision: props.chart.version,
          helm: { releaseName: props.name, valuesObject: props.values },
        },
        destination: { server: IN_CLUSTER, namespace: props.namespace },
        // The namespace Argo CD creates carries its Pod Security labels (src/pod-security.ts).
        syncPolicy: syncPolicy({ automated: props.automated, syncOptions, namespaceLabels: namespacePodSecurity(props.namespace) }),
        ...(props.ignoreDifferences ? { ignoreDifferences: [...props.ignoreDifferences] } : {}),
      },
    });
    this.releaseName = props.name;
    this.syncWave = props.syncWave;
  }
}
