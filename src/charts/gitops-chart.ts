import { ApiObject, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { DEFAULT_PROJECT, type DeliveryStage, PLATFORM_CHARTS } from '../contract/platform-charts';
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
  /** Namespaces its namespaced objects live in (not its Applications' destinations). */
  readonly objectNamespaces: readonly string[];
  /** Cluster-scoped kinds it renders. */
  readonly clusterKinds: readonly ClusterKind[];
  /** Namespaced kinds it renders. */
  readonly namespacedKinds: readonly ClusterKind[];
  /** The Argo CD Applications it renders (the upstream Helm releases): each one's project, repositories and destination. */
  readonly applications: readonly RenderedApplication[];
  /** The namespace most of its namespaced objects live in (ties: alphabetical). */
  readonly primaryNamespace?: string;
  /** Fields of its objects a controller owns, which Argo CD must neither diff nor sync (Flagger's). */
  readonly ignoreDifferences: readonly ApplicationSpecIgnoreDifferences[];
  /** It renders Argo CD Applications (the upstream Helm releases): it belongs to the infrastructure project. */
  readonly installsApplications: boolean;
}

/** An Argo CD Application a chart renders, as its project must permit it. */
export interface RenderedApplication {
  readonly name: string;
  readonly project: string;
  readonly repoURLs: readonly string[];
  readonly namespace: string;
}

