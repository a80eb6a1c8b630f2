import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { IMAGES } from '../contract/images';
import { DATABASE, PLATFORM_NAMESPACES } from '../contract/choices';
import { PORTS, SMOKE } from '../contract/contract';
import { resourceRequirements } from './resource-requirements';
import type { Resources } from '../environments';
import { DEFAULT_BOOTSTRAP_SERVERS, SMOKE_VARIABLES } from '../contract/naming';
import { restrictedContainer, restrictedPod } from '../contract/security-context';
import { CLUSTER_DNS, STRIMZI } from '../contract/upstream';

/** Argo CD runs a resource with this annotation as a hook instead of syncing it. */
export const HOOK_ANNOTATION = 'argocd.argoproj.io/hook';
/** When Argo CD deletes a hook resource. */
export const HOOK_DELETE_POLICY_ANNOTATION = 'argocd.argoproj.io/hook-delete-policy';

/** busybox's unprivileged user (`nobody`). */
const NOBODY = 65534;
/** The user Strimzi's Kafka image runs as. */
const STRIMZI_USER = 1001;

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
  /** The SQL Server pods the database step reaches (on `databasePort`): their namespace and labels. */
  readonly databasePods: PodsInNamespace;
  /** The Kafka broker pods the broker step reaches (on 9092): their namespace and labels. */
  readonly brokerPods: PodsInNamespace;
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
   * Requests and limits of each shell step (HTTP, database, the last line).
   * @default SMOKE.resources
   */
  readonly resources?: Resources;
}

/** Pods of one namespace, by labels. */
export interface PodsInNamespace {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** The variable the HTTP step reads `{base_url}` from. */
export const BASE_URL_VARIABLE = 'SMOKE_BASE_URL';
/** The init container of the HTTP step (4.1 steps 1 to 3), the first. */
export const HTTP_STEP_CONTAINER = 'http';
/** The init container of the database step (4.1 step 4), the second. */
export const DATABASE_STEP_CONTAINER = 'database';
/** The init container of the broker step (4.1 step 5), the third. */
export const BROKER_STEP_CONTAINER = 'broker';
/** Where the broker step writes its client configuration (an emptyDir: the root filesystem is read-only). */
const SCRATCH = { volume: 'scratch', mountPath: '/tmp' } as const;
const seconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * 4.1 steps 1 to 3 for busybox's `wget` (also GNU wget's options, so a test runs it): GET
 * /health, POST the login as JSON and read the token, GET /declarations with it. An HTTP
 * error status fails `wget`, and so the step; each failure names its step.
 */
export function httpStepScript(): string {
  const { paths, stepTimeoutMs: timeout } = SMOKE;
  return [
    'set -u',
    `base="$${BASE_URL_VARIABLE}"`,
    // JSON string escaping for the credentials: backslash and double quote.
    "esc() { printf '%s' \"$1\" | sed 's/\\\\/\\\\\\\\/g; s/\"/\\\\\"/g'; }",
    `wget -q -O /dev/null -T ${seconds(timeout.health)} "$base${paths.health}" || { echo 'smoke: health failed' >&2; exit 1; }`,
    `body=$(printf '{"username":"%s","password":"%s"}' "$(esc "$${SMOKE_VARIABLES.username}")" "$(esc "$${SMOKE_VARIABLES.password}")")`,
    `token=$(wget -q -O - -T ${seconds(timeout.login)} --header='Content-Type: application/json' --post-data="$body" "$base${paths.login}" | sed -n 's/.*"token"[[:space:]]*:[[:space:]]*"\\([^"]*\\)".*/\\1/p')`,
    `[ -n "$token" ] || { echo 'smoke: login failed or returned no token' >&2; exit 1; }`,
    `wget -q -O /dev/null -T ${seconds(timeout.declarations)} --header="Authorization: Bearer $token" "$base${paths.declarations}" || { echo 'smoke: declarations failed' >&2; exit 1; }`,
    "echo 'smoke: health, login, declarations passed'",
  ].join('\n');
}

