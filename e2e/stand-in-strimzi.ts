import type { KubeObject } from './kube-client';

/**
 * How Strimzi judges a Kafka cluster, its topics and its users, for the e2e stand-in
 * (e2e/stand-in-controllers.ts) to refuse what Strimzi refuses. Strimzi's operators are Java
 * programs that the e2e does not run (docs/e2e.md); these rules are
 * strimzi-kafka-operator 1.2.0's own, with the file each comes from, and messages as it writes
 * them. Pure functions: test/e2e-stand-in-strimzi.test.ts pins each rule.
 */

/** The node pools of one Kafka cluster: those of its namespace labelled `strimzi.io/cluster: <name>`. */
export function poolsOf(kafka: KubeObject, pools: readonly KubeObject[]): KubeObject[] {
  return pools.filter((pool) => pool.metadata.namespace === kafka.metadata.namespace && pool.metadata.labels?.['strimzi.io/cluster'] === kafka.metadata.name);
}

/** The brokers a cluster runs: the replicas of its pools with the broker role. */
export function brokerCount(pools: readonly KubeObject[]): number {
  return pools.filter((pool) => (pool.spec?.roles ?? []).includes('broker')).reduce((sum, pool) => sum + (pool.spec?.replicas ?? 0), 0);
}

/**
 * Why the cluster operator refuses a Kafka cluster (reason InvalidResourceException), or
 * undefined (cluster-operator/.../model/nodepools/NodePoolUtils.java `validateNodePools`,
 * `validateKRaftProcessRoles`): it needs a pool with replicas, every pool a role, and with
 * replicas at least one broker and one controller.
 */
export function kafkaProblem(kafka: KubeObject, pools: readonly KubeObject[]): string | undefined {
  const name = kafka.metadata.name;
  if (pools.length === 0 || !pools.some((pool) => (pool.spec?.replicas ?? 0) > 0)) {
    return (
      `KafkaNodePools are enabled, but KafkaNodePools for Kafka cluster ${name} either don't exist or have 0 replicas. ` +
      'Please make sure at least one KafkaNodePool resource exists, is in the same namespace as the Kafka resource, has at least one replica, and has the strimzi.io/cluster label set to the name of the Kafka resource.'
    );
  }
  const errors: string[] = [];
  let broker = false;
  let controller = false;
  for (const pool of pools) {
    const roles: string[] = pool.spec?.roles ?? [];
    if (roles.length === 0) errors.push(`KafkaNodePool ${pool.metadata.name} has no role defined in .spec.roles`);
    else if ((pool.spec?.replicas ?? 0) > 0) {
      broker ||= roles.includes('broker');
      controller ||= roles.includes('controller');
    }
  }
  if (!broker) errors.push('At least one KafkaNodePool with the broker role and at least one replica is required when KRaft mode is enabled');
  if (!controller) errors.push('At least one KafkaNodePool with the controller role and at least one replica is required when KRaft mode is enabled');
  return errors.length > 0 ? `The Kafka cluster ${name} is invalid: [${errors.join(', ')}]` : undefined;
}

/** Why Strimzi refuses a resource: its condition's reason (the exception's class, StatusUtils.java) and message. */
export interface StrimziRefusal {
  readonly reason: string;
  readonly message: string;
}

/**
 * The Kafka versions Strimzi 1.2.0 supports (its kafka-versions.yaml, `supported: true`), the
 * last its default: a Kafka without `spec.kafka.version` runs that one.
 */
export const STRIMZI_SUPPORTED_KAFKA_VERSIONS = ['4.2.0', '4.2.1', '4.3.0', '4.3.1'] as const;

/**
 * Why the cluster operator refuses the Kafka's version, or undefined
 * (cluster-operator/.../model/KafkaVersion.java `Lookup.supportedVersion`, which
 * KRaftVersionChangeCreator and KafkaCluster.fromCrd call): one not supported, its message
 * listing the supported ones as Java prints their TreeSet.
 */
