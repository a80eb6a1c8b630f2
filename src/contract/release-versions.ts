import { INFRASTRUCTURE_RELEASE_NAMES as NAMES } from './naming';
import { compareText } from '../base/text-order';

/**
 * The versions of each infrastructure release the platform supports, with their facts: the
 * second half of the release table (src/infrastructure/releases.ts holds what every version
 * shares: chart, repository, namespace, wave, values). Which version an environment runs is
 * its values' choice (`infrastructure.versions.<release>` in src/environments/<env>/environment.yaml),
 * one of the versions listed here; `npm run upgrade` moves one environment to another of them,
 * `npm run promote` carries them along the environment order.
 *
 * A version enters this table with its upstream facts read at that version: the Kubernetes
 * minors it supports, the CRD schemas of schemas/crds it installs (the validation gate checks
 * an environment's objects against the schemas of the versions it runs), and the controller
 * image its chart deploys by default (`ops check --component <release>` compares the running
 * one with it). A version whose CRDs differ from the kept ones needs its own schema files first.
 *
 * Plain data over release names (no chart or source kind): the environments' schema reads it.
 */

/** An infrastructure release's name (its Application's), as an environment's values name it. */
export type ReleaseName = (typeof NAMES)[keyof typeof NAMES];

/** The release names in the release table's (sync) order. */
export const RELEASE_NAMES: readonly ReleaseName[] = Object.values(NAMES);

/** What upstream says about one version of a release. */
export interface ReleaseVersionFacts {
  /** The Kubernetes minors upstream tests or supports this version on, or the oldest it supports. */
  readonly kubernetes: readonly string[] | { readonly from: string };
  /** The files of schemas/crds/ that hold this version's CRDs the platform renders objects of (none: it installs none of them). */
  readonly crdSchemas: readonly string[];
  /**
   * The controller image the chart deploys at this version with the platform's values
   * (repository and tag), which `ops check --component <release>` expects on its pods.
   * @default - the release runs no controller of its own (CRDs only)
   */
  readonly controllerImage?: string;
  /** Where the facts are read: the upstream files at this version. */
  readonly source: string;
}

const CERT_MANAGER_CRDS = ['certmanager-certificate.yaml', 'certmanager-clusterissuer.yaml', 'certmanager-issuer.yaml'];
/** cert-manager 1.21's supported Kubernetes minors (cert-manager website, content/docs/releases/README.md). */
const CERT_MANAGER_1_21_KUBERNETES = ['1.33', '1.34', '1.35', '1.36'];