/** 4.1 step 4: the database answers the smoke query with the smoke user's login. */
export function databaseStepScript(): string {
  const v = SMOKE_VARIABLES;
  return [
    // The password through sqlcmd's environment (SQLCMDPASSWORD), not its command line.
    `SQLCMDPASSWORD="$${v.databasePassword}" ${DATABASE.sqlcmd} -S "$${v.databaseHost},$${v.databasePort}" -U "$${v.databaseUser}" -C -b -l ${seconds(SMOKE.stepTimeoutMs.database)} -Q "${SMOKE.databaseQuery}" > /dev/null || { echo 'smoke: database failed' >&2; exit 1; }`,
    "echo 'smoke: database passed'",
  ].join('\n');
}

/**
 * 4.1 step 5: a Kafka metadata request (API versions) to the bootstrap address, as the smoke
 * user (SCRAM-SHA-512). The credentials go into the client's properties file as a JAAS value:
 * `jaas` escapes each `\` and `"` for JAAS (a quoted string) and again each `\` for the
 * properties file (Properties.load), in POSIX sh alone (the image's tools are not known).
 */
export function brokerStepScript(): string {
  const v = SMOKE_VARIABLES;
  const config = `${SCRATCH.mountPath}/client.properties`;
  return [
    // b and q: a backslash and a double quote, so the escapes read plainly.
    "jaas() {",
    "  b='\\'; q='\"'; v=$1; out=",
    '  while [ -n "$v" ]; do',
    '    rest=${v#?}; c=${v%"$rest"}; v=$rest',
    '    case $c in "$b") out=$out$b$b$b$b ;; "$q") out=$out$b$b$q ;; *) out=$out$c ;; esac',
    '  done',
    '  printf %s "$out"',
    '}',
    `printf '%s\\n' 'security.protocol=SASL_PLAINTEXT' 'sasl.mechanism=SCRAM-SHA-512' "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\\"$(jaas "$${v.brokerUsername}")\\" password=\\"$(jaas "$${v.brokerPassword}")\\";" > ${config}`,
    `${STRIMZI.brokerPods.apiVersionsTool} --bootstrap-server "$${v.bootstrapServers}" --command-config ${config} > /dev/null || { echo 'smoke: broker failed' >&2; exit 1; }`,
    "echo 'smoke: broker passed'",
  ].join('\n');
}