export function kafkaVersionProblem(kafka: KubeObject): string | undefined {
  const version = kafka.spec?.kafka?.version;
  if (version === undefined || (STRIMZI_SUPPORTED_KAFKA_VERSIONS as readonly string[]).includes(String(version))) return undefined;
  return `Unsupported Kafka.spec.kafka.version: ${version}. Supported versions are: [${[...STRIMZI_SUPPORTED_KAFKA_VERSIONS].sort().join(', ')}]`;
}

/** Listener ports Strimzi keeps for itself (ListenersValidator.java FORBIDDEN_PORTS: metrics 9404, JMX 9999), and the lowest a listener may take (LOWEST_ALLOWED_PORT_NUMBER: below it the control plane's 9090 and replication's 9091). */
const FORBIDDEN_LISTENER_PORTS = [9404, 9999];
const LOWEST_LISTENER_PORT = 9092;
/** GenericKafkaListener.java LISTENER_NAME_REGEX. */
const LISTENER_NAME = /^[a-z0-9]{1,11}$/;

/**
 * Why the cluster operator refuses the Kafka's listeners, or undefined
 * (cluster-operator/.../model/ListenersValidator.java `validateAndGetErrorMessages`, called by
 * KafkaCluster.fromCrd): names unique and of the pattern, ports unique, none reserved nor below
 * 9092. Upstream collects the errors in a HashSet, so its order may differ from this one's.
 */
export function listenersProblem(kafka: KubeObject): string | undefined {
  const listeners: Array<{ name: string; port: number }> = kafka.spec?.kafka?.listeners ?? [];
  const errors = new Set<string>();
  const names = [...new Set(listeners.map((l) => l.name))];
  if (names.length !== listeners.length) errors.add('every listener needs to have a unique name');
  const invalid = names.filter((name) => !LISTENER_NAME.test(name));
  if (invalid.length > 0) errors.add(`listener names [${invalid.join(', ')}] are invalid and do not match the pattern ${LISTENER_NAME.source}`);
  if (new Set(listeners.map((l) => l.port)).size !== listeners.length) errors.add('every listener needs to have a unique port number');
  for (const { port } of listeners) {
    if (FORBIDDEN_LISTENER_PORTS.includes(port) || port < LOWEST_LISTENER_PORT) errors.add(`port ${port} is forbidden and cannot be used`);
  }
  return errors.size > 0 ? `Listener configuration is not valid: [${[...errors].join(', ')}]` : undefined;
}

