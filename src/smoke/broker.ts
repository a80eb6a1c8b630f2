import { type Admin, Kafka, logLevel, type SASLOptions } from 'kafkajs';

/** How the broker step reaches Kafka (4.1 step 5). */
export interface BrokerSettings {
  /** `host:port` pairs, e.g. `kafka-cluster-kafka-bootstrap:9092`. */
  readonly bootstrapServers: readonly string[];
  /**
   * SCRAM-SHA-512 credentials of a KafkaUser, when the listener asks for them.
   * @default - no authentication (the plain listener on 9092)
   */
  readonly sasl?: { readonly username: string; readonly password: string };
}

/** Client id the broker sees in its logs. */
const CLIENT_ID = 'platform-gitops-smoke';

/**
 * An admin client of the maintained Kafka client (`kafkajs`) for `settings`' bootstrap servers
 * (SCRAM-SHA-512 when given), bounded by `timeoutMs` per connection and request and making one
 * attempt: a check reports the first failure instead of retrying past its timeout.
 */
export function kafkaAdmin(settings: BrokerSettings, timeoutMs: number, clientId: string): Admin {
  const sasl: SASLOptions | undefined =
    settings.sasl === undefined ? undefined : { mechanism: 'scram-sha-512', username: settings.sasl.username, password: settings.sasl.password };
  return new Kafka({
    clientId,
    brokers: [...settings.bootstrapServers],
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
    ...(sasl === undefined ? {} : { sasl }),
  }).admin();
}

/** A real Kafka metadata request with the maintained client (`kafkajs`): describe the cluster. */
export async function checkBroker(settings: BrokerSettings, timeoutMs: number, signal: AbortSignal): Promise<string> {
  const admin = kafkaAdmin(settings, timeoutMs, CLIENT_ID);
  const disconnect = () => void admin.disconnect().catch(() => {});
  signal.addEventListener('abort', disconnect, { once: true });
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length === 0) throw new Error('the metadata response lists no brokers');
    return `metadata from ${settings.bootstrapServers.join(',')}: ${cluster.brokers.length} broker(s), controller ${cluster.controller}`;
  } finally {
    signal.removeEventListener('abort', disconnect);
    await admin.disconnect().catch(() => {});
  }
}
