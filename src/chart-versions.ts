/**
 * Every upstream Helm chart the platform installs, pinned to one exact chart version
 * (9.2: infrastructure chart upgrades name an explicit chart version). The one place to
 * change a version: the infrastructure chart's Argo CD Applications and the Pulumi
 * bootstrap both read it. An upgrade is a reviewed commit here; `npm run synth` then
 * renders the new `targetRevision` into dist/.
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

export const HELM_CHARTS = {
  /** cert-manager v1.21.1 (CRD schemas: certmanager-*.yaml). Jetstack's versions carry a `v`. */
  certManager: { repoURL: 'https://charts.jetstack.io', chart: 'cert-manager', version: 'v1.21.1' },
  /**
   * Envoy Gateway's CRDs-only chart v1.9.0: the Gateway API v1.6.1 standard CRDs (the version
   * Envoy Gateway v1.9.0 is built against) and Envoy Gateway's own (CRD schemas:
   * gatewayapi-*.yaml, envoygateway-*.yaml). An OCI chart: Argo CD's Helm-over-OCI source takes
   * the registry path without `oci://` as repoURL and the chart name apart (argo-cd v3.5.1
   * docs/user-guide/helm.md; util/helm/client.go `IsHelmOciRepo`: a URL without a scheme is OCI).
   */
  gatewayApiCrds: { repoURL: 'docker.io/envoyproxy', chart: 'gateway-crds-helm', version: 'v1.9.0' },
  /** Envoy Gateway v1.9.0 (`oci://docker.io/envoyproxy/gateway-helm`), the Gateway API controller. */
  envoyGateway: { repoURL: 'docker.io/envoyproxy', chart: 'gateway-helm', version: 'v1.9.0' },
  /** argo-helm's argo-cd chart 10.3.3, appVersion v3.5.1 (CRD schemas: argocd-*.yaml). */
  argoCd: { repoURL: 'https://argoproj.github.io/argo-helm', chart: 'argo-cd', version: '10.3.3' },
  /** Flagger 1.44.0 (CRD schemas: flagger-*.yaml). */
  flagger: { repoURL: 'https://flagger.app', chart: 'flagger', version: '1.44.0' },
  /** Flagger's load tester, the chart released with Flagger 1.44.0. */
  flaggerLoadTester: { repoURL: 'https://flagger.app', chart: 'loadtester', version: '0.38.0' },
  /** kube-prometheus-stack 88.5.3, prometheus-operator v0.93.1 (CRD schemas: v0.93.0, same minor). */
  kubePrometheusStack: {
    repoURL: 'https://prometheus-community.github.io/helm-charts',
    chart: 'kube-prometheus-stack',
    version: '88.5.3',
  },
  /** Strimzi 1.2.0, the release of the CRD schemas strimzi-*.yaml (kafka.strimzi.io/v1, KRaft only). */
  strimziOperator: { repoURL: 'https://strimzi.io/charts/', chart: 'strimzi-kafka-operator', version: '1.2.0' },
} as const satisfies Record<string, HelmChartRef>;

export type HelmChartName = keyof typeof HELM_CHARTS;

/**
 * Container images the platform runs besides the application's own and the upstream charts',
 * pinned like the charts; each one its upstream publishes (convergence item 12: no rendered
 * image that nothing builds). The sops plugin's image is SOPS_PLUGIN.image (src/constants.ts).
 * - busybox (Docker official image): the smoke hook's HTTP steps (`wget`) and its last line.
 * - Strimzi's Kafka image, the one Strimzi 1.2.0 runs the brokers with by default
 *   (strimzi-kafka-operator 1.2.0 packaging/install/cluster-operator/
 *   060-Deployment-strimzi-cluster-operator.yaml): the smoke hook's broker step.
 */
export const TOOL_IMAGES = {
  busybox: 'busybox:1.36.1',
  strimziKafka: 'quay.io/strimzi/kafka:1.2.0-kafka-4.3.1',
} as const;