/** The replication settings KafkaCluster.fromCrd checks against the brokers (`validateIntConfigProperty`). */
const REPLICATION_PROPERTIES = ['default.replication.factor', 'offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'transaction.state.log.min.isr'];

/**
 * Why the cluster operator refuses the Kafka's replication settings, or undefined
 * (cluster-operator/.../model/KafkaCluster.java `validateIntConfigProperty`): none above the
 * brokers the node pools give it.
 */
export function replicationProblem(kafka: KubeObject, brokers: number): string | undefined {
  const config = kafka.spec?.kafka?.config ?? {};
  for (const property of REPLICATION_PROPERTIES) {
    if (config[property] === undefined) continue;
    const value = Number(config[property]);
    if (!Number.isInteger(value)) return `Property ${property} should be an integer`;
    if (value > brokers) return `Kafka configuration option '${property}' should be set to ${brokers}${brokers > 1 ? ' or less' : ''} because this cluster has only ${brokers} Kafka broker(s).`;
  }
  return undefined;
}

/**
 * Why the cluster operator refuses a Kafka, in the order its reconciliation meets the checks
 * (KafkaAssemblyOperator: the version change first, then KafkaClusterCreator's node pools, then
 * KafkaCluster.fromCrd's replication settings and listeners), or undefined. Every one is an
 * InvalidResourceException, the version's its subclass UnsupportedKafkaVersionException.
 */
export function kafkaRefusal(kafka: KubeObject, pools: readonly KubeObject[]): StrimziRefusal | undefined {
  const version = kafkaVersionProblem(kafka);
  if (version !== undefined) return { reason: 'UnsupportedKafkaVersionException', message: version };
  const message = kafkaProblem(kafka, pools) ?? replicationProblem(kafka, brokerCount(pools)) ?? listenersProblem(kafka);
  return message === undefined ? undefined : { reason: 'InvalidResourceException', message };
}

/**
 * The status of a Kafka the cluster operator still deploys (KafkaAssemblyOperator.java
 * `initialStatus`), which Argo CD's health check takes as Progressing, not Degraded.
 */
export const KAFKA_CREATING: StrimziRefusal = { reason: 'Creating', message: 'Kafka cluster is being deployed' };

/**
 * Whether every broker pod the cluster runs exists and is Ready: the cluster operator makes a
 * Kafka Ready only at the end of a reconciliation that waited for its pods
 * (KafkaReconciler.java `podsReady`).
 */
export function brokersReady(kafka: KubeObject, pools: readonly KubeObject[], pods: readonly KubeObject[]): boolean {
  const byName = new Map(pods.filter((pod) => pod.metadata.namespace === kafka.metadata.namespace).map((pod) => [pod.metadata.name, pod]));
  return brokerPodsOf(kafka, pools).every(({ metadata: { name } }) => {
    const pod = byName.get(name);
    return pod !== undefined && pod.metadata.deletionTimestamp === undefined && (pod.status?.conditions ?? []).some((c: { type?: string; status?: string }) => c.type === 'Ready' && c.status === 'True');
  });
}

/**
 * The namespace the Entity Operator's topic (KafkaTopic) or user (KafkaUser) operator of this
 * Kafka watches, or undefined when the Kafka does not run it (`spec.entityOperator.topicOperator`
 * or `userOperator` absent): then nothing reconciles those resources and their status stays as
 * it is (cluster-operator/.../model/EntityOperator.java `fromCrd`, EntityTopicOperator.java and
 * EntityUserOperator.java: `watchedNamespace`, by default the Kafka's namespace).
 */
export function entityOperatorNamespace(kafka: KubeObject, kind: 'KafkaTopic' | 'KafkaUser'): string | undefined {
  const operator = kafka.spec?.entityOperator?.[kind === 'KafkaTopic' ? 'topicOperator' : 'userOperator'];
  if (operator === undefined || operator === null) return undefined;
  return operator.watchedNamespace ?? kafka.metadata.namespace;
}

/**
 * Whether the cluster's authorization lets the User Operator manage ACLs
 * (cluster-operator/.../model/EntityUserOperator.java: `supportsAdminApi()` of the Kafka's
 * `authorization`; `simple` does, `custom` when it says so, none when there is none).
 */
export function aclsSupported(kafka: KubeObject): boolean {
  const authorization = kafka.spec?.kafka?.authorization;
  if (!authorization) return false;
  if (authorization.type === 'simple') return true;
  if (authorization.type === 'custom') return authorization.supportsAdminApi === true;
  return false;
}

/**
 * Why the User Operator refuses a KafkaUser, or undefined (user-operator/.../model/KafkaUserModel.java
 * `fromCrd`): simple ACL rules need a cluster whose authorization supports them.
 */
export function kafkaUserProblem(user: KubeObject, kafka: KubeObject): string | undefined {
  if (user.spec?.authorization?.type === 'simple' && !aclsSupported(kafka)) {
    return 'Simple authorization ACL rules are configured but not supported in the Kafka cluster configuration.';
  }
  return undefined;
}

/**
 * Why Kafka refuses to create a topic the Topic Operator asks for (reason KafkaError,
 * topic-operator/.../model/TopicOperatorException.java): more replicas than the cluster has
 * brokers (Kafka's InvalidReplicationFactorException).
 */
export function kafkaTopicProblem(topic: KubeObject, brokers: number): string | undefined {
  const replicas = topic.spec?.replicas;
  if (typeof replicas === 'number' && replicas > brokers) {
    return `org.apache.kafka.common.errors.InvalidReplicationFactorException: Replication factor: ${replicas} larger than available brokers: ${brokers}.`;
  }
  return undefined;
}

/**
 * The broker pods the cluster operator runs for a Ready cluster, as Strimzi 1.2.0 makes them
 * (cluster-operator/.../model/KafkaCluster.java `generatePodSets`, `KafkaPool`): one per
 * replica of each pool with the broker role, named `<cluster>-<pool>-<n>`, labelled with the
 * cluster, the pool and the node's roles (api/.../ResourceLabels.java), its container `kafka`
 * with /tmp an emptyDir (`strimzi-tmp`), and the container security context of the
 * `restricted` pod security provider the operator is given (RestrictedPodSecurityProvider.java).
 * Strimzi's owner is a StrimziPodSet, a kind the stand-in chart does not install: the pool
 * owns them here, as the controller that recreates one that is evicted.
 */
export function brokerPodsOf(kafka: KubeObject, pools: readonly KubeObject[]): KubeObject[] {
  const cluster = kafka.metadata.name;
  return pools
    .filter((pool) => (pool.spec?.roles ?? []).includes('broker'))
    .flatMap((pool) =>
      [...Array<number>(pool.spec?.replicas ?? 0).keys()].map((n): KubeObject => {
        const roles: string[] = pool.spec?.roles ?? [];
        return {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: `${cluster}-${pool.metadata.name}-${n}`,
            namespace: kafka.metadata.namespace,
            labels: {
              ...selectorLabels(kafka),
              'strimzi.io/pool-name': pool.metadata.name,
              'strimzi.io/broker-role': String(roles.includes('broker')),
              'strimzi.io/controller-role': String(roles.includes('controller')),
            },
            ownerReferences: [{ apiVersion: pool.apiVersion, kind: pool.kind, name: pool.metadata.name, uid: String(pool.metadata.uid), controller: true, blockOwnerDeletion: false }],
          },
          spec: {
            hostname: `${cluster}-${pool.metadata.name}-${n}`,
            securityContext: { fsGroup: 0 },
            containers: [
              {
                name: 'kafka',
                // Never pulled: kwok runs no container.
                image: 'quay.io/strimzi/kafka:e2e-stand-in',
                ports: brokerContainerPorts(kafka, roles),
                resources: pool.spec?.resources ?? {},
                volumeMounts: [{ name: 'strimzi-tmp', mountPath: '/tmp' }],
                securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
              },
            ],
            volumes: [{ name: 'strimzi-tmp', emptyDir: { medium: 'Memory', sizeLimit: '5Mi' } }],
          },
        } as unknown as KubeObject;
      }),
    );
}

