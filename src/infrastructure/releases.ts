import { type ArgoCdSettings, argoCdValues } from './argo-cd-values';
import { ARGO_CD_RELEASE } from './argo-cd-release';
import { orderedSyncSeconds } from './ordered-sync';
import { INFRASTRUCTURE_NAMESPACES, SYNC_WAVES } from '../contract/choices';
import type { Environment } from '../environments';
import type { ReleaseName } from '../contract/release-versions';
import type { Platform } from '../environments/platform';
import { INFRASTRUCTURE_RELEASE_NAMES } from '../contract/naming';
import { manifestsPath } from '../contract/layout';
import type { ApplicationSpecIgnoreDifferences } from '../imports/application-argoproj.io';
import {
  certManagerValues,
  envoyGatewayValues,
  flaggerLoadTesterValues,
  flaggerValues,
  gatewayApiCrdsValues,
  kubePrometheusStackValues,
  strimziOperatorValues,
} from './helm-values';

/**
 * The infrastructure releases of the platform: one row per upstream Helm chart, pinned to one
 * exact chart version (9.2: infrastructure chart upgrades name an explicit chart version).
 * The one place to change a version, a namespace or a wave: the infrastructure chart renders
 * an Argo CD Application per row (src/charts/infrastructure-chart.ts), the Pulumi bootstrap
 * installs Argo CD from its row, the infrastructure AppProject allows the rows' repositories,
 * and a test keeps the table of docs/infrastructure.md equal to this one. An upgrade is a reviewed commit here;
 * `npm run synth` then renders the new `targetRevision` into dist/.
 *
 * Where a CRD of the project is kept in schemas/crds/, the chart is the release those
 * schemas come from (schemas/crds/SOURCES.md), so the cluster's CRDs and the tests'
 * schemas stay one release.
 */

/** An upstream Helm chart at one exact version. */
export interface HelmChartRef {
  /**
   * Helm repository URL (what `helm repo add` takes), or for an OCI chart the registry and
   * path without `oci://` (`docker.io/envoyproxy`), as Argo CD's Helm source wants it.
   */
  readonly repoURL: string;
  /** Chart name inside the repository. */
  readonly chart: string;
  /** Exact chart version: no range, no `latest`. */
  readonly version: string;
}

/**
 * An upstream project's own release manifests at one git tag, installed with kustomize: the
 * program renders a kustomization per environment (dist/<environment>/<release name>/) whose
 * remote base is the tag's folder, with the platform's settings as patches.
 */
export interface ReleaseManifestsRef {
  /** Git repository (https) of the upstream project, as a kustomize remote base names it. */
  readonly repoURL: string;
  /** Folder of the release's kustomization in the repository, by install variant. */
  readonly paths: { readonly standard: string; readonly highAvailability: string };
  /** Exact git tag: no branch, no `latest`. */
  readonly version: string;
}

/** What a release's values and namespace may depend on: the validated environment and platform. */
export interface ReleaseContext {
  /** The validated environment being rendered. */
  readonly environment: Environment;
  /** Platform-wide settings (Argo CD's namespace). */
  readonly platform: Platform;
}

/** What every infrastructure release says: its name, namespace, wave and how Argo CD syncs it. */
interface ReleaseRow {
  /** Helm release name, also the name of the Argo CD Application that installs it. */
  readonly name: string;
  /**
   * Namespace the release installs into (the infrastructure chart renders it; argocd is the
   * bootstrap's), or how the environment or platform decides it.
   */
  readonly namespace: string | ((context: ReleaseContext) => string);
  /** Sync wave: lower waves are synced, and healthy, first (1.3.4). */
  readonly syncWave: number;
  /**
   * Argo CD sync options, each with its reason.
   * @default - none
   */
  readonly syncOptions?: readonly string[];
  /**
   * Fields of the chart's objects Argo CD does not compare, each with its upstream reason.
   * @default - none
   */
  readonly ignoreDifferences?: readonly ApplicationSpecIgnoreDifferences[];
  /**
   * Synced by an operator after review, never automatically, in every environment
   * (OPERATOR_SYNC_ANNOTATION), with the reason where it is set.
   * @default false
   */
  readonly syncedByOperator?: boolean;
}

