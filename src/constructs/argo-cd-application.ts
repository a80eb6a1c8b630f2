import type { Construct } from 'constructs';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import {
  Application,
  type ApplicationProps,
  type ApplicationSpecIgnoreDifferences,
  type ApplicationSpecSources,
} from '../imports/application-argoproj.io';
import { IN_CLUSTER, syncPolicy } from './argo-cd-sync-policy';
import type { HelmChartRef } from '../infrastructure/releases';
import { namespacePodSecurity } from '../contract/security-context';
import { OPERATOR_SYNC_ANNOTATION } from '../contract/choices';

/** An upstream Helm chart at its pinned version, installed as one Helm release. */
export interface HelmChartSource {
  readonly kind: 'helm';
  /** The chart at its exact version (src/infrastructure/releases.ts). */
  readonly chart: HelmChartRef;
  /** Helm release name. */
  readonly releaseName: string;
  /**
   * Helm values, rendered inline so a reviewer reads them in dist/.
   * @default - none: the chart's own (an application's published chart has no values)
   */
  readonly values?: Readonly<Record<string, unknown>>;
}

/** A folder of a git repository (this one): plain manifests, or what a plugin generates from it. */
export interface RepositoryPathSource {
  readonly kind: 'path';
  /** Repository URL (SSH, as the repository Secret names it). */
  readonly repoURL: string;
  /** Branch the Application follows. */
  readonly targetRevision: string;
  /** Folder inside the repository. */
  readonly path: string;
  /**
   * Only the files of the folder matching this glob (Argo CD's `directory.include`).
   * @default - every file of the folder
   */
  readonly include?: string;
  /**
   * Config Management Plugin that generates the manifests (the sops plugin for encrypted Secrets).
   * @default - plain manifests
   */
  readonly plugin?: string;
  /**
   * The plugin's variables (Argo CD's `plugin.env`: the plugin reads each as `ARGOCD_ENV_<name>`).
   * @default - none
   */
  readonly pluginEnv?: Readonly<Record<string, string>>;
}

/** Where an Application's manifests come from. */
export type ArgoCdApplicationSource = HelmChartSource | RepositoryPathSource;

export interface ArgoCdApplicationProps {
  /** Application name (for a Helm source, usually the release name too). */
  readonly name: string;
  /** Namespace of Argo CD, where the Application object lives. */
  readonly controllerNamespace: string;
  /** The AppProject the Application belongs to. */
  readonly project: string;
  /** One source, or several synced as one Application (a chart's file and its encrypted Secrets). */
  readonly sources: readonly [ArgoCdApplicationSource, ...ArgoCdApplicationSource[]];
  /** Namespace objects without one are installed into. */
  readonly destinationNamespace: string;
  /**
   * Sync wave of the Application in its parent's sync: lower waves are synced, and healthy, first (1.3.4).
   * @default - no annotation (Argo CD's wave 0); the root Application has no parent
   */
  readonly syncWave?: number;
  /** Sync automatically with prune and self-heal (live environments). */
  readonly automated: boolean;
  /**
   * Only an operator syncs it, after review (OPERATOR_SYNC_ANNOTATION): never automated, and
   * annotated so the app of apps' health check reads its health, not its sync status.
   * @default false
   */
  readonly syncedByOperator?: boolean;
  /**
   * Argo CD creates the destination namespace on install (`CreateNamespace=true`), with the
   * Pod Security labels of src/contract/security-context.ts.
   * @default false
   */
  readonly createNamespace?: boolean;
  /**
   * Further Argo CD sync options, after `CreateNamespace=true`, e.g. `ServerSideApply=true`
   * for charts whose CRDs are too large for a client-side apply annotation.
   * @default - none
   */
  readonly syncOptions?: readonly string[];
  /**
   * Fields of the Application's objects Argo CD does not compare, each with its upstream
   * reason in a comment where it is set.
   * @default - none
   */
  readonly ignoreDifferences?: readonly ApplicationSpecIgnoreDifferences[];
  /**
   * Seconds the sync retries may span before the Application is failed.
   * @default WAITS_SECONDS.infrastructurePodsReady (300), syncPolicy's default
   */
  readonly retryBudgetSeconds?: number;
  /**
   * Annotations of Argo CD's other controllers (the notifications' subscriptions), after the sync wave.
   * @default - none
   */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** Argo CD's form of one source: a Helm chart's `chart`/`helm`, or a path's `directory`/`plugin`. */
function sourceSpec(source: ArgoCdApplicationSource): ApplicationSpecSources {
  if (source.kind === 'helm') {
    return {
      repoUrl: source.chart.repoURL,
      chart: source.chart.chart,
      targetRevision: source.chart.version,
      helm: { releaseName: source.releaseName, ...(source.values === undefined ? {} : { valuesObject: source.values }) },
    };
  }
  return {
    repoUrl: source.repoURL,
    targetRevision: source.targetRevision,
    path: source.path,
    ...(source.include === undefined ? {} : { directory: { include: source.include } }),
    ...(source.plugin === undefined
      ? {}
      : {
          plugin: {
            name: source.plugin,
            ...(source.pluginEnv === undefined ? {} : { env: Object.entries(source.pluginEnv).map(([name, value]) => ({ name, value })) }),
          },
        }),
  };
}

/**
 * The one definition of an Application of the platform, as plain props: the construct
 * renders it, and the bootstrap (Pulumi, the e2e harness), which does not run a chart,
 * creates the root Application from the same function.
 */
export function applicationProps(props: ArgoCdApplicationProps): ApplicationProps {
  const createNamespace = props.createNamespace ?? false;
  const syncOptions = [...(createNamespace ? ['CreateNamespace=true'] : []), ...(props.syncOptions ?? [])];
  const ignoreDifferences = [...(props.ignoreDifferences ?? [])];
  const sources = props.sources.map(sourceSpec);
  const operator = props.syncedByOperator ?? false;
  const annotations = {
    ...(props.syncWave === undefined ? {} : { [SYNC_WAVE_ANNOTATION]: String(props.syncWave) }),
    ...(operator ? { [OPERATOR_SYNC_ANNOTATION.key]: OPERATOR_SYNC_ANNOTATION.value } : {}),
    ...props.annotations,
  };
  return {
    metadata: {
      name: props.name,
      namespace: props.controllerNamespace,
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
    },
    spec: {
      project: props.project,
      ...(sources.length === 1 ? { source: sources[0]! } : { sources }),
      destination: { server: IN_CLUSTER, namespace: props.destinationNamespace },
      ...(ignoreDifferences.length === 0 ? {} : { ignoreDifferences }),
      syncPolicy: syncPolicy({
        automated: props.automated && !operator,
        syncOptions,
        ...(props.retryBudgetSeconds === undefined ? {} : { retryBudgetSeconds: props.retryBudgetSeconds }),
        ...(createNamespace ? { namespaceLabels: namespacePodSecurity(props.destinationNamespace) } : {}),
      }),
    },
  };
}

/**
 * An Argo CD Application of the platform: a Helm chart at an exact version or a folder of
 * this repository, in its project and sync wave, with the platform's sync policy (automated
 * where the environment syncs itself, retries bounded by their budget).
 */
export class ArgoCdApplication extends Application {
  constructor(scope: Construct, id: string, props: ArgoCdApplicationProps) {
    super(scope, id, applicationProps(props));
  }
}