/** Every supported version of every release, oldest first within a release. */
export const SUPPORTED_VERSIONS: { readonly [name in ReleaseName]: Readonly<Record<string, ReleaseVersionFacts>> } = {
  [NAMES.gatewayApiCrds]: {
    'v1.9.1': {
      kubernetes: ['1.33', '1.34', '1.35', '1.36'],
      crdSchemas: ['envoygateway-envoyproxies.yaml', 'gatewayapi-gatewayclasses.yaml', 'gatewayapi-gateways.yaml', 'gatewayapi-httproutes.yaml'],
      source: 'envoyproxy/gateway v1.9.1, charts/gateway-crds-helm (Gateway API v1.6.1, go.mod); site/content/en/news/releases/matrix.md',
    },
  },
  [NAMES.certManager]: {
    // The version before v1.21.2: deploy/crds/ is the same at both tags (v1.21.2 changed no CRD;
    // its release notes, and schemas/crds/SOURCES.md's files, read at v1.21.2, are v1.21.1's too).
    'v1.21.1': {
      kubernetes: CERT_MANAGER_1_21_KUBERNETES,
      crdSchemas: CERT_MANAGER_CRDS,
      controllerImage: 'quay.io/jetstack/cert-manager-controller:v1.21.1',
      source: 'cert-manager/cert-manager v1.21.1, deploy/crds/, deploy/charts/cert-manager/values.yaml (image.repository; the tag is the appVersion)',
    },
    'v1.21.2': {
      kubernetes: CERT_MANAGER_1_21_KUBERNETES,
      crdSchemas: CERT_MANAGER_CRDS,
      controllerImage: 'quay.io/jetstack/cert-manager-controller:v1.21.2',
      source: 'cert-manager/cert-manager v1.21.2, deploy/crds/, deploy/charts/cert-manager/values.yaml (image.repository; the tag is the appVersion)',
    },
  },
  [NAMES.envoyGateway]: {
    'v1.9.1': {
      kubernetes: ['1.33', '1.34', '1.35', '1.36'],
      crdSchemas: [],
      controllerImage: 'docker.io/envoyproxy/gateway:v1.9.1',
      source: 'envoyproxy/gateway v1.9.1, charts/gateway-helm/values.tmpl.yaml (global.images.envoyGateway.image); site/content/en/news/releases/matrix.md',
    },
  },
  [NAMES.argoCd]: {
    // Argo CD's own release manifests at this tag (src/infrastructure/argo-cd-release.ts): the
    // version is the git tag, the image the manifests deploy is the tag's.
    'v3.6.1': {
      kubernetes: ['1.34', '1.35', '1.36', '1.37'],
      crdSchemas: ['argocd-application.yaml', 'argocd-appproject.yaml'],
      controllerImage: 'quay.io/argoproj/argocd:v3.6.1',
      source: 'argoproj/argo-cd v3.6.1, manifests/cluster-install (kustomization images: quay.io/argoproj/argocd:v3.6.1); docs/operator-manual/tested-kubernetes-versions.md',
    },
  },
  [NAMES.kubePrometheusStack]: {
    // The newest chart the project can read (prometheus-community/helm-charts cf408a290aec,
    // 2026-08-22): the e2e's stand-in follows its templates and values (e2e/stand-in-monitoring-stack.ts)
    // and the toolchain builds its operator, v0.93.1 (toolchain/build.sh).
    '88.5.3': {
      kubernetes: { from: '1.25' },
      crdSchemas: ['alertmanagerconfig.yaml', 'podmonitor.yaml', 'prometheusrule.yaml', 'servicemonitor.yaml'],
      controllerImage: 'quay.io/prometheus-operator/prometheus-operator:v0.93.1',
      source: 'prometheus-community/helm-charts kube-prometheus-stack-88.5.3 (cf408a290aec), Chart.yaml (appVersion v0.93.1, kubeVersion >=1.25.0-0), values.yaml (prometheusOperator.image: the tag is the appVersion); prometheus-operator v0.93.1, Documentation/getting-started/compatibility.md',
    },
  },
  [NAMES.flagger]: {
    '1.44.0': {
      kubernetes: ['1.35', '1.36'],
      crdSchemas: ['flagger-alertprovider.yaml', 'flagger-canary.yaml', 'flagger-metrictemplate.yaml'],
      controllerImage: 'ghcr.io/fluxcd/flagger:1.44.0',
      source: 'fluxcd/flagger v1.44.0, charts/flagger/values.yaml (image.repository, image.tag); CHANGELOG.md, .github/workflows/e2e.yaml',
    },
  },
  [NAMES.flaggerLoadTester]: {
    '0.38.0': {
      kubernetes: ['1.35', '1.36'],
      crdSchemas: [],
      source: 'fluxcd/flagger v1.44.0, charts/loadtester (released with Flagger 1.44.0)',
    },
  },
  [NAMES.strimziOperator]: {
    '1.2.0': {
      kubernetes: { from: '1.30' },
      crdSchemas: ['strimzi-kafka.yaml', 'strimzi-kafkanodepool.yaml', 'strimzi-kafkatopic.yaml', 'strimzi-kafkauser.yaml'],
      controllerImage: 'quay.io/strimzi/operator:1.2.0',
      source: 'strimzi/strimzi-kafka-operator 1.2.0, packaging/helm-charts/helm3/strimzi-kafka-operator/values.yaml (image.registry/repository/name, defaultImageTag); documentation/shared/attributes.adoc',
    },
  },
};

/** The numbers of a version, `v1.21.2` or `88.5.3`, for ordering. */
function versionNumbers(version: string): number[] {
  return version.replace(/^v/, '').split(/[.-]/).map((part) => (/^\d+$/.test(part) ? Number(part) : Number.NaN));
}

/** Negative when `a` is older than `b`, 0 when equal, positive when newer (numeric parts first; text decides what numbers cannot). */
export function compareReleaseVersions(a: string, b: string): number {
  const [left, right] = [versionNumbers(a), versionNumbers(b)];
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const [x, y] = [left[index] ?? 0, right[index] ?? 0];
    if (Number.isNaN(x) || Number.isNaN(y)) return compareText(a, b);
    if (x !== y) return x - y;
  }
  return 0;
}

/** The versions the table knows of `release`, oldest first; empty for a name that is not a release. */
export function knownVersions(release: string): string[] {
  const versions = (SUPPORTED_VERSIONS as Readonly<Record<string, Readonly<Record<string, ReleaseVersionFacts>>>>)[release];
  return versions === undefined ? [] : Object.keys(versions).sort(compareReleaseVersions);
}

/** The facts of `release` at `version`, or undefined when the table does not know that version. */
export function versionFacts(release: string, version: string): ReleaseVersionFacts | undefined {
  return (SUPPORTED_VERSIONS as Readonly<Record<string, Readonly<Record<string, ReleaseVersionFacts>>>>)[release]?.[version];
}