/** A release of an upstream Helm chart at its pinned version, with the platform's values. */
export interface HelmRelease extends ReleaseRow {
  /** The upstream chart at its exact version. */
  readonly chart: HelmChartRef;
  /** Helm values, from the values builders of src/infrastructure/helm-values.ts. */
  readonly values: (context: ReleaseContext) => Record<string, unknown>;
}

/**
 * A release installed from its upstream's own manifests at a pinned tag (kustomize), the
 * platform's settings as patches (src/infrastructure/argo-cd-kustomization.ts for Argo CD).
 */
export interface ManifestsRelease extends ReleaseRow {
  /** The upstream manifests at their exact tag. */
  readonly manifests: ReleaseManifestsRef;
}

/** One infrastructure release: a pinned chart or pinned release manifests, where and when it is installed. */
export type InfrastructureRelease = HelmRelease | ManifestsRelease;

/** Whether a release installs a Helm chart (else its upstream's release manifests). */
export function isHelmRelease(release: InfrastructureRelease): release is HelmRelease {
  return 'chart' in release;
}

/**
 * Strimzi 1.2's `kafkas` CRD declares `status.clusterSecurity.properties: {}`, which the
 * API server drops when it stores the CRD (strimzi/strimzi-kafka-operator issue 13074):
 * compared with the chart, the CRD is OutOfSync for ever, the Application re-applies it on
 * every self-heal and its parent never finishes its wave (seen on the e2e cluster).
 */
export const STRIMZI_KAFKA_CRD_PRUNED_FIELD: ApplicationSpecIgnoreDifferences = {
  group: 'apiextensions.k8s.io',
  kind: 'CustomResourceDefinition',
  name: 'kafkas.kafka.strimzi.io',
  jqPathExpressions: ['.spec.versions[].schema.openAPIV3Schema.properties.status.properties.clusterSecurity.properties'],
};

/**
 * Each row's `chart.version` is the newest version the table supports (./release-versions.ts
 * lists every supported version with its facts); which one an environment runs is its values'
 * choice (`infrastructure.versions`), read through `releaseIn`.
 *
 * The releases, in sync order (1.3 step 4: the certificate manager, the ingress controller,
 * Argo CD itself, then the rest). Custom resources of these charts live in later
 * Applications (the issuers chart first), never beside the Application that installs their CRDs.
 */
