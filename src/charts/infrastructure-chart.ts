import { ApiObject, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { INFRASTRUCTURE_NAMESPACES, SYNC_WAVES } from '../contract/choices';
import { LABELS } from '../contract/contract';
import { releaseProject } from '../contract/platform-charts';
import { namespacePodSecurity } from '../contract/security-context';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import { ArgoCdApplication } from '../constructs/argo-cd-application';
import { InfrastructureNetworkPolicies } from '../constructs/infrastructure-network-policies';
import { repositorySshPort } from '../environments/platform';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';
import { type InfrastructureRelease, RELEASE_ROWS, isHelmRelease, releaseIn, releaseKustomizationPath, releaseNamespace } from '../infrastructure/releases';
import type { ArgoCdApplicationSource } from '../constructs/argo-cd-application';

export interface InfrastructureChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
  /** Platform-wide settings (Argo CD namespace and project). */
  readonly platform: Platform;
}

/**
 * Where a release's Application reads it: the pinned chart with the platform's values, or the
 * kustomization synth renders for the environment in this repository (its remote base the
 * pinned release's manifests).
 */
function releaseSource(release: InfrastructureRelease, { environment, platform }: InfrastructureChartProps): ArgoCdApplicationSource {
  if (isHelmRelease(release)) return { kind: 'helm', chart: release.chart, releaseName: release.name, values: release.values({ environment, platform }) };
  return { kind: 'path', repoURL: platform.repository.url, targetRevision: platform.repository.targetRevision, path: releaseKustomizationPath(environment.name, release) };
}

/**
 * The infrastructure of one environment (1.3.4, 1.3.7): every namespace the platform uses,
 * the NetworkPolicies of the infrastructure's namespaces (src/constructs/infrastructure-network-policies.ts),
 * then an Argo CD Application per row of the infrastructure release table
 * (src/infrastructure/releases.ts), each upstream Helm chart at its pinned version in its
 * namespace and sync wave.
 *
 * The namespaces are Namespace objects here, each with its Pod Security labels, synced before
 * any release: the releases' (argocd excepted: the bootstrap creates and labels it), the
 * database's, the broker's and each application's. One owner per namespace, and that owner in
 * the infrastructure project: no Application creates one on install, and the application-level
 * project, which deploys into some of them, may create or relabel none.
 */
export class InfrastructureChart extends Chart {
  /** The namespaces, in the order below. */
  public readonly namespaces: readonly kplus.Namespace[];
  /** The Helm releases' Applications, in the order they are synced. */
  public readonly releases: readonly ArgoCdApplication[];

  constructor(scope: Construct, id: string, props: InfrastructureChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const context = { environment: props.environment, platform: props.platform };
    const { environment, platform } = props;

    // The releases' namespaces in sync order, then the database's, the broker's (the Strimzi
    // operator's too) and each application's (labelled with it, as its objects are).
    const labels = new Map<string, Record<string, string>>();
    for (const release of RELEASE_ROWS) labels.set(releaseNamespace(release, context), {});
    labels.set(environment.database.namespace, {});
    labels.set(environment.broker.namespace, {});
    for (const application of environment.applications) labels.set(application.namespace, { [LABELS.app]: application.name });
    labels.delete(platform.controller.namespace);
    this.namespaces = [...labels].map(([name, own]) => {
      const namespace = new kplus.Namespace(this, `namespace-${name}`, { metadata: { name, labels: { ...own, ...namespacePodSecurity(name) } } });
      ApiObject.of(namespace).metadata.addAnnotation(SYNC_WAVE_ANNOTATION, String(SYNC_WAVES.namespaces));
      return namespace;
    });

    // Default deny in each namespace of the infrastructure, argocd included, then what each
    // component needs, in the namespaces' wave: before any release starts a pod. (The database's,
    // the broker's and each application's namespace get theirs from their own chart.)
    new InfrastructureNetworkPolicies(this, 'network-policies', {
      namespaces: { ...INFRASTRUCTURE_NAMESPACES, controller: platform.controller.namespace },
      apiServerCidrs: environment.infrastructure.network.apiServerCidrs,
      nodeCidrs: environment.infrastructure.network.nodeCidrs,
      repositoryPort: repositorySshPort(platform.repository.url),
      applicationNamespaces: environment.applications.map((application) => application.namespace),
      acmeIssuer: environment.infrastructure.issuer.type === 'acme',
      argoCdHighAvailability: environment.infrastructure.argoCd.highAvailability,
      annotations: { [SYNC_WAVE_ANNOTATION]: String(SYNC_WAVES.namespaces) },
    });

    // Each chart at the version the environment's values name (infrastructure.versions).
    this.releases = RELEASE_ROWS.map((row) => releaseIn(row, environment)).map(
      (release) =>
        new ArgoCdApplication(this, release.name, {
          name: release.name,
          controllerNamespace: props.platform.controller.namespace,
          // Each release its own project: its source's repository and its namespace alone, with the
          // cluster-scoped kinds its manifests create (src/charts/gitops-chart.ts).
          project: releaseProject(release.name),
          sources: [releaseSource(release, props)],
          destinationNamespace: releaseNamespace(release, context),
          syncWave: release.syncWave,
          automated: props.environment.autoSync && release.syncedByOperator !== true,
          syncedByOperator: release.syncedByOperator === true,
          // Its namespace is one of the Namespace objects above, or argocd, the bootstrap's.
          createNamespace: false,
          syncOptions: release.syncOptions,
          ignoreDifferences: release.ignoreDifferences,
        }),
    );
  }
}