/** The replication port's name (KafkaCluster.java REPLICATION_PORT_NAME). */
const REPLICATION_PORT_NAME = 'tcp-replication';

/** A listener's port name, on the brokers' containers and the Services (ListenersUtils.java `backwardsCompatiblePortName`). */
function listenerPortName(listener: { name: string; port: number; type: string }): string {
  if (listener.type === 'internal' && listener.name === 'plain' && listener.port === 9092) return 'tcp-clients';
  if (listener.type === 'internal' && listener.name === 'tls' && listener.port === 9093) return 'tcp-clientstls';
  if (listener.name === 'external' && listener.port === 9094) return 'tcp-external';
  return `tcp-${listener.name}`;
}

/**
 * A node's container ports (KafkaCluster.java `getContainerPortList`): the Kafka agent's; the
 * control plane's on a controller; replication and every listener's on a broker.
 */
function brokerContainerPorts(kafka: KubeObject, roles: readonly string[]): Array<{ name: string; containerPort: number; protocol: 'TCP' }> {
  const port = (name: string, containerPort: number) => ({ name, containerPort, protocol: 'TCP' as const });
  const listeners: Array<{ name: string; port: number; type: string }> = kafka.spec?.kafka?.listeners ?? [];
  return [
    port('tcp-kafkaagent', 8443),
    ...(roles.includes('controller') ? [port('tcp-ctrlplane', 9090)] : []),
    ...(roles.includes('broker') ? [port(REPLICATION_PORT_NAME, 9091), ...listeners.map((listener) => port(listenerPortName(listener), listener.port))] : []),
  ];
}

