import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-28';
import { APPLICATION_USER, DISRUPTION, HTTP_PORT_NAME, REVISION_HISTORY_LIMIT, VERSION_FILE } from '../contract/choices';
import { LABELS, PORTS, PROBES, ROLLING_UPDATE, WAITS_SECONDS } from '../contract/contract';
import type { Resources } from '../environments';

/** `250m` stays `250m`, `1` stays `1`: the manifest shows what the environment says. */
function cpu(text: string): kplus.Cpu {
  return text.endsWith('m') ? kplus.Cpu.millis(Number(text.slice(0, -1))) : kplus.Cpu.units(Number(text));
}

/** Validated quantities (schema) as cdk8s-plus resources; memory renders in Mi. */
export function containerResources(resources: Resources): kplus.ContainerResources {
  return {
    cpu: { request: cpu(resources.requests.cpu), limit: cpu(resources.limits.cpu) },
    memory: {
      request: Size.mebibytes(resources.requests.memory.mebibytes),
      limit: Size.mebibytes(resources.limits.memory.mebibytes),
    },
    ephemeralStorage: {},
  };
}


export interface ApplicationWorkloadProps {
  /** Deployment name: the application name, or `<application>-<unit>` for blue-green (2.1). */
  readonly name: string;
  /** Namespace of the Deployment. */
  readonly namespace: string;
  /** Value of the `app` label: the application name. */
  readonly application: string;
  /** Value of the `version` label: `blue` / `green` for blue-green units, else SINGLE_UNIT_VERSION. */
  readonly version: string;
  /**
   * Whether the Deployment's selector includes `version`. Blue-green units must select
   * only their own pods; a single unit selects by `app` alone, so that a later change of
   * strategy does not hit the selector's immutability.
   * @default false
   */
  readonly selectVersion?: boolean;
  /** Full image reference, `<registry>/<project>/<application>:<tag>`. */
  readonly image: string;
  /** Pods kept running. */
  readonly replicas: number;
  /** Requests and limits of the application container. */
  readonly resources: Resources;
  /** Secret in the namespace with the registry credentials (5.3). */
  readonly imagePullSecret: string;
  /** Identity of the pods; its token is not mounted. */
  readonly serviceAccount: kplus.IServiceAccount;
  /**
   * Plain configuration the application reads from its environment (addresses, not secrets).
   * @default - none
   */
  readonly environment?: Readonly<Record<string, EnvironmentValue>>;
  /**
   * Labels of the pods the unit's PodDisruptionBudget protects: in canary mode Flagger's
   * `<app>-primary` pods, which carry `app: <app>-primary` and serve the traffic.
   * @default - this Deployment's pods (its selector)
   */
  readonly disruptionBudgetLabels?: Readonly<Record<string, string>>;
  /**
   * How the Deployment replaces its pods.
   * @default - a rolling update, ROLLING_UPDATE.maxUnavailable and ROLLING_UPDATE.maxSurge (8)
   */
  readonly strategy?: kplus.DeploymentStrategy;
}

/** A key of a Secret, referenced by name: the value never enters the manifest. */
export interface SecretKeyReference {
  /** Secret in the workload's namespace. */
  readonly secret: string;
  /** Key inside the Secret. */
  readonly key: string;
}

/** A plain value (an address, a port) or a Secret's key (a credential). */
export type EnvironmentValue = string | SecretKeyReference;

/**
 * The application's Deployment (2.1, 2.2): RollingUpdate 1/1 unless its strategy says otherwise, port 8080 named `http`,
 * liveness on /health and readiness on /ready, a restricted security context and an
 * explicit revision history for orchestrator-level rollback (1.5).
 */
export class ApplicationWorkload extends kplus.Deployment {
  /** Labels on every pod of this workload. */
  public readonly podLabels: Readonly<Record<string, string>>;
  /** At most one of the unit's pods evicted at a time (DISRUPTION, src/contract/choices.ts). */
  public readonly disruptionBudget: k8s.KubePodDisruptionBudget;