const RELEASES = {
  /**
   * Envoy Gateway's CRDs-only chart v1.9.1: the Gateway API v1.6.1 standard CRDs (the version
   * Envoy Gateway v1.9.1 is built against, its go.mod) and Envoy Gateway's own (CRD schemas:
   * gatewayapi-*.yaml, envoygateway-*.yaml). An OCI chart: Argo CD's Helm-over-OCI source takes
   * the registry path without `oci://` as repoURL and the chart name apart (argo-cd v3.5.1
   * docs/user-guide/helm.md; util/helm/client.go `IsHelmOciRepo`: a URL without a scheme is OCI).
   * Before cert-manager, which looks for the Gateway API CRDs when it starts.
   */
  gatewayApiCrds: {
    name: INFRASTRUCTURE_RELEASE_NAMES.gatewayApiCrds,
    chart: { repoURL: 'docker.io/envoyproxy', chart: 'gateway-crds-helm', version: 'v1.9.1' },
    namespace: INFRASTRUCTURE_NAMESPACES.ingressController,
    syncWave: SYNC_WAVES.gatewayApiCrds,
    values: () => gatewayApiCrdsValues(),
    // The CRDs (Envoy Gateway's EnvoyProxy is 1.4 MB) exceed a client-side apply's annotation.
    syncOptions: ['ServerSideApply=true'],
  },
  /**
   * cert-manager v1.21.2 (CRD schemas: certmanager-*.yaml, unchanged from v1.21.1). Jetstack's
   * versions carry a `v`. v1.21.2 fixes controller and webhook panics and data races, stops the
   * ACME issuer copying untrusted response bodies into status and Events, and moves to Go
   * 1.26.8 for reported CVEs; it changes no value or CRD the platform uses (its release notes).
   */
  certManager: {
    name: INFRASTRUCTURE_RELEASE_NAMES.certManager,
    chart: { repoURL: 'https://charts.jetstack.io', chart: 'cert-manager', version: 'v1.21.2' },
    namespace: INFRASTRUCTURE_NAMESPACES.certificateManager,
    syncWave: SYNC_WAVES.certificateManager,
    values: () => certManagerValues(),
  },
  /**
   * Envoy Gateway v1.9.1 (`oci://docker.io/envoyproxy/gateway-helm`), the Gateway API
   * controller. v1.9.1's breaking changes (release-notes/v1.9.1.yaml: the SDS/RDS initial
   * timeout back to 15 s, metric histogram buckets, no plain-HTTP OIDC issuer, HTTPS-only Wasm
   * pulls) touch nothing the platform renders or sets.
   */
  envoyGateway: {
    name: INFRASTRUCTURE_RELEASE_NAMES.envoyGateway,
    chart: { repoURL: 'docker.io/envoyproxy', chart: 'gateway-helm', version: 'v1.9.1' },
    namespace: INFRASTRUCTURE_NAMESPACES.ingressController,
    syncWave: SYNC_WAVES.ingressController,
    values: () => envoyGatewayValues(),
  },
  /**
   * Argo CD from its own release manifests (`manifests/cluster-install`, or `ha/cluster-install`
   * where the environment asks for high availability) at the tag the e2e builds and runs
   * (ARGO_CD_RELEASE; CRD schemas: argocd-*.yaml of the same tag), the platform's settings as
   * kustomize patches rendered into dist/<environment>/argocd/ (argo-cd-kustomization.ts).
   * Self-managed: the Pulumi bootstrap applies this kustomization once, and this Application
   * keeps Argo CD in step with git, when an operator syncs it. Never automatically: Argo CD
   * carries the sops plugin, which runs beside the age key, so a commit that changed its
   * script (say, to post the key file somewhere) would otherwise run there in local, testing
   * and staging without anyone's action. Changing Argo CD is a reviewed commit, then an
   * operator's `argocd app sync argocd`.
   */
  argoCd: {
    name: INFRASTRUCTURE_RELEASE_NAMES.argoCd,
    manifests: {
      repoURL: ARGO_CD_RELEASE.repoURL,
      paths: { standard: 'manifests/cluster-install', highAvailability: 'manifests/ha/cluster-install' },
      version: ARGO_CD_RELEASE.version,
    },
    namespace: ({ platform }) => platform.controller.namespace,
    syncWave: SYNC_WAVES.controller,
    // The ApplicationSet CRD (1.5 MB) exceeds a client-side apply's annotation: upstream
    // installs with `kubectl apply --server-side` (v3.6.1 docs/operator-manual/installation.md).
    syncOptions: ['ServerSideApply=true'],
    syncedByOperator: true,
  },
  /**
   * kube-prometheus-stack 88.5.3, prometheus-operator v0.93.1 (CRD schemas: v0.93.1): the newest
   * chart the project can read, so the one it tests. No chart repository is reachable here, the
   * chart is no Go module, and the newest stored snapshot of prometheus-community/helm-charts
   * (cf408a290aec, 2026-08-22) holds 88.5.3; the e2e's stand-in follows its templates and values
   * (e2e/stand-in-monitoring-stack.ts) and the toolchain builds its operator (toolchain/build.sh).
   * Every value the platform sets is a key of its values.yaml (helm-values.ts).
   *
   * 91.x comes back when its chart can be read (its stand-in, CRD schemas and operator then move
   * with it). What 89 to 91 change, from the chart's UPGRADE.md and release notes: 89.0 moves
   * the grafana subchart to 13 (disabled here); 90.0 makes the control-plane ServiceMonitors
   * read their token from a `<prometheus ServiceAccount>-token` Secret the chart creates, removes
   * `bearerTokenFile`, `insecureSkipVerify`, `serverName` and `caSecret` there, and refuses to
   * render with `prometheus.enabled` or `prometheus.serviceAccount.create` false (the values set
   * none of these and keep both on); 91.0 is prometheus-operator v0.94 (no wildcard verbs in its
   * ClusterRole; CRDs with new optional fields, the same kinds, versions and storage versions),
   * which ServerSideApply applies. None renames or removes a value the platform sets.
   */
  kubePrometheusStack: {
    name: INFRASTRUCTURE_RELEASE_NAMES.kubePrometheusStack,
    chart: { repoURL: 'https://prometheus-community.github.io/helm-charts', chart: 'kube-prometheus-stack', version: '88.5.3' },
    namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
    syncWave: SYNC_WAVES.monitoringStack,
    values: ({ environment }) => kubePrometheusStackValues(environment),
    // Its CRDs are larger than the last-applied annotation a client-side apply writes.
    syncOptions: ['ServerSideApply=true'],
  },
  /** Flagger 1.44.0 (CRD schemas: flagger-*.yaml). */
  flagger: {
    name: INFRASTRUCTURE_RELEASE_NAMES.flagger,
    chart: { repoURL: 'https://flagger.app', chart: 'flagger', version: '1.44.0' },
    namespace: INFRASTRUCTURE_NAMESPACES.progressiveDelivery,
    syncWave: SYNC_WAVES.progressiveDelivery,
    values: () => flaggerValues(),
  },
  /** Flagger's load tester, the chart released with Flagger 1.44.0; the canary's webhooks call its Service. */
  flaggerLoadTester: {
    name: INFRASTRUCTURE_RELEASE_NAMES.flaggerLoadTester,
    chart: { repoURL: 'https://flagger.app', chart: 'loadtester', version: '0.38.0' },
    namespace: INFRASTRUCTURE_NAMESPACES.progressiveDelivery,
    syncWave: SYNC_WAVES.loadTester,
    values: () => flaggerLoadTesterValues(),
  },
  /**
   * Strimzi 1.2.0, the release of the CRD schemas strimzi-*.yaml (kafka.strimzi.io/v1, KRaft
   * only). 1.3 step 6: the operator first (ready within 300 s), in the cluster's namespace,
   * which it watches; the broker chart's Kafka follows in a later child Application.
   */
  strimziOperator: {
    name: INFRASTRUCTURE_RELEASE_NAMES.strimziOperator,
    chart: { repoURL: 'https://strimzi.io/charts/', chart: 'strimzi-kafka-operator', version: '1.2.0' },
    namespace: ({ environment }) => environment.broker.namespace,
    syncWave: SYNC_WAVES.brokerOperator,
    values: () => strimziOperatorValues(),
    ignoreDifferences: [STRIMZI_KAFKA_CRD_PRUNED_FIELD],
  },
} satisfies { readonly [key in keyof typeof INFRASTRUCTURE_RELEASE_NAMES]: InfrastructureRelease };

