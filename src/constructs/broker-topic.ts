import type { Construct } from 'constructs';
import { BROKER } from '../contract/contract';
import { STRIMZI } from '../contract/upstream';
import { KafkaTopic } from '../imports/kafkatopic-kafka.strimzi.io';

export interface BrokerTopicProps {
  /** Namespace of the cluster. */
  readonly namespace: string;
  /** Topic name (also the KafkaTopic's name). */
  readonly name: string;
  readonly partitions: number;
  /** Copies of each partition (validated: at most the broker count). */
  readonly replicas: number;
  /** Retention in hours (`retention.ms`). */
  readonly retentionHours: number;
  /** `min.insync.replicas` of the topic: one less than its replicas, at least 1. */
  readonly minInSyncReplicas?: number;
}

/** A topic of `kafka-cluster`, managed by Strimzi's topic operator (1.3 step 6). */
export class BrokerTopic extends KafkaTopic {
  constructor(scope: Construct, id: string, props: BrokerTopicProps) {
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: { [STRIMZI.clusterLabel]: BROKER.clusterName } },
      spec: {
        partitions: props.partitions,
        replicas: props.replicas,
        config: {
          'retention.ms': props.retentionHours * STRIMZI.retentionMsPerHour,
          'min.insync.replicas': props.minInSyncReplicas ?? Math.max(1, props.replicas - 1),
        },
      },
    });
  }
}
