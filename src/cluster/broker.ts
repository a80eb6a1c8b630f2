import { RefusedError } from '../base/errors';
import { compareText } from '../base/text-order';
import { BROKER } from '../contract/contract';
import { STRIMZI } from '../contract/upstream';
import type { BrokerUserConfig } from '../environments';
import type { ClusterConnection, LiveObject } from './connection';
import { judgeListing, listTopicsCommand, parseTopicList, scramClientProperties, toolFailure, topicsVisibleTo } from './kafka-topics';
import { labelSelector, podState } from './workloads';

/** How long one listing may take: the tool starts a JVM and connects (its own timeouts are longer). */
const LISTING_TIMEOUT_MS = 90_000;

/** The ready pods of the cluster's brokers, by name: where `kafka-topics.sh` runs against its own 9092. */
export async function brokerPods(cluster: ClusterConnection, namespace: string): Promise<LiveObject[]> {
  const selector = labelSelector({ [STRIMZI.clusterLabel]: BROKER.clusterName, [STRIMZI.brokerPods.brokerRoleLabel]: 'true' });
  return (await cluster.list('v1', 'Pod', namespace, selector)).filter((pod) => podState(pod).ready && !pod.metadata.deletionTimestamp).sort((a, b) => compareText(a.metadata.name, b.metadata.name));
}

/** The password of a KafkaUser, from the Secret its spec names (`spec.authentication.password.valueFrom.secretKeyRef`). */
async function passwordOf(cluster: ClusterConnection, namespace: string, user: string): Promise<string> {
  const kafkaUser = await cluster.get('kafka.strimzi.io/v1', 'KafkaUser', user, namespace);
  if (kafkaUser === undefined) throw new RefusedError(`KafkaUser ${namespace}/${user} does not exist`);
  const ref = kafkaUser['spec']?.authentication?.password?.valueFrom?.secretKeyRef as { name?: string; key?: string } | undefined;
  if (ref?.name === undefined || ref.key === undefined) throw new RefusedError(`KafkaUser ${namespace}/${user} names no password Secret (spec.authentication.password.valueFrom.secretKeyRef)`);
  const secret = await cluster.get('v1', 'Secret', ref.name, namespace);
  const encoded = secret?.['data']?.[ref.key];
  if (typeof encoded !== 'string') throw new RefusedError(`Secret ${namespace}/${ref.name} ${secret === undefined ? 'does not exist' : `has no key ${ref.key}`}`);
  return Buffer.from(encoded, 'base64').toString('utf8');
}

/**
 * The topics `user` sees on the broker's listener 9092 (1.3 step 6), judged against what its
 * ACLs allow: its password read from its Secret, handed on stdin to `kafka-topics.sh --list`
 * inside the broker's container (src/cluster/kafka-topics.ts). A refusal (no KafkaUser, a
 * Secret out of reach, Kafka's own error such as a failed authentication) is the part's
 * failure, in one line.
 */
export async function topicsSeenBy(cluster: ClusterConnection, namespace: string, pod: string, user: BrokerUserConfig): Promise<{ ok: boolean; detail: string }> {
  const expected = topicsVisibleTo(user.acls);
  try {
    const password = await passwordOf(cluster, namespace, user.name);
    const result = await cluster.exec(namespace, pod, STRIMZI.brokerPods.container, listTopicsCommand(), LISTING_TIMEOUT_MS, scramClientProperties(user.name, password));
    if (!result.ok) return { ok: false, detail: toolFailure(result.stdout, result.stderr, result.message) };
    return judgeListing(expected, parseTopicList(result.stdout));
  } catch (error) {
    if (!(error instanceof RefusedError)) throw error;
    return { ok: false, detail: error.message };
  }
}