/** The table, each row read as the release it is: Argo CD's from its manifests, the others' Helm charts. */
export const INFRASTRUCTURE_RELEASES: { readonly [key in keyof typeof RELEASES]: key extends 'argoCd' ? ManifestsRelease : HelmRelease } = RELEASES;

/** The rows of INFRASTRUCTURE_RELEASES, in sync order. */
export const RELEASE_ROWS: readonly InfrastructureRelease[] = Object.values(INFRASTRUCTURE_RELEASES);

/** The rows that install a Helm chart, in sync order. */
export const HELM_RELEASE_ROWS: readonly HelmRelease[] = RELEASE_ROWS.filter(isHelmRelease);

/**
 * The platform's settings of Argo CD, which the kustomization's patches carry to the
 * bootstrap's first install and to the `argocd` Application alike: Argo CD ends no sync
 * before the root has walked every release.
 */
export function argoCdReleaseValues(): ArgoCdSettings {
  return argoCdValues({ syncTimeoutSeconds: orderedSyncSeconds(RELEASE_ROWS) });
}

/** The namespace a release installs into, in this environment. */
export function releaseNamespace(release: InfrastructureRelease, context: ReleaseContext): string {
  return typeof release.namespace === 'string' ? release.namespace : release.namespace(context);
}

/**
 * Where synth renders a manifests release's kustomization in the repository, the path its
 * Application follows: `dist/<environment>/<release name>`.
 */
export function releaseKustomizationPath(environment: string, release: ManifestsRelease): string {
  return `${manifestsPath(environment)}/${release.name}`;
}

/** A release's version: its chart's version, or its release manifests' tag. */
export function releaseVersion(release: InfrastructureRelease): string {
  return isHelmRelease(release) ? release.chart.version : release.manifests.version;
}

/**
 * The release as `environment` runs it: its chart at the version, or its manifests at the tag,
 * the environment's values name (`infrastructure.versions.<release name>`, one the table knows:
 * the schema checks it).
 */
export function releaseIn(release: InfrastructureRelease, environment: Environment): InfrastructureRelease {
  const version = environment.infrastructure.versions[release.name as ReleaseName];
  if (version === undefined) return release;
  return isHelmRelease(release) ? { ...release, chart: { ...release.chart, version } } : { ...release, manifests: { ...release.manifests, version } };
}
