import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { BROKER } from '../contract/contract';
import { STRIMZI, SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import { BrokerTopic } from '../constructs/broker-topic';
import { BrokerUser } from '../constructs/broker-user';
import { KafkaCluster } from '../constructs/kafka-cluster';
import { DNS_PEER, NetworkPolicies, apiServerPeer } from '../constructs/network-policies';
import { brokerUsers, type Environment } from '../environments';
import { brokerUserSecret, OPERATIONS_ROLE } from '../contract/naming';
import { SecretReaderRole } from '../constructs/secret-reader-role';

export interface BrokerChartProps {
  /** The validated environment. */
  readonly environment: Environment;
}

/**
 * The message broker (1.3 step 6): the Kafka cluster `kafka-cluster`, then its topics and
 * users. The Strimzi operator is an infrastructure release synced before this chart; Argo
 * CD's health checks for Strimzi resources make the topics and users (a later sync wave)
 * wait until the cluster reports Ready.
 */
export class BrokerChart extends Chart {
  constructor(scope: Construct, id: string, props: BrokerChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { broker, applications } = props.environment;
    const entitiesWave = String(STRIMZI.entitiesSyncWave);

    new KafkaCluster(this, 'cluster', {
      namespace: broker.namespace,
      brokers: broker.brokers,
      tlsListener: broker.tlsListener,
      resources: broker.resources,
      storage: broker.storage,
      clients: { namespaces: applications.map((app) => app.namespace) },
    });

    // Default deny in the broker's namespace, then what Strimzi needs (restricted Pod Security: src/contract/security-context.ts).
    // Ingress to the brokers is Strimzi's own NetworkPolicy (control plane and replication
    // from brokers and operators, the agent from the cluster operator, each listener from
    // its networkPolicyPeers); egress is ours: DNS, the API server (cluster and entity
    // operators) and the brokers' internal ports inside the namespace.
    const { controlPlane, replication, agent } = STRIMZI.internalPorts;
    new NetworkPolicies(this, 'network-policies', {
      namespace: broker.namespace,
      egress: [
        DNS_PEER,
        apiServerPeer(props.environment.infrastructure.network.apiServerCidrs),
        {
          name: 'brokers',
          namespace: broker.namespace,
          podLabels: { [STRIMZI.clusterLabel]: BROKER.clusterName },
          ports: [{ port: controlPlane }, { port: replication }, { port: agent }],
        },
      ],
    });

    for (const topic of broker.topics) {
      new BrokerTopic(this, `topic-${topic.name}`, { namespace: broker.namespace, ...topic }).metadata.addAnnotation(SYNC_WAVE_ANNOTATION, entitiesWave);
    }
    // Each application's own user (named after it), then the environment's other users.
    const users = brokerUsers(props.environment);
    // 1.3 step 6, `ops check --component broker`: the operators read these password Secrets
    // (and no other) to list the topics as each user sees them; the bootstrap binds the Role.
    new SecretReaderRole(this, 'operations-role', { name: OPERATIONS_ROLE, namespace: broker.namespace, secrets: users.map((user) => brokerUserSecret(user.name)) });
    for (const user of users) {
      new BrokerUser(this, `user-${user.name}`, {
        namespace: broker.namespace,
        name: user.name,
        acls: user.acls,
        ...(user.consumerGroup === undefined ? {} : { consumerGroup: user.consumerGroup }),
        password: { secret: brokerUserSecret(user.name), key: 'password' },
      }).metadata.addAnnotation(SYNC_WAVE_ANNOTATION, entitiesWave);
    }
  }
}
