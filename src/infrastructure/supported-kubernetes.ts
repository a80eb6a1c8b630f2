import { versionFacts } from '../contract/release-versions';
import { INFRASTRUCTURE_RELEASES } from './releases';

/**
 * The supported Kubernetes range: the minors that are supported upstream (not past their
 * end of life on the day the table was last reviewed) AND inside every pinned component's
 * tested range. README, "Supported stack", shows this table (a test keeps them equal); the
 * validation gate checks both ends (src/validation/schema-catalog.ts KUBERNETES_VERSIONS)
 * and the e2e cluster runs the newest (toolchain/build.sh KUBERNETES_VERSION), both tested
 * against `supportedKubernetesMinors()`.
 */

/**
 * End of life of each Kubernetes minor (kubernetes.io/releases/patch-releases, "Detailed
 * release history for active branches", as endoflife.date's products/kubernetes.md quotes it).
 */
export const KUBERNETES_END_OF_LIFE: Readonly<Record<string, string>> = {
  '1.33': '2026-06-28',
  '1.34': '2026-10-27',
  '1.35': '2027-02-28',
  '1.36': '2027-06-28',
  '1.37': '2027-10-28',
};

/**
 * The day this table was last checked against upstream: a minor is supported upstream when
 * its end of life is after it. A date, not the clock, so the range changes by a reviewed
 * commit (with the schemas and the e2e cluster), never by itself.
 */
export const SUPPORT_REVIEWED_ON = '2026-11-26';

/** Where a component's upstream says which Kubernetes minors it supports or tests. */
export interface ComponentSupport {
  /** The component, as the README names it. */
  readonly component: string;
  /** The pinned version (from the release table), as the README shows it. */
  readonly pinned: string;
  /** The minors its upstream tests or supports it on, or the oldest it supports (`from`). */
  readonly minors: readonly string[] | { readonly from: string };
  /**
   * What upstream publishes, in words, for the README, where it says more than the minors.
   * @default - the minors, comma-separated (`<from> and later` for a minimum)
   */
  readonly statement?: string;
  /** The upstream file it is read from, at the pinned release. */
  readonly source: string;
}

const { argoCd, certManager, envoyGateway, flagger, flaggerLoadTester, strimziOperator, kubePrometheusStack } = INFRASTRUCTURE_RELEASES;

/** The prometheus-operator release the pinned kube-prometheus-stack runs: the tag of its controller image (the release table's). */
const PROMETHEUS_OPERATOR = versionFacts(kubePrometheusStack.name, kubePrometheusStack.chart.version)!.controllerImage!.split(':').at(-1)!;

export const COMPONENT_SUPPORT: readonly ComponentSupport[] = [
  {
    component: 'Argo CD',
    pinned: `${argoCd.manifests.version} (its release manifests)`,
    minors: ['1.34', '1.35', '1.36', '1.37'],
    source: `argoproj/argo-cd ${argoCd.manifests.version}, \`docs/operator-manual/tested-kubernetes-versions.md\``,
  },
  {
    component: 'cert-manager',
    pinned: certManager.chart.version,
    minors: ['1.33', '1.34', '1.35', '1.36'],
    source: 'cert-manager website, `content/docs/releases/README.md` (supported releases, 1.21)',
  },
  {
    component: 'Envoy Gateway (Gateway API v1.6.1)',
    pinned: envoyGateway.chart.version,
    minors: ['1.33', '1.34', '1.35', '1.36'],
    source: 'envoyproxy/gateway v1.9.1, `site/content/en/news/releases/matrix.md`, `.github/workflows/build_and_test.yaml`',
  },
  {
    component: 'Flagger',
    pinned: `${flagger.chart.version} (loadtester chart ${flaggerLoadTester.chart.version})`,
    minors: ['1.35', '1.36'],
    statement: '1.36 supported ("Kubernetes 1.36 support"), its end-to-end suite on 1.35; no range published',
    source: 'fluxcd/flagger v1.44.0, `CHANGELOG.md`, `.github/workflows/e2e.yaml`',
  },
  {
    component: 'Strimzi',
    pinned: strimziOperator.chart.version,
    minors: { from: '1.30' },
    statement: '1.30 and later; CI on 1.30 (oldest) and 1.35 (latest)',
    source: 'strimzi/strimzi-kafka-operator 1.2.0, `documentation/shared/attributes.adoc`, `.azure/scripts/setup-kind.sh`',
  },
  {
    component: 'kube-prometheus-stack',
    pinned: `${kubePrometheusStack.chart.version} (prometheus-operator ${PROMETHEUS_OPERATOR})`,
    minors: { from: '1.25' },
    statement: '1.25 and later; end-to-end tests on 1.36 (client-go v0.36)',
    source: `prometheus-operator/prometheus-operator ${PROMETHEUS_OPERATOR}, \`Documentation/getting-started/compatibility.md\`, \`.github/env\``,
  },
];

/** `1.35` as numbers, for ordering minors. */
function minorNumber(minor: string): number {
  const [major, rest] = minor.split('.');
  return Number(major) * 1000 + Number(rest);
}

/** Whether a component's upstream supports `minor`. */
function supports(support: ComponentSupport, minor: string): boolean {
  return Array.isArray(support.minors) ? support.minors.includes(minor) : minorNumber(minor) >= minorNumber((support.minors as { from: string }).from);
}

/** The supported minors, oldest first: supported upstream on SUPPORT_REVIEWED_ON and by every component. */
export function supportedKubernetesMinors(): string[] {
  return Object.keys(KUBERNETES_END_OF_LIFE)
    .filter((minor) => KUBERNETES_END_OF_LIFE[minor]! > SUPPORT_REVIEWED_ON)
    .filter((minor) => COMPONENT_SUPPORT.every((support) => supports(support, minor)))
    .sort((a, b) => minorNumber(a) - minorNumber(b));
}

/** The README's matrix, one row per component. */
export function supportMatrixRows(): string[] {
  return COMPONENT_SUPPORT.map((support) => {
    const statement = support.statement ?? (Array.isArray(support.minors) ? support.minors.join(', ') : `${(support.minors as { from: string }).from} and later`);
    return `| ${support.component} | ${support.pinned} | ${statement} | ${support.source} |`;
  });
}
