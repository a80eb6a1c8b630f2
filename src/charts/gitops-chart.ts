import { ApiObject, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { type DeliveryStage, INFRASTRUCTURE_PROJECT, PLATFORM_CHARTS } from '../contract/platform-charts';
import { appProjectProps, childApplication, type ClusterKind, lockedDefaultProjectProps, publishedChartsRepoURL } from './gitops-applications';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';
import { ArgoCdApplication } from '../constructs/argo-cd-application';
import { flaggerOwnedFields } from '../constructs/canary-release';
import type { ApplicationSpecIgnoreDifferences } from '../imports/application-argoproj.io';
import { AppProject } from '../imports/appproject-argoproj.io';
import { secretCatalog, secretGroups } from '../secrets/catalog';
import { compareText } from '../base/text-order';

/**
 * Cluster-scoped kinds the upstream Helm charts of the infrastructure create (their
 * CRDs, RBAC, admission webhooks and policies) and the namespaces Argo CD creates on
 * install. Read from the pinned charts' templates; the e2e installs Envoy Gateway's CRDs
 * chart for real, so a kind missing here fails its sync there. Only the infrastructure
 * project allows them.
 */
export const HELM_CLUSTER_KINDS: readonly ClusterKind[] = [
  { group: '', kind: 'Namespace' },
  { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
  { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
  { group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding' },
  { group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration' },
  { group: 'admissionregistration.k8s.io', kind: 'MutatingWebhookConfiguration' },
  // Gateway API v1.6.1's `safe-upgrades.gateway.networking.k8s.io` policy and its binding
  // (gateway-crds-helm v1.9.1 templates/standard-gatewayapi-crds.yaml).
  { group: 'admissionregistration.k8s.io', kind: 'ValidatingAdmissionPolicy' },
  { group: 'admissionregistration.k8s.io', kind: 'ValidatingAdmissionPolicyBinding' },
];

/** What the GitOps wiring needs to know about a chart it syncs, read off its objects. */
export interface ChartFootprint {
  /** Chart id: `dist/<env>/<id>.yaml`. */
  readonly id: string;
  /** Namespaces its objects live in or deploy to (Applications' destinations included). */
  readonly namespaces: readonly string[];
  /** Namespaces it renders as Namespace objects. */
  readonly ownNamespaces: readonly string[];
  /** Cluster-scoped kinds it renders. */
  readonly clusterKinds: readonly ClusterKind[];
  /** The namespace most of its namespaced objects live in (ties: alphabetical). */
  readonly primaryNamespace?: string;
  /** Fields of its objects a controller owns, which Argo CD must neither diff nor sync (Flagger's). */
  readonly ignoreDifferences: readonly ApplicationSpecIgnoreDifferences[];
  /** It renders Argo CD Applications (the upstream Helm releases): it belongs to the infrastructure project. */
  readonly installsApplications: boolean;
}

/** Read a rendered chart's footprint: plain data, so the GitOps chart does not depend on it. */
export function chartFootprint(id: string, chart: Chart): ChartFootprint {
  const counts = new Map<string, number>();
  const namespaces = new Set<string>();
  const ownNamespaces = new Set<string>();
  const clusterKinds: ClusterKind[] = [];
  const ignoreDifferences: ApplicationSpecIgnoreDifferences[] = [];
  let installsApplications = false;
  // Read each object's identity, not the chart's full rendering: synth renders it once, later.
  for (const object of chart.node.findAll().filter(ApiObject.isApiObject)) {
    const namespace = object.metadata.namespace;
    if (object.kind === 'Namespace') ownNamespaces.add(object.name);
    if (namespace === undefined) {
      const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
      clusterKinds.push({ group, kind: object.kind });
    } else {
      namespaces.add(namespace);
      counts.set(namespace, (counts.get(namespace) ?? 0) + 1);
    }
    if (object.kind === 'Application') installsApplications = true;
    const destination = object.kind === 'Application' ? (object.toJson() as { spec?: any }).spec?.destination?.namespace : undefined;
    if (typeof destination === 'string') namespaces.add(destination);
    if (object.kind === 'Canary' && object.apiVersion.startsWith('flagger.app/')) ignoreDifferences.push(...flaggerOwnedFields(object.toJson()));
  }
  for (const namespace of ownNamespaces) namespaces.add(namespace);
  const primaryNamespace = [...counts.entries()].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))[0]?.[0];
  return {
    id,
    namespaces: [...namespaces].sort(),
    ownNamespaces: [...ownNamespaces].sort(),
    clusterKinds,
    ...(primaryNamespace === undefined ? {} : { primaryNamespace }),
    ignoreDifferences,
    installsApplications,
  };
}

/** A chart the GitOps wiring syncs as a child Application, with its place in the delivery. */
export interface GitopsChild extends ChartFootprint {
  /** Its sync wave (its stage in the delivery order); the applications' charts share one. */
  readonly syncWave: number;
}

export interface GitopsChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
  /** Platform-wide settings: repository, Argo CD namespace and project. */
  readonly platform: Platform;
  /** The environment's other charts, in delivery (sync) order. */
  readonly children: readonly GitopsChild[];
  /**
   * Each application's chart version (its record, src/environments/<environment>/chart-versions.json), which its
   * Application installs when the environment follows the published charts.
   * @default - none: required when `applicationSource.from` is `registry`
   */
  readonly chartVersions?: Readonly<Record<string, string>>;
}

/**
 * The GitOps wiring of one environment (1.1.5, 1.6): the AppProjects, the root
 * Application (app of apps, syncing this file) and one child Application per chart (one
 * per application among them), in the delivery order as sync waves. A chart with a group of encrypted Secrets syncs them
 * with it (decrypted by the sops plugin, src/secrets/catalog.ts). Two projects: the
 * infrastructure's (the root, the charts of the `infrastructure` project in DELIVERY_STAGES,
 * the Helm releases: the pinned Helm repositories, CRDs, cluster RBAC, webhooks, every
 * Namespace, the monitoring stack's privileged namespace) and the application level's (the
 * other children: this repository only, their namespaces, no cluster-scoped kind, not the
 * controller's namespace, no namespace that admits privileged pods); Argo CD's `default`
 * project is locked.
 */
export class GitopsChart extends Chart {
  /** The child Applications, in sync order. */
  public readonly children: readonly ArgoCdApplication[];

  constructor(scope: Construct, id: string, props: GitopsChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { environment, platform } = props;
    const catalog = secretCatalog(environment);
    const groups = secretGroups(environment);
    const isGroup = (chart: string): boolean => groups.includes(chart);
    const publishedCharts = publishedChartsRepoURL(environment);

    // A platform chart's row of DELIVERY_STAGES says its project and retry budget (an application's chart has none).
    const stageOf = (id: string): DeliveryStage | undefined => PLATFORM_CHARTS.find((chart) => chart.id === id);
    const projectOf = (child: ChartFootprint) =>
      child.installsApplications || stageOf(child.id)?.project === 'infrastructure' ? INFRASTRUCTURE_PROJECT : platform.controller.project;
    const projectScope = (project: string, base: { namespaces: string[]; clusterKinds: ClusterKind[] }) => {
      const namespaces = new Set<string>(base.namespaces);
      const clusterKinds = [...base.clusterKinds];
      for (const child of props.children.filter((c) => projectOf(c) === project)) {
        child.namespaces.forEach((namespace) => namespaces.add(namespace));
        clusterKinds.push(...child.clusterKinds);
        if (isGroup(child.id)) catalog.filter((s) => s.group === child.id).forEach((s) => namespaces.add(s.namespace));
      }
      return { namespaces: [...namespaces], clusterKinds };
    };

    // First: the Pulumi bootstrap applies the first AppProject with the root, which uses it.
    new AppProject(
      this,
      'infrastructure-project',
      appProjectProps(platform, projectScope(INFRASTRUCTURE_PROJECT, { namespaces: [platform.controller.namespace], clusterKinds: [...HELM_CLUSTER_KINDS] }), {
        name: INFRASTRUCTURE_PROJECT,
        description: 'The bootstrap and the infrastructure: this repository and the pinned upstream Helm charts, with the cluster rights those charts need.',
        helmCharts: true,
      }),
    );
    new AppProject(
      this,
      'project',
      // No cluster-scoped kind at all, Namespace included: every namespace is the infrastructure chart's.
      appProjectProps(platform, projectScope(platform.controller.project, { namespaces: [], clusterKinds: [] }), {
        name: platform.controller.project,
        description: 'The application level: this repository only, into namespaces the infrastructure created, without cluster-scoped objects.',
        helmCharts: false,
        ...(publishedCharts === undefined ? {} : { publishedCharts }),
      }),
    );
    new AppProject(this, 'default-project', lockedDefaultProjectProps(platform));

    // A namespace some child renders as a Namespace object is that child's: no other child creates it on install
    // (two Applications would both manage its metadata). The application level may create none.
    const rendered = new Set(props.children.flatMap((child) => child.ownNamespaces));
    this.children = props.children.map((child) => {
      // A chart of Applications deploys them where Argo CD reads them, whatever else it renders.
      const namespace = child.installsApplications ? platform.controller.namespace : (child.primaryNamespace ?? platform.controller.namespace);
      const createNamespace = namespace !== platform.controller.namespace && !rendered.has(namespace);
      if (createNamespace && projectOf(child) !== INFRASTRUCTURE_PROJECT) {
        throw new Error(`chart ${child.id} deploys into namespace ${namespace}, which no chart renders: the infrastructure chart renders every namespace (src/charts/infrastructure-chart.ts)`);
      }
      const hasSecrets = isGroup(child.id) && catalog.some((s) => s.group === child.id);
      // An application's chart: no row of DELIVERY_STAGES, no Applications of its own.
      const isApplication = stageOf(child.id) === undefined && !child.installsApplications;
      const publishedVersion = isApplication && publishedCharts !== undefined ? props.chartVersions?.[child.id] : undefined;
      if (isApplication && publishedCharts !== undefined && publishedVersion === undefined) {
        throw new Error(`chart ${child.id}: ${environment.name} follows the published charts, but no chart version was given for it`);
      }
      return new ArgoCdApplication(
        this,
        `child-${child.id}`,
        childApplication(environment, platform, {
          chart: child.id,
          project: projectOf(child),
          // Wave 0 is the AppProjects'; children follow in the delivery order.
          syncWave: child.syncWave,
          namespace,
          createNamespace,
          ...(hasSecrets ? { secretGroup: child.id } : {}),
          ...(stageOf(child.id)?.retryBudgetSeconds === undefined ? {} : { retryBudgetSeconds: stageOf(child.id)!.retryBudgetSeconds! }),
          ignoreDifferences: child.ignoreDifferences,
          // An application's deployments are announced (1.6).
          announced: isApplication,
          ...(publishedVersion === undefined ? {} : { publishedChart: { repoURL: publishedCharts!, version: publishedVersion } }),
        }),
      );
    });
  }
}
