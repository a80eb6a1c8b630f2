import { type ArgoCdApplicationProps, type ArgoCdApplicationSource, type RepositoryPathSource, applicationProps } from '../constructs/argo-cd-application';
import { helmOciRepoURL, manifestsPath, publishedChartsRepository, secretsPath } from '../contract/layout';
import { DEPLOYMENT_NOTIFICATIONS, SOPS_PLUGIN } from '../contract/choices';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';
import type { ApplicationProps, ApplicationSpecIgnoreDifferences } from '../imports/application-argoproj.io';
import type { AppProjectProps } from '../imports/appproject-argoproj.io';
import { HELM_RELEASE_ROWS } from '../infrastructure/releases';
import { type SecretGroup, pluginExpectation, secretCatalog } from '../secrets/catalog';
import { DEFAULT_PROJECT, GITOPS_CHART_ID, INFRASTRUCTURE_PROJECT, ROOT_APPLICATION } from '../contract/platform-charts';
import { IN_CLUSTER } from '../constructs/argo-cd-sync-policy';

/** A cluster-scoped kind an AppProject lets Applications create. */
export interface ClusterKind {
  readonly group: string;
  readonly kind: string;
}

/** What the AppProject allows, derived from what the platform renders. */
export interface ProjectScope {
  /** Namespaces the platform deploys to. */
  readonly namespaces: readonly string[];
  /** Cluster-scoped kinds the platform creates. */
  readonly clusterKinds: readonly ClusterKind[];
}

/** Which of the platform's AppProjects. */
export interface ProjectIdentity {
  /** The project's name. */
  readonly name: string;
  /** What it is for, shown in Argo CD. */
  readonly description: string;
  /** Allow the pinned Helm repositories as sources (the infrastructure's releases). */
  readonly helmCharts: boolean;
  /**
   * The OCI repository of the environment's published application charts, when the
   * environment follows them (`applicationSource.from: registry`).
   * @default - none: the applications come from this repository
   */
  readonly publishedCharts?: string;
}

/**
 * An AppProject of the platform (1.6: deployment permissions limited): sources are this
 * repository (and, for the infrastructure, the pinned Helm repositories) only; destinations
 * the in-cluster API and the given namespaces only; cluster-scoped kinds only those given.
 */
export function appProjectProps(platform: Platform, scope: ProjectScope, identity: ProjectIdentity): AppProjectProps {
  const helmRepositories = identity.helmCharts ? [...new Set(HELM_RELEASE_ROWS.map((release) => release.chart.repoURL))].sort() : [];
  const kinds = new Map(scope.clusterKinds.map((k) => [`${k.group}/${k.kind}`, k]));
  return {
    metadata: {
      name: identity.name,
      namespace: platform.controller.namespace,
      annotations: { [SYNC_WAVE_ANNOTATION]: '0' },
    },
    spec: {
      description: identity.description,
      sourceRepos: [platform.repository.url, ...helmRepositories, ...(identity.publishedCharts === undefined ? [] : [identity.publishedCharts])],
      destinations: [...new Set(scope.namespaces)].sort().map((namespace) => ({ server: IN_CLUSTER, namespace })),
      clusterResourceWhitelist: [...kinds.keys()].sort().map((key) => ({ group: kinds.get(key)!.group, kind: kinds.get(key)!.kind })),
    },
  };
}

/**
 * Argo CD's `default` project with every permission removed, as Argo CD's documentation
 * gives it (argo-cd v3.5.1 docs/user-guide/projects.md, "The Default Project"): Argo CD
 * creates it allowing any source, destination and kind, and an Application without a
 * project lands in it.
 */
export function lockedDefaultProjectProps(platform: Platform): AppProjectProps {
  return {
    metadata: { name: DEFAULT_PROJECT, namespace: platform.controller.namespace, annotations: { [SYNC_WAVE_ANNOTATION]: '0' } },
    spec: {
      description: 'Locked: no source, no destination, no kind. Every Application names a project of the platform.',
      sourceRepos: [],
      sourceNamespaces: [],
      destinations: [],
      namespaceResourceBlacklist: [{ group: '*', kind: '*' }],
    },
  };
}

/** A folder of this repository at the branch the platform follows. */
function repositoryPath(platform: Platform, path: string, source: Pick<RepositoryPathSource, 'include' | 'plugin' | 'pluginEnv'>): RepositoryPathSource {
  return { kind: 'path', repoURL: platform.repository.url, targetRevision: platform.repository.targetRevision, path, ...source };
}

/**
 * The root Application (app of apps) of an environment: syncs `dist/<env>/gitops.yaml`,
 * which holds the AppProject and one child Application per chart. The bootstrap (Pulumi,
 * and the e2e harness the same way) creates it; it is not in the file it syncs: an
 * Application that syncs itself waits in its own sync for its own health, which the
 * app-of-apps health check (src/infrastructure/argo-cd-values.ts) reports Progressing while that
 * sync runs, so the sync never ends (seen on the e2e cluster).
 */
