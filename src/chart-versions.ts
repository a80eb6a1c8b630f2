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
  /** Helm repository URL (what `helm repo add` takes). */
  readonly repoURL: string;
  /** Chart name inside the repository. */
  readonly chart: string;
  /** Exact chart version: no range, no `latest`. */
  readonly version: string;
}

export const HELM_CHARTS = {
  /** cert-manager v1.21.1 (CRD schemas: certmanager-*.yaml). Jetstack's versions carry a `v`. */
  certManager: { repoURL: 'https://charts.jetstack.io', chart: 'cert-manager', version: 'v1.21.1' },
  /** ingress-nginx chart 4.15.1, controller v1.15.1. */
  ingressNginx: { repoURL: 'https://kubernetes.github.io/ingress-nginx', chart: 'ingress-nginx', version: '4.15.1' },
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