/** The labels Strimzi selects a cluster's pods of a kind by (api/.../Labels.java `strimziSelectorLabels`). */
function selectorLabels(kafka: KubeObject): Record<string, string> {
  const cluster = kafka.metadata.name;
  return { 'strimzi.io/cluster': cluster, 'strimzi.io/name': `${cluster}-kafka`, 'strimzi.io/kind': 'Kafka' };
}

/**
 * The Service Strimzi makes for a cluster's clients, `<cluster>-kafka-bootstrap`
 * (cluster-operator/.../model/KafkaCluster.java `generateService`, `getServicePorts`,
 * `brokersSelector`): the replication port and each internal listener's port, named as
 * ListenersUtils.java `backwardsCompatiblePortName` names them, selecting the broker pods.
 */
export function bootstrapServiceOf(kafka: KubeObject): KubeObject {
  const cluster = kafka.metadata.name;
  const listeners: Array<{ name: string; port: number; type: string }> = kafka.spec?.kafka?.listeners ?? [];
  const port = (name: string, number: number) => ({ name, port: number, targetPort: name, protocol: 'TCP' });
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: `${cluster}-kafka-bootstrap`,
      namespace: kafka.metadata.namespace,
      labels: selectorLabels(kafka),
      ownerReferences: [{ apiVersion: kafka.apiVersion, kind: kafka.kind, name: cluster, uid: String(kafka.metadata.uid), controller: false, blockOwnerDeletion: false }],
    },
    spec: {
      type: 'ClusterIP',
      selector: { ...selectorLabels(kafka), 'strimzi.io/broker-role': 'true' },
      ports: [port(REPLICATION_PORT_NAME, 9091), ...listeners.filter((listener) => listener.type === 'internal').map((listener) => port(listenerPortName(listener), listener.port))],
    },
  } as unknown as KubeObject;
}

/**
 * The NetworkPolicy the cluster operator makes for a cluster's brokers,
 * `<cluster>-network-policy-kafka` (cluster-operator/.../model/KafkaCluster.java
 * `generateNetworkPolicy`, NetworkPolicyUtils.java, KafkaResources.java
 * `kafkaNetworkPolicyName`; its network policy generation is on by default): ingress to the
 * control plane (9090) from the cluster's pods and the cluster operator, to replication (9091)
 * from those and the Entity Operator, Kafka Exporter and Cruise Control, to the Kafka agent
 * (8443) from the cluster operator, and to each listener's port from its `networkPolicyPeers`
 * (everyone without). The cluster operator in another namespace is admitted from every
 * namespace (no namespace labels are configured: `clusterOperatorNamespaceSelector`).
 */
export function kafkaNetworkPolicyOf(kafka: KubeObject, operatorNamespace: string): KubeObject {
  const cluster = kafka.metadata.name;
  const namespace = String(kafka.metadata.namespace);
  const peer = (matchLabels: Record<string, string>, namespaceSelector?: object) => ({ podSelector: { matchLabels }, ...(namespaceSelector === undefined ? {} : { namespaceSelector }) });
  const clusterOperator = peer({ 'strimzi.io/kind': 'cluster-operator' }, operatorNamespace === namespace ? undefined : {});
  const clusterPods = peer(selectorLabels(kafka));
  const rule = (port: number, from: readonly object[]) => ({ ports: [{ port, protocol: 'TCP' }], from });
  const listeners: KafkaListener[] = kafka.spec?.kafka?.listeners ?? [];
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: `${cluster}-network-policy-kafka`,
      namespace,
      labels: selectorLabels(kafka),
      ownerReferences: [{ apiVersion: kafka.apiVersion, kind: kafka.kind, name: cluster, uid: String(kafka.metadata.uid), controller: false, blockOwnerDeletion: false }],
    },
    spec: {
      podSelector: { matchLabels: selectorLabels(kafka) },
      ingress: [
        rule(9090, [clusterPods, clusterOperator]),
        rule(9091, [clusterOperator, clusterPods, peer({ 'strimzi.io/name': `${cluster}-entity-operator` }), peer({ 'strimzi.io/name': `${cluster}-kafka-exporter` }), peer({ 'strimzi.io/name': `${cluster}-cruise-control` })]),
        rule(8443, [clusterOperator]),
        ...listeners.map((listener) => rule(listener.port, listener.networkPolicyPeers ?? [])),
      ],
    },
  } as unknown as KubeObject;
}

