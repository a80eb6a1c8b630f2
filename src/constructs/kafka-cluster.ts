import { Construct } from 'constructs';
import { DISRUPTION } from '../contract/choices';
import { BROKER } from '../contract/contract';
import { STRIMZI } from '../contract/upstream';
import type { Resources } from '../environments';
import {
  Kafka,
  KafkaSpecKafkaAuthorizationType,
  KafkaSpecKafkaListenersAuthenticationType,
  KafkaSpecKafkaListenersType,
  type KafkaSpecKafkaListeners,
} from '../imports/kafka-kafka.strimzi.io';
import {
  KafkaNodePool,
  KafkaNodePoolSpecRoles,
  KafkaNodePoolSpecStorageType,
  KafkaNodePoolSpecStorageVolumesKraftMetadata,
  KafkaNodePoolSpecStorageVolumesType,
} from '../imports/kafkanodepool-kafka.strimzi.io';
import type { VolumeRequest } from './sql-server';
import { resourceRequirements } from './resource-requirements';

/** Namespaces whose pods may reach the listeners (Strimzi renders a NetworkPolicy per listener). */
export interface ListenerClients {
  /** Namespace names (`kubernetes.io/metadata.name`). */
  readonly namespaces: readonly string[];
}

export interface KafkaClusterProps {
  /** Namespace of the cluster (and of the Strimzi operator that watches it). */
  readonly namespace: string;
  /** Brokers: KRaft nodes with both the broker and the controller role. */
  readonly brokers: number;
  /** Add the TLS listener on 9093. */
  readonly tlsListener: boolean;
  /** Requests and limits of each node. */
  readonly resources: Resources;
  /** The data volume of each node (also holds the KRaft metadata log). */
  readonly storage: VolumeRequest;
  /** Who may connect to the listeners. */
  readonly clients: ListenerClients;
}

/**
 * The Kafka cluster `kafka-cluster` (1.3 step 6, 2.7) on Strimzi 1.2: KRaft mode with one
 * node pool whose nodes are brokers and controllers, a plain listener on 9092 (TLS on 9093
 * where the environment asks), SCRAM-SHA-512 users with simple ACLs, and the entity
 * operator that turns KafkaTopic and KafkaUser objects into topics and users. Replication
 * follows the broker count: every internal topic and new topic default to min(3, brokers)
 * copies, with `min.insync.replicas` one less (at least 1), so one broker may be down.
 */
export class KafkaCluster extends Construct {
  constructor(scope: Construct, id: string, props: KafkaClusterProps) {
    super(scope, id);
    const clusterLabels = { [STRIMZI.clusterLabel]: BROKER.clusterName };
    const replication = Math.min(STRIMZI.maxReplication, props.brokers);
    const minInSync = Math.max(1, replication - 1);
    const networkPolicyPeers = props.clients.namespaces.map((namespace) => ({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    }));
    const listener = (name: string, port: number, tls: boolean): KafkaSpecKafkaListeners => ({
      name,
      port,
      type: KafkaSpecKafkaListenersType.INTERNAL,
      tls,
      authentication: { type: KafkaSpecKafkaListenersAuthenticationType.SCRAM_HYPHEN_SHA_HYPHEN_512 },
      networkPolicyPeers,
    });
    const { plain, tls } = STRIMZI.listeners;
    new Kafka(this, 'kafka', {
      metadata: { name: BROKER.clusterName, namespace: props.namespace },
      spec: {
        kafka: {
          listeners: [
            listener(plain.name, plain.port, false),
            ...(props.tlsListener ? [listener(tls.name, tls.port, true)] : []),
          ],
          authorization: { type: KafkaSpecKafkaAuthorizationType.SIMPLE },
          // Strimzi's PodDisruptionBudget for the brokers (its default, 1, written out: 1.2.0
          // api/.../template/PodDisruptionBudgetTemplate.java): with min.insync.replicas one
          // below replication, one broker may be down.
          template: { podDisruptionBudget: { maxUnavailable: DISRUPTION.maxUnavailable } },
          config: {
            'default.replication.factor': replication,
            'min.insync.replicas': minInSync,
            'offsets.topic.replication.factor': replication,
            'transaction.state.log.replication.factor': replication,
            'transaction.state.log.min.isr': minInSync,
          },
        },
        // Requests and limits for both operators: a namespace quota or a restricted
        // LimitRange would otherwise refuse or starve them (restricted Pod Security: src/contract/security-context.ts).
        entityOperator: {
          topicOperator: { resources: resourceRequirements(STRIMZI.entityOperatorResources) },
          userOperator: { resources: resourceRequirements(STRIMZI.entityOperatorResources) },
        },
      },
    });
    new KafkaNodePool(this, 'node-pool', {
      metadata: { name: STRIMZI.nodePool, namespace: props.namespace, labels: clusterLabels },
      spec: {
        replicas: props.brokers,
        roles: [KafkaNodePoolSpecRoles.CONTROLLER, KafkaNodePoolSpecRoles.BROKER],
        resources: resourceRequirements(props.resources),
        // One broker per node where there are nodes enough (Strimzi labels the pool's pods
        // strimzi.io/cluster and strimzi.io/pool-name: operator-common Labels.java, 1.2.0).
        template: {
          pod: {
            topologySpreadConstraints: [
              {
                ...DISRUPTION.spread,
                labelSelector: { matchLabels: { ...clusterLabels, [STRIMZI.poolLabel]: STRIMZI.nodePool } },
              },
            ],
          },
        },
        storage: {
          type: KafkaNodePoolSpecStorageType.JBOD,
          volumes: [
            {
              id: 0,
              type: KafkaNodePoolSpecStorageVolumesType.PERSISTENT_HYPHEN_CLAIM,
              size: props.storage.size,
              class: props.storage.storageClass,
              deleteClaim: false,
              kraftMetadata: KafkaNodePoolSpecStorageVolumesKraftMetadata.SHARED,
            },
          ],
        },
      },
    });
  }
}