/** Read a rendered chart's footprint: plain data, so the GitOps chart does not depend on it. */
export function chartFootprint(id: string, chart: Chart): ChartFootprint {
  const counts = new Map<string, number>();
  const namespaces = new Set<string>();
  const ownNamespaces = new Set<string>();
  const objectNamespaces = new Set<string>();
  const clusterKinds: ClusterKind[] = [];
  const namespacedKinds: ClusterKind[] = [];
  const applications: RenderedApplication[] = [];
  const ignoreDifferences: ApplicationSpecIgnoreDifferences[] = [];
  let installsApplications = false;
  // Read each object's identity, not the chart's full rendering: synth renders it once, later.
  for (const object of chart.node.findAll().filter(ApiObject.isApiObject)) {
    const namespace = object.metadata.namespace;
    if (object.kind === 'Namespace') ownNamespaces.add(object.name);
    const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
    if (namespace === undefined) {
      clusterKinds.push({ group, kind: object.kind });
    } else {
      namespaces.add(namespace);
      objectNamespaces.add(namespace);
      namespacedKinds.push({ group, kind: object.kind });
      counts.set(namespace, (counts.get(namespace) ?? 0) + 1);
    }
    if (object.kind === 'Application' && group === 'argoproj.io') {
      installsApplications = true;
      const spec = (object.toJson() as { spec?: any }).spec ?? {};
      const sources: { repoURL?: string }[] = spec.sources ?? (spec.source === undefined ? [] : [spec.source]);
      const destination = spec.destination?.namespace;
      if (typeof destination === 'string') namespaces.add(destination);
      applications.push({ name: object.name, project: String(spec.project), repoURLs: sources.map((source) => String(source.repoURL)), namespace: String(destination) });
    }
    if (object.kind === 'Canary' && object.apiVersion.startsWith('flagger.app/')) ignoreDifferences.push(...flaggerOwnedFields(object.toJson()));
  }
  for (const namespace of ownNamespaces) namespaces.add(namespace);
  const primaryNamespace = [...counts.entries()].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))[0]?.[0];
  return {
    id,
    namespaces: [...namespaces].sort(),
    ownNamespaces: [...ownNamespaces].sort(),
    objectNamespaces: [...objectNamespaces].sort(),
    clusterKinds,
    namespacedKinds,
    applications,
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
 * with it (decrypted by the sops plugin, src/secrets/catalog.ts). A project per Application,
 * each derived from what that Application renders (1.6: deployment permissions limited):
 * - the root's (`platform.controller.project`): this repository, Argo CD's namespace, the
 *   AppProjects and Applications this chart renders;
 * - each child's, named after its chart (an application's after the application): this
 *   repository (and the published charts' registry, when the environment follows it), the
 *   namespaces its objects and Secrets live in, exactly the namespaced and cluster-scoped
 *   kinds it renders (Secret when it has a group of Secrets);
 * - each upstream release's (releaseProject): its source's repository and its namespace,
 *   with the cluster-scoped kinds Helm charts create (HELM_CLUSTER_KINDS); only the
 *   operator-synced `argocd` release deploys into Argo CD's namespace.
 * Argo CD's `default` project is locked.
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
    const controllerNamespace = platform.controller.namespace;

    // A platform chart's row of DELIVERY_STAGES says its retry budget (an application's chart has none).
    const stageOf = (id: string): DeliveryStage | undefined => PLATFORM_CHARTS.find((chart) => chart.id === id);
    const rendered = new Set(props.children.flatMap((child) => child.ownNamespaces));
    const releases = props.children.flatMap((child) => child.applications);
    const reserved = new Set([platform.controller.project, DEFAULT_PROJECT, ...releases.map((release) => release.project)]);
    const taken = props.children.find((child) => reserved.has(child.id));
    if (taken !== undefined) throw new Error(`chart ${taken.id}: its AppProject would be named ${taken.id}, which another project of the platform takes`);

    const plan = props.children.map((child) => {
      // A chart of Applications deploys them where Argo CD reads them, whatever else it renders.
      const namespace = child.installsApplications ? controllerNamespace : (child.primaryNamespace ?? controllerNamespace);
      // A namespace some child renders as a Namespace object is that child's: no other child creates it on install
      // (two Applications would both manage its metadata).
      const createNamespace = namespace !== controllerNamespace && !rendered.has(namespace);
      if (createNamespace) {
        throw new Error(`chart ${child.id} deploys into namespace ${namespace}, which no chart renders: the infrastructure chart renders every namespace (src/charts/infrastructure-chart.ts)`);
      }
      const secrets = isGroup(child.id) ? catalog.filter((s) => s.group === child.id) : [];
      // An application's chart: no row of DELIVERY_STAGES, no Applications of its own.
      const isApplication = stageOf(child.id) === undefined && !child.installsApplications;
      const publishedVersion = isApplication && publishedCharts !== undefined ? props.chartVersions?.[child.id] : undefined;
      if (isApplication && publishedCharts !== undefined && publishedVersion === undefined) {
        throw new Error(`chart ${child.id}: ${environment.name} follows the published charts, but no chart version was given for it`);
      }
      return { child, namespace, secrets, isApplication, publishedVersion };
    });

    // First: the root's, which the Pulumi bootstrap applies with the root.
    new AppProject(
      this,
      'project',
      appProjectProps(platform, {
        name: platform.controller.project,
        description: "The root: this file's AppProjects and Applications, in Argo CD's namespace, from this repository.",
        sourceRepos: [platform.repository.url],
        namespaces: [controllerNamespace],
        clusterKinds: [],
        namespacedKinds: [AppProject.GVK, ArgoCdApplication.GVK].map((gvk) => ({ group: gvk.apiVersion.split('/')[0]!, kind: gvk.kind })),
      }),
    );
    for (const { child, namespace, secrets, isApplication } of plan) {
      new AppProject(
        this,
        `project-${child.id}`,
        appProjectProps(platform, {
          name: child.id,
          description: isApplication
            ? `The application ${child.id}: its chart's kinds (no RBAC, no cluster-scoped kind) in its own namespaces.`
            : `The ${child.id} chart: the kinds it renders, in the namespaces it renders them in.`,
          sourceRepos: [platform.repository.url, ...(isApplication && publishedCharts !== undefined ? [publishedCharts] : [])],
          namespaces: [namespace, ...child.objectNamespaces, ...secrets.map((secret) => secret.namespace)],
          clusterKinds: child.clusterKinds,
          namespacedKinds: [...child.namespacedKinds, ...(secrets.length > 0 ? [{ group: '', kind: 'Secret' }] : [])],
        }),
      );
    }
    const releaseProjects = [...new Set(releases.map((release) => release.project))].sort(compareText);
    for (const project of releaseProjects) {
      const members = releases.filter((release) => release.project === project);
      new AppProject(
        this,
        `project-${project}`,
        appProjectProps(platform, {
          name: project,
          description: `The upstream release ${members.map((m) => m.name).join(', ')}: its source's repository, its namespace, the cluster-scoped kinds upstream charts and manifests create.`,
          sourceRepos: [...new Set(members.flatMap((member) => member.repoURLs))].sort(compareText),
          namespaces: members.map((member) => member.namespace),
          clusterKinds: [...HELM_CLUSTER_KINDS],
        }),
      );
    }
    new AppProject(this, 'default-project', lockedDefaultProjectProps(platform));

    this.children = plan.map(({ child, namespace, secrets, isApplication, publishedVersion }) => {
      return new ArgoCdApplication(
        this,
        `child-${child.id}`,
        childApplication(environment, platform, {
          chart: child.id,
          project: child.id,
          // Wave 0 is the AppProjects'; children follow in the delivery order.
          syncWave: child.syncWave,
          namespace,
          createNamespace: false,
          ...(secrets.length > 0 ? { secretGroup: child.id } : {}),
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
