import { Kafka, logLevel, type Admin, type SASLOptions } from 'kafkajs';
import { compareText } from '../base/text-order';
import type { BrokerSettings } from '../smoke/broker';

/**
 * Consumer lag per group, topic and partition (contract 7, broker problems), read through the
 * broker as `kafka-consumer-groups.sh --describe --all-groups` reads it: the groups the
 * cluster knows (ListGroups), each group's committed offsets (OffsetFetch) and each topic's
 * log end offsets (ListOffsets), with the maintained client (`kafkajs` admin). Lag is the log
 * end offset minus the committed one; a partition the group never committed has no lag
 * (shown `-`, as the Kafka tool shows it).
 */

/** One partition of a topic a group consumes. */
export interface PartitionLag {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  /** The group's committed offset; null when it has committed none. */
  readonly committed: number | null;
  /** The partition's log end offset (high watermark). */
  readonly end: number;
  /** end - committed; null without a committed offset. */
  readonly lag: number | null;
}

/** What the lag needs of the admin client (kafkajs' Admin): listed so a test can stand in for the broker. */
export type LagAdmin = Pick<Admin, 'listGroups' | 'fetchOffsets' | 'fetchTopicOffsets'>;

/** Every group's lag, by group, topic and partition (sorted), through `admin`. */
export async function consumerLag(admin: LagAdmin): Promise<PartitionLag[]> {
  const { groups } = await admin.listGroups();
  const ends = new Map<string, Map<number, number>>();
  const endOf = async (topic: string) => {
    let offsets = ends.get(topic);
    if (offsets === undefined) {
      offsets = new Map((await admin.fetchTopicOffsets(topic)).map((entry) => [entry.partition, Number(entry.high)]));
      ends.set(topic, offsets);
    }
    return offsets;
  };
  const lags: PartitionLag[] = [];
  for (const { groupId } of [...groups].sort((a, b) => compareText(a.groupId, b.groupId))) {
    for (const { topic, partitions } of await admin.fetchOffsets({ groupId })) {
      const end = await endOf(topic);
      for (const { partition, offset } of partitions) {
        const committed = Number(offset) < 0 ? null : Number(offset);
        const high = end.get(partition) ?? 0;
        lags.push({ group: groupId, topic, partition, committed, end: high, lag: committed === null ? null : Math.max(0, high - committed) });
      }
    }
  }
  return lags.sort((a, b) => compareText(a.group, b.group) || compareText(a.topic, b.topic) || a.partition - b.partition);
}

/**
 * Connect an admin client to `settings`' bootstrap servers (SCRAM-SHA-512 when given), read the
 * lag and disconnect, all within `timeoutMs`: an unreachable broker is an error naming the
 * servers and why, never a wait without end.
 */
export async function readConsumerLag(settings: BrokerSettings, timeoutMs: number): Promise<PartitionLag[]> {
  const sasl: SASLOptions | undefined = settings.sasl === undefined ? undefined : { mechanism: 'scram-sha-512', ...settings.sasl };
  const admin = new Kafka({
    clientId: 'platform-gitops-ops',
    brokers: [...settings.bootstrapServers],
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
    ...(sasl === undefined ? {} : { sasl }),
  }).admin();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([admin.connect().then(() => consumerLag(admin)), deadline]);
  } catch (error) {
    throw new Error(`the broker at ${settings.bootstrapServers.join(',')} could not be read: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => {});
  }
}