/** A listener of a Kafka cluster, as its spec gives it. */
export interface KafkaListener {
  readonly name: string;
  readonly port: number;
  readonly tls: boolean;
  readonly authentication?: { readonly type: string };
  readonly networkPolicyPeers?: ReadonlyArray<{ readonly namespaceSelector?: { readonly matchLabels?: Record<string, string> }; readonly podSelector?: { readonly matchLabels?: Record<string, string> } }>;
}

/**
 * Whether the listener's rule of the cluster's NetworkPolicy admits a pod of `namespace`
 * (cluster-operator/.../model/KafkaCluster.java `generateNetworkPolicy`: each listener's port
 * is open to its `networkPolicyPeers`, to everyone when it has none): a peer's namespace
 * selector matches the namespace's labels (without one, the cluster's own namespace) and its
 * pod selector, when it has one, the pod's labels.
 */
export function listenerAdmits(listener: KafkaListener, kafkaNamespace: string, namespace: { name: string; labels: Record<string, string> }, podLabels: Record<string, string>): boolean {
  const peers = listener.networkPolicyPeers ?? [];
  if (peers.length === 0) return true;
  const matches = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>) =>
    Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  return peers.some((peer) =>
    (peer.namespaceSelector === undefined ? namespace.name === kafkaNamespace : matches(peer.namespaceSelector, namespace.labels)) &&
    (peer.podSelector === undefined || matches(peer.podSelector, podLabels)),
  );
}

/**
 * The password the User Operator gives a SCRAM-SHA-512 user, and so writes into the user's
 * Secret (`password`, and `sasl.jaas.config` built from it) and sets in Kafka
 * (user-operator/.../model/KafkaUserModel.java `maybeGeneratePassword`, `generateSecret`): the
 * one its `password.valueFrom.secretKeyRef` names, else the one its Secret (named as the user)
 * already holds, else a new one. A named Secret or key that does not exist, or an empty
 * password there, refuses the user. `secrets`: the namespace's Secrets, each key decoded.
 */
export function scramPassword(user: KubeObject, secrets: ReadonlyMap<string, Readonly<Record<string, string>>>, generate: () => string): { password: string } | { problem: string } | undefined {
  if (user.spec?.authentication?.type !== 'scram-sha-512') return undefined;
  const ref = user.spec?.authentication?.password?.valueFrom?.secretKeyRef;
  if (ref !== undefined) {
    const secret = secrets.get(ref.name);
    if (secret === undefined) return { problem: `Secret ${ref.name} with requested user password does not exist.` };
    const desired = secret[ref.key];
    if (desired === undefined) return { problem: `Secret ${ref.name} does not contain the key ${ref.key} with requested user password.` };
    if (desired === '') return { problem: 'The requested user password is empty.' };
    return { password: desired };
  }
  const existing = secrets.get(user.metadata.name)?.['password'];
  return { password: existing !== undefined && existing !== '' ? existing : generate() };
}

/** The `sasl.jaas.config` of a user's Secret (KafkaUserModel.java `getSaslJsonConfig`). */
export function saslJaasConfig(username: string, password: string): string {
  return `org.apache.kafka.common.security.scram.ScramLoginModule required username="${username}" password="${password}";`;
}