/**
 * The smoke test of 4.1 as an Argo CD PostSync hook: after every sync, a Job runs the
 * contract's steps in order against the application, each an init container, so the first
 * failing step stops the run and fails the Job (and so the sync); the Job's one container
 * then prints 4.1 step 6's message. Every image is one its upstream publishes (convergence
 * item 12): busybox for HTTP, SQL Server's own image (sqlcmd) for the database, Strimzi's
 * Kafka image (the brokers') for the broker; the project's `npm run smoke` runs the same
 * steps from a workstation. BeforeHookCreation keeps the last run (and its logs) until the
 * next sync replaces it. A NetworkPolicy lets it reach only DNS, the application, the
 * database server (1433, in its namespace) and the brokers (9092, in theirs).
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
    const resources = resourceRequirements(props.resources ?? SMOKE.resources);
    const stepsMs = Object.values(SMOKE.stepTimeoutMs).reduce((sum, ms) => sum + ms, 0);
    this.deadlineSeconds = Math.ceil(stepsMs / 1000) + SMOKE.hook.startupAllowanceSeconds;
    const metadata = { name: props.name, namespace: props.namespace, labels: { ...props.labels } };

    new k8s.KubeServiceAccount(this, 'service-account', { metadata, automountServiceAccountToken: false });

    const fromSecret = (variable: string): k8s.EnvVar => ({
      name: variable,
      valueFrom: { secretKeyRef: { name: props.secretName, key: variable } },
    });
    const value = (name: string, text: string): k8s.EnvVar => ({ name, value: text });
    const shell = (script: string) => ['/bin/sh', '-c', script];
    // Each step runs as the user its image is built for, restricted (SQL Server's mssql user,
    // Strimzi's kafka user 1001, busybox as nobody).
    const steps: k8s.Container[] = [
      {
        name: HTTP_STEP_CONTAINER,
        image: IMAGES.busybox,
        imagePullPolicy: 'IfNotPresent',
        command: shell(httpStepScript()),
        env: [value(BASE_URL_VARIABLE, props.baseUrl), fromSecret(SMOKE_VARIABLES.username), fromSecret(SMOKE_VARIABLES.password)],
        resources,
        securityContext: restrictedContainer(NOBODY, NOBODY),
      },
      {
        name: DATABASE_STEP_CONTAINER,
        image: IMAGES.sqlServer,
        imagePullPolicy: 'IfNotPresent',
        command: shell(databaseStepScript()),
        env: [
          props.databaseHost === undefined ? fromSecret(SMOKE_VARIABLES.databaseHost) : value(SMOKE_VARIABLES.databaseHost, props.databaseHost),
          value(SMOKE_VARIABLES.databasePort, String(databasePort)),
          fromSecret(SMOKE_VARIABLES.databaseUser),
          fromSecret(SMOKE_VARIABLES.databasePassword),
        ],
        resources,
        securityContext: restrictedContainer(DATABASE.user, DATABASE.user),
      },
      {
        name: BROKER_STEP_CONTAINER,
        image: IMAGES.strimziKafka,
        imagePullPolicy: 'IfNotPresent',
        command: shell(brokerStepScript()),
        env: [
          value(SMOKE_VARIABLES.bootstrapServers, brokerBootstrapServers),
          // The listeners authenticate every client with SCRAM-SHA-512 (src/constructs/kafka-cluster.ts).
          fromSecret(SMOKE_VARIABLES.brokerUsername),
          fromSecret(SMOKE_VARIABLES.brokerPassword),
          value('KAFKA_HEAP_OPTS', SMOKE.brokerStep.heap),
          value('LOG_DIR', `${SCRATCH.mountPath}/logs`),
        ],
        resources: resourceRequirements(SMOKE.brokerStep.resources),
        securityContext: restrictedContainer(STRIMZI_USER, 0),
        volumeMounts: [{ name: SCRATCH.volume, mountPath: SCRATCH.mountPath }],
      },
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
            securityContext: restrictedPod(),
            initContainers: steps,
            containers: [
              {
                name: 'passed',
                image: IMAGES.busybox,
                imagePullPolicy: 'IfNotPresent',
                command: ['echo', SMOKE.passedMessage],
                resources,
                securityContext: restrictedContainer(NOBODY, NOBODY),
              },
            ],
            volumes: [{ name: SCRATCH.volume, emptyDir: { sizeLimit: k8s.Quantity.fromString('16Mi') } }],
          },
        },
      },
    });

    const tcp = (port: number) => ({ protocol: 'TCP', port: k8s.IntOrString.fromNumber(port) });
    // A namespace by the label Kubernetes puts on every namespace, and pods of it.
    const podsIn = (pods: PodsInNamespace): k8s.NetworkPolicyPeer => ({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': pods.namespace } },
      podSelector: { matchLabels: { ...pods.labels } },
    });
    new k8s.KubeNetworkPolicy(this, 'network-policy', {
      metadata,
      spec: {
        podSelector: { matchLabels: { ...props.labels } },
        policyTypes: ['Ingress', 'Egress'],
        // Nothing calls the hook; it calls out.
        ingress: [],
        egress: [
          {
            to: [podsIn({ namespace: PLATFORM_NAMESPACES.kubeSystem, labels: CLUSTER_DNS.podLabels })],
            ports: [{ protocol: 'UDP', port: k8s.IntOrString.fromNumber(CLUSTER_DNS.port) }, tcp(CLUSTER_DNS.port)],
          },
          { to: [{ podSelector: podSelectorOf(props.applicationPodLabels) }], ports: [tcp(PORTS.application)] },
          // The database server and the brokers only, each in its own namespace: not any pod
          // of the cluster that happens to listen on 1433 or 9092.
          { to: [podsIn(props.databasePods)], ports: [tcp(databasePort)] },
          { to: [podsIn(props.brokerPods)], ports: [tcp(PORTS.broker)] },
        ],
      },
    });
  }
}

/** `{}` selects every pod of the namespace; otherwise the pods carrying all of `labels`. */
function podSelectorOf(labels: Readonly<Record<string, string>>): k8s.LabelSelector {
  return Object.keys(labels).length === 0 ? {} : { matchLabels: { ...labels } };
}
