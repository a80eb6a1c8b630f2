import { WAITS_SECONDS } from './contract';

/**
 * The delivery of an environment (1.1.5, 1.3.4): the charts the platform renders into
 * `dist/<env>/`, each synced by one child Application of the root, in this order, one sync
 * wave per stage. This is the one table of the platform's charts: the synth's order
 * (src/synth/index.ts), the reserved names (src/environments/validate.ts), the GitOps wiring
 * (src/charts/gitops-chart.ts) and the secrets catalog (src/secrets/catalog.ts) all read it.
 * Each platform chart's builder is in src/charts/index.ts, keyed by the ids below, so a row
 * without a builder does not compile.
 */

/** One stage of the delivery: a platform chart, or every application's chart. */
export interface DeliveryStage {
  /**
   * The chart id (`dist/<env>/<id>.yaml`, the child Application's name, its secrets group),
   * or APPLICATIONS_STAGE for the stage of one chart per application, named after it.
   */
  readonly id: string;
  /** What the stage delivers. */
  readonly purpose: string;
  /**
   * Seconds the child Application's sync retries may span before it is failed (8).
   * @default WAITS_SECONDS.controllerSync (300)
   */
  readonly retryBudgetSeconds?: number;
  /**
   * Whether its child Application also syncs the encrypted Secrets `secrets/<env>/<id>/`.
   * @default false
   */
  readonly secrets?: boolean;
}

/** The stage that stands for every application's chart, all in one sync wave. */
export const APPLICATIONS_STAGE = 'applications';

/**
 * The stages in delivery order: the infrastructure first (1.3 step 4), then what the
 * applications use, the applications, and the environment-wide alert routing.
 */
export const DELIVERY_STAGES = [
  {
    id: 'infrastructure',
    purpose: 'one Argo CD Application per upstream Helm release (src/infrastructure/releases.ts)',
  },
  {
    id: 'issuers',
    purpose: "the GatewayClass and the cluster issuers, after the CRDs of the infrastructure's releases exist",
  },
  {
    id: 'database',
    purpose: 'SQL Server in its own namespace, the logins, the backups (1.3 step 5)',
    // The database pod may take 600 s to become ready (1.3.5, 8).
    retryBudgetSeconds: WAITS_SECONDS.databasePodReady,
    secrets: true,
  },
  {
    id: 'broker',
    purpose: 'the Strimzi Kafka cluster, its topics and users (1.3 step 6)',
    // The broker cluster may take 600 s to become ready (1.3.6, 8).
    retryBudgetSeconds: WAITS_SECONDS.brokerClusterReady,
    secrets: true,
  },
  {
    id: 'monitoring',
    purpose: "the routing of every alert (6), in the monitoring stack's namespace, and the address deployments are announced to (1.6), in Argo CD's",
    // Before the applications: their first alert is routed and their first deployment
    // announced (Argo CD's notifications controller reads the address from this stage's Secret).
    // The monitoring namespace enforces privileged Pod Security (kube-prometheus-stack's node
    // exporter): no application's project deploys there (src/contract/security-context.ts).
    secrets: true,
  },
  {
    id: APPLICATIONS_STAGE,
    purpose: "each application's chart: workloads by strategy, routing, migrations, smoke test, alert rules",
    secrets: true,
  },
] as const satisfies readonly DeliveryStage[];

/** The id of a platform chart (every stage but the applications'). */
export type PlatformChartId = Exclude<(typeof DELIVERY_STAGES)[number]['id'], typeof APPLICATIONS_STAGE>;

/** The platform's own charts, in delivery order. */
export const PLATFORM_CHARTS: readonly (DeliveryStage & { readonly id: PlatformChartId })[] = DELIVERY_STAGES.filter(
  (stage): stage is Extract<(typeof DELIVERY_STAGES)[number], { id: PlatformChartId }> => stage.id !== APPLICATIONS_STAGE,
);

/** The ids of the platform's charts, in delivery order. */
export const PLATFORM_CHART_IDS: readonly PlatformChartId[] = PLATFORM_CHARTS.map((chart) => chart.id);

/** The sync wave of a stage: wave 0 is the AppProjects', the stages follow in order. */
export function stageWave(stage: string): number {
  const index = DELIVERY_STAGES.findIndex((candidate) => candidate.id === stage);
  if (index < 0) throw new Error(`no delivery stage ${stage}`);
  return index + 1;
}

/** The chart that holds the GitOps wiring; the root Application syncs this file only. */
export const GITOPS_CHART_ID = 'gitops';

/** Name of the root Application (app of apps) of an environment's cluster. */
export const ROOT_APPLICATION = 'root';

/**
 * The AppProject of the infrastructure chart (src/charts/infrastructure-chart.ts): its
 * Namespaces, NetworkPolicies and the Helm releases' Applications, nothing else. Every other
 * chart's child Application has a project of its own, named after the chart (an
 * application's after the application), and each Helm release one named by releaseProject;
 * the root's is `platform.controller.project` (src/charts/gitops-chart.ts).
 */
export const INFRASTRUCTURE_PROJECT = 'infrastructure';

/** The AppProject of an upstream Helm release's Application: that release's repository and namespace only. */
export function releaseProject(release: string): string {
  return `release-${release}`;
}

/** Argo CD's own project, which it creates wide open and which the platform locks. */
export const DEFAULT_PROJECT = 'default';