  constructor(scope: Construct, id: string, props: ApplicationWorkloadProps) {
    const podLabels = { [LABELS.app]: props.application, [LABELS.version]: props.version };
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: podLabels },
      podMetadata: { labels: podLabels },
      select: false,
      replicas: props.replicas,
      // A rollout that has not progressed within the 300 s rollout wait is marked
      // Progressing=False, which is what DeploymentFailed (2.4) watches.
      progressDeadline: Duration.seconds(WAITS_SECONDS.rolloutStatus),
      minReady: Duration.seconds(0),
      strategy:
        props.strategy ??
        kplus.DeploymentStrategy.rollingUpdate({
          maxUnavailable: kplus.PercentOrAbsolute.absolute(ROLLING_UPDATE.maxUnavailable),
          maxSurge: kplus.PercentOrAbsolute.absolute(ROLLING_UPDATE.maxSurge),
        }),
      serviceAccount: props.serviceAccount,
      automountServiceAccountToken: false,
      dockerRegistryAuth: kplus.Secret.fromSecretName(scope, `${id}PullSecret`, props.imagePullSecret),
      securityContext: { ensureNonRoot: true, user: APPLICATION_USER, group: APPLICATION_USER },
      containers: [
        {
          name: props.application,
          image: props.image,
          imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
          // Where the image keeps its version file (1.3.3, VERSION_FILE).
          workingDir: VERSION_FILE.workingDir,
          ports: [{ name: HTTP_PORT_NAME, number: PORTS.application, protocol: kplus.Protocol.TCP }],
          envVariables: Object.fromEntries(
            Object.entries(props.environment ?? {}).map(([key, value]) => [
              key,
              typeof value === 'string'
                ? kplus.EnvValue.fromValue(value)
                : kplus.EnvValue.fromSecretValue({ secret: kplus.Secret.fromSecretName(scope, `${id}${key}`, value.secret), key: value.key }),
            ]),
          ),
          liveness: kplus.Probe.fromHttpGet(PROBES.liveness.path, {
            port: PROBES.liveness.port,
            initialDelaySeconds: Duration.seconds(PROBES.liveness.initialDelaySeconds),
            periodSeconds: Duration.seconds(PROBES.liveness.periodSeconds),
          }),
          readiness: kplus.Probe.fromHttpGet(PROBES.readiness.path, {
            port: PROBES.readiness.port,
            initialDelaySeconds: Duration.seconds(PROBES.readiness.initialDelaySeconds),
            periodSeconds: Duration.seconds(PROBES.readiness.periodSeconds),
          }),
          resources: containerResources(props.resources),
          securityContext: {
            ensureNonRoot: true,
            user: APPLICATION_USER,
            group: APPLICATION_USER,
            privileged: false,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: [kplus.Capability.ALL] },
            seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT },
          },
        },
      ],
    });
    this.podLabels = podLabels;
    const selector = props.selectVersion ? podLabels : { [LABELS.app]: props.application };
    this.select(kplus.LabelSelector.of({ labels: selector }));
    const manifest = ApiObject.of(this);
    // cdk8s-plus has no field for it; rollback needs the revisions kept (1.5).
    manifest.addJsonPatch(JsonPatch.add('/spec/revisionHistoryLimit', REVISION_HISTORY_LIMIT));
    // cdk8s-plus labels pods with a hash of the construct path; our selectors use
    // app/version only, and a path-derived label would change on a construct rename.
    manifest.addJsonPatch(JsonPatch.remove('/spec/template/metadata/labels/cdk8s.io~1metadata.addr'));
    // Spread a unit's pods across nodes. The selector takes app and version from each
    // incoming pod (matchLabelKeys), so the same template also spreads Flagger's
    // `<app>-primary` copy, whose app label differs (Kubernetes: "Pod Topology Spread
    // Constraints", matchLabelKeys, on by default since 1.27); the labelSelector names a key
    // the matchLabelKeys do not, as the API server requires (a pod with the same key in
    // both is refused: seen on the e2e cluster).
    manifest.addJsonPatch(
      JsonPatch.add('/spec/template/spec/topologySpreadConstraints', [
        {
          ...DISRUPTION.spread,
          labelSelector: { matchExpressions: [{ key: 'pod-template-hash', operator: 'Exists' }] },
          matchLabelKeys: [LABELS.app, LABELS.version],
        },
      ]),
    );
    this.disruptionBudget = new k8s.KubePodDisruptionBudget(scope, `${id}-disruption-budget`, {
      metadata: { name: props.name, namespace: props.namespace, labels: podLabels },
      spec: {
        maxUnavailable: k8s.IntOrString.fromNumber(DISRUPTION.maxUnavailable),
        selector: { matchLabels: { ...(props.disruptionBudgetLabels ?? selector) } },
      },
    });
  }
}