export function rootApplication(environment: Environment, platform: Platform): ArgoCdApplicationProps {
  return {
    name: ROOT_APPLICATION,
    controllerNamespace: platform.controller.namespace,
    project: INFRASTRUCTURE_PROJECT,
    sources: [repositoryPath(platform, manifestsPath(environment.name), { include: `${GITOPS_CHART_ID}.yaml` })],
    destinationNamespace: platform.controller.namespace,
    automated: environment.autoSync,
  };
}

/** The root Application as plain props, for the bootstrap, which does not run a chart. */
export function rootApplicationProps(environment: Environment, platform: Platform): ApplicationProps {
  return applicationProps(rootApplication(environment, platform));
}

export interface ChildApplicationOptions {
  /** Chart id: the file `dist/<env>/<id>.yaml` and the Application's name. */
  readonly chart: string;
  /** The AppProject the child belongs to. */
  readonly project: string;
  /** Sync wave: the chart's place in the delivery order. */
  readonly syncWave: number;
  /** Destination namespace for objects without one; created on install when asked. */
  readonly namespace: string;
  /** The namespace is not rendered by the chart: Argo CD creates it on install (1.3.5). */
  readonly createNamespace: boolean;
  /** Group of SOPS-encrypted Secrets synced with the chart, if it has one. */
  readonly secretGroup?: SecretGroup;
  /**
   * Seconds the sync retries may span before the Application is failed.
   * @default WAITS_SECONDS.controllerSync (300)
   */
  readonly retryBudgetSeconds?: number;
  /**
   * Fields a controller in the cluster owns: ignored when diffing and, with
   * `RespectIgnoreDifferences=true`, when syncing.
   * @default - none
   */
  readonly ignoreDifferences?: readonly ApplicationSpecIgnoreDifferences[];
  /**
   * The chart is an application's: its deployments are announced to the stakeholders (1.6,
   * DEPLOYMENT_NOTIFICATIONS), a subscription per trigger.
   * @default false
   */
  readonly announced?: boolean;
  /**
   * The chart is an application's and the environment follows the published charts
   * (`applicationSource.from: registry`): Argo CD installs this version of it from that
   * registry path (publishedChartsRepoURL) instead of reading the chart's file from git.
   * @default - the chart's file in git
   */
  readonly publishedChart?: { readonly repoURL: string; readonly version: string };
}

/**
 * The OCI repository Argo CD reads an environment's published application charts from
 * (Helm over OCI: no scheme); undefined when the environment follows this repository.
 */
export function publishedChartsRepoURL(environment: Environment): string | undefined {
  const registry = followedRegistry(environment);
  return registry === undefined ? undefined : helmOciRepoURL(publishedChartsRepository(registry, environment.name));
}

/** The registry (`oci://...`) whose charts the environment follows; undefined when it follows this repository. */
export function followedRegistry(environment: Environment): string | undefined {
  const source = environment.applicationSource;
  return source.from === 'registry' ? source.registry : undefined;
}

/** The annotations that subscribe an Application to every deployment notification (1.6). */
export function deploymentSubscriptions(): Record<string, string> {
  const { subscribePrefix, service, triggers } = DEPLOYMENT_NOTIFICATIONS;
  return Object.fromEntries(Object.keys(triggers).map((trigger) => [`${subscribePrefix}.${trigger}.${service}`, '']));
}

/**
 * A group's encrypted Secrets, through the sops plugin, told which Secrets the catalog has
 * there: it refuses a decrypted file that is not exactly one of them (SOPS_PLUGIN_GENERATE).
 */
function secretsSource(environment: Environment, platform: Platform, group: SecretGroup): RepositoryPathSource {
  const secrets = secretCatalog(environment).filter((secret) => secret.group === group);
  return repositoryPath(platform, secretsPath(environment.name, group), { plugin: SOPS_PLUGIN.name, pluginEnv: { [SOPS_PLUGIN.expectationVariable]: pluginExpectation(secrets) } });
}

/** A child Application of the root: one chart's file, plus its encrypted Secrets (the sops plugin). */
export function childApplication(environment: Environment, platform: Platform, options: ChildApplicationOptions): ArgoCdApplicationProps {
  const published = options.publishedChart;
  const manifests: ArgoCdApplicationSource =
    published === undefined
      ? repositoryPath(platform, manifestsPath(environment.name), { include: `${options.chart}.yaml` })
      : { kind: 'helm', chart: { repoURL: published.repoURL, chart: options.chart, version: published.version }, releaseName: options.chart };
  const ignored = options.ignoreDifferences ?? [];
  return {
    name: options.chart,
    controllerNamespace: platform.controller.namespace,
    project: options.project,
    sources:
      options.secretGroup === undefined
        ? [manifests]
        : [manifests, secretsSource(environment, platform, options.secretGroup)],
    destinationNamespace: options.namespace,
    syncWave: options.syncWave,
    automated: environment.autoSync,
    createNamespace: options.createNamespace,
    syncOptions: ignored.length === 0 ? [] : ['RespectIgnoreDifferences=true'],
    ignoreDifferences: ignored,
    retryBudgetSeconds: options.retryBudgetSeconds,
    ...(options.announced === true ? { annotations: deploymentSubscriptions() } : {}),
  };
}
