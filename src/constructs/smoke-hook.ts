import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { APPLICATION_USER, PORTS, SMOKE } from '../constants';
import { resourceRequirements } from './resource-requirements';
import type { Resources } from '../environments';
import { DEFAULT_BOOTSTRAP_SERVERS, SMOKE_VARIABLES } from '../smoke/settings';
import { restrictedContainer } from '../pod-security';

/** Argo CD runs a resource with this annotation as a hook instead of syncing it. */
export const HOOK_ANNOTATION = 'argocd.argoproj.io/hook';
/** When Argo CD deletes a hook resource. */
export const HOOK_DELETE_POLICY_ANNOTATION = 'argocd.argoproj.io/hook-delete-policy';


/** Ports the pod reaches outside HTTP: DNS (53), SQL Server and Kafka. */
const DNS_PORT = 53;

export interface SmokeHookProps {
  /** Name of the Job, its ServiceAccount and NetworkPolicy: `<application>-smoke`. */
  readonly name: string;
  /** Namespace of the application. */
  readonly namespace: string;
  /**
   * Labels of the Job and its pod; they must not select as the application does
   * (`app: <application>`), or the application's Service would send traffic to the hook.
   */
  readonly labels: Readonly<Record<string, string>>;
  /** Labels of the application's pods the hook may reach on 8080; `{}` for every pod of the namespace. */
  readonly applicationPodLabels: Readonly<Record<string, string>>;
  /** The smoke image, `<registry>/<project>/<application>-smoke:<tag>`. */
  readonly image: string;
  /** Secret with the registry credentials (5.3). */
  readonly imagePullSecret: string;
  /** `{base_url}` the steps call: the application's Service inside the cluster. */
  readonly baseUrl: string;
  /**
   * Secret holding SMOKE_USERNAME, SMOKE_PASSWORD, DATABASE_HOST (unless `databaseHost`
   * is given), DATABASE_USER, DATABASE_PASSWORD, KAFKA_USERNAME and KAFKA_PASSWORD, one key
   * per variable.
   */
  readonly secretName: string;
  /**
   * SQL Server host, when known to the chart.
   * @default - read from the Secret's DATABASE_HOST key
   */
  readonly databaseHost?: string;
  /**
   * SQL Server port.
   * @default 1433
   */
  readonly databasePort?: number;
  /**
   * Kafka bootstrap servers, `host:port[,host:port]`.
   * @default "kafka-cluster-kafka-bootstrap:9092" (4.1 step 5)
   */
  readonly brokerBootstrapServers?: string;
  /**
   * Requests and limits of the smoke container.
   * @default SMOKE.resources
   */
  readonly resources?: Resources;
}

/**
 * The smoke test of 4.1 as an Argo CD PostSync hook: after every sync, a Job runs the
 * smoke CLI of this repository (packaged as the `-smoke` image) against the application;
 * a failing step fails the Job and so the sync. BeforeHookCreation keeps the last run
 * (and its logs) until the next sync replaces it. A NetworkPolicy lets it reach only
 * DNS, the application and the database and broker ports.
 */
export class SmokeHook extends Construct {
  /** The hook Job. */
  public readonly job: k8s.KubeJob;
  /** Seconds the Job may run: every step's timeout plus the start-up allowance. */
  public readonly deadlineSeconds: number;

  constructor(scope: Construct, id: string, props: SmokeHookProps) {
    super(scope, id);
    const databasePort = props.databasePort ?? PORTS.database;
    const brokerBootstrapServers = props.brokerBootstrapServers ?? DEFAULT_BOOTSTRAP_SERVERS;
    const resources = props.resources ?? SMOKE.resources;
    const stepsMs = Object.values(SMOKE.stepTimeoutMs).reduce((sum, ms) => sum + ms, 0);
    this.deadlineSeconds = Math.ceil(stepsMs / 1000) + SMOKE.hook.startupAllowanceSeconds;
    const metadata = { name: props.name, namespace: props.namespace, labels: { ...props.labels } };

    new k8s.KubeServiceAccount(this, 'service-account', { metadata, automountServiceAccountToken: false });

    const fromSecret = (variable: string): k8s.EnvVar => ({
      name: variable,
      valueFrom: { secretKeyRef: { name: props.secretName, key: variable } },
    });
    const env: k8s.EnvVar[] = [
      fromSecret(SMOKE_VARIABLES.username),
      fromSecret(SMOKE_VARIABLES.password),
      props.databaseHost === undefined
        ? fromSecret(SMOKE_VARIABLES.databaseHost)
        : { name: SMOKE_VARIABLES.databaseHost, value: props.databaseHost },
      { name: SMOKE_VARIABLES.databasePort, value: String(databasePort) },
      fromSecret(SMOKE_VARIABLES.databaseUser),
      fromSecret(SMOKE_VARIABLES.databasePassword),
      { name: SMOKE_VARIABLES.bootstrapServers, value: brokerBootstrapServers },
      // The listeners authenticate every client with SCRAM-SHA-512 (src/constructs/kafka-cluster.ts).
      fromSecret(SMOKE_VARIABLES.brokerUsername),
      fromSecret(SMOKE_VARIABLES.brokerPassword),
    ];

    this.job = new k8s.KubeJob(this, 'job', {
      metadata: {
        ...metadata,
        annotations: { [HOOK_ANNOTATION]: 'PostSync', [HOOK_DELETE_POLICY_ANNOTATION]: 'BeforeHookCreation' },
      },
      spec: {
        backoffLimit: SMOKE.hook.backoffLimit,
        activeDeadlineSeconds: this.deadlineSeconds,
        template: {
          metadata: { labels: { ...props.labels } },
          spec: {
            restartPolicy: 'Never',
            serviceAccountName: props.name,
            automountServiceAccountToken: false,
            imagePullSecrets: [{ name: props.imagePullSecret }],
            securityContext: {
              runAsNonRoot: true,
              runAsUser: APPLICATION_USER,
              runAsGroup: APPLICATION_USER,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: 'smoke',
                image: props.image,
                imagePullPolicy: 'IfNotPresent',
                args: ['--base-url', props.baseUrl],
                env,
                resources: resourceRequirements(resources),
                securityContext: { ...restrictedContainer(APPLICATION_USER, APPLICATION_USER), privileged: false },
              },
            ],
          },
        },
      },
    });

    const tcp = (port: number) => ({ protocol: 'TCP', port: k8s.IntOrString.fromNumber(port) });
    new k8s.KubeNetworkPolicy(this, 'network-policy', {
      metadata,
      spec: {
        podSelector: { matchLabels: { ...props.labels } },
        policyTypes: ['Ingress', 'Egress'],
        // Nothing calls the hook; it calls out.
        ingress: [],
        egress: [
          {
            to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
            ports: [{ protocol: 'UDP', port: k8s.IntOrString.fromNumber(DNS_PORT) }, tcp(DNS_PORT)],
          },
          { to: [{ podSelector: podSelectorOf(props.applicationPodLabels) }], ports: [tcp(PORTS.application)] },
          // The database and broker namespaces belong to their charts; the ports are the contract's.
          { to: [{ namespaceSelector: {} }], ports: [tcp(databasePort), tcp(PORTS.broker)] },
        ],
      },
    });
  }
}

/** `{}` selects every pod of the namespace; otherwise the pods carrying all of `labels`. */
function podSelectorOf(labels: Readonly<Record<string, string>>): k8s.LabelSelector {
  return Object.keys(labels).length === 0 ? {} : { matchLabels: { ...labels } };
}
