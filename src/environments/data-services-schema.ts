import { z } from 'zod';
import { cronSchedule, dnsLabel, memoryQuantity, namespaceName, resourcesSchema } from './fields';

/**
 * The data services of an environment (1.3 steps 5 and 6, 7.2): SQL Server with its
 * migrations and backups, and the Strimzi Kafka cluster with its topics and users.
 */

/**
 * An application's database name on SQL Server: letters, digits, "_" and "-" (every
 * statement quotes it in brackets, so an application's name is one), at most 128.
 */
const SQL_DATABASE = /^[A-Za-z0-9_][-A-Za-z0-9_]{0,127}$/;

export const SQL_DATABASE_NAME = z.string({ error: 'must be a string' }).regex(SQL_DATABASE, {
  error: 'must be a SQL Server database name: letters, digits, "_" and "-", at most 128',
});
/** Kafka topic names (Strimzi KafkaTopic.metadata.name must also be a DNS-1123 name). */
const TOPIC_NAME = /^[a-z0-9]([-.a-z0-9]{0,247}[a-z0-9])?$/;

const count = (minimum: number) =>
  z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(minimum, { error: `must be at least ${minimum}` });

/** A persistent volume: its StorageClass and size. */
const volumeSchema = z.strictObject({
  /** StorageClass of the claim (2.7). */
  storageClass: dnsLabel,
  /** Requested size, e.g. "10Gi". */
  size: memoryQuantity,
});

export const databaseSchema = z.strictObject({
  /** The server's own namespace, created by the sync (1.3 step 5). */
  namespace: namespaceName,
  /** MSSQL_PID: the edition the licence allows here. */
  edition: z.enum(['Developer', 'Express', 'Standard', 'Enterprise'], { error: 'must be Developer, Express, Standard or Enterprise' }),
  resources: resourcesSchema,
  /** The data volume of the StatefulSet (volume claim template). */
  storage: volumeSchema,
  backup: z.strictObject({
    /** When the full backup runs, a cron expression in UTC. */
    schedule: cronSchedule,
    /** The dedicated backup volume. */
    storage: volumeSchema,
  }),
});

const topicSchema = z.strictObject({
  name: z.string({ error: 'is required and must be a string' }).regex(TOPIC_NAME, {
    error: 'must be a lower-case topic name (letters, digits, "-" and ".")',
  }),
  partitions: count(1),
  /** Copies of each partition; at most the broker count. */
  replicas: count(1),
  /** How long messages are kept, in hours (retention.ms). */
  retentionHours: count(1),
});

export const ACL_OPERATIONS = ['Read', 'Write', 'Describe', 'Create', 'Delete', 'Alter', 'DescribeConfigs', 'AlterConfigs'] as const;

const userSchema = z.strictObject({
  /** KafkaUser name: the SCRAM user name and the Secret Strimzi writes its password to. */
  name: dnsLabel,
  /** What the user may do, topic by topic; only topics of this environment. */
  acls: z
    .array(
      z.strictObject({
        topic: z.string({ error: 'is required and must be a string' }),
        operations: z.array(z.enum(ACL_OPERATIONS, { error: `must be one of ${ACL_OPERATIONS.join(', ')}` })).min(1, { error: 'must name at least one operation' }),
      }),
    )
    .min(1, { error: 'must grant at least one ACL' }),
  /** Consumer groups the user reads with (prefix), when it consumes. */
  consumerGroup: dnsLabel.optional(),
});

export const brokerSchema = z
  .strictObject({
    /** Namespace of the Kafka cluster and its operator. */
    namespace: namespaceName,
    /** Brokers (KRaft nodes with the broker and controller roles). */
    brokers: count(1),
    /** Add a TLS listener on 9093 beside the plain one on 9092. */
    tlsListener: z.boolean({ error: 'must be true or false' }),
    resources: resourcesSchema,
    /** The data volume of each broker. */
    storage: volumeSchema,
    topics: z.array(topicSchema),
    /**
     * Broker users that are not an application's (each application gets its own, named
     * after it, from its values file).
     * @default - none
     */
    users: z.array(userSchema).default([]),
  })
  .superRefine((broker, ctx) => {
    const topics = new Set<string>();
    broker.topics.forEach((topic, index) => {
      if (topics.has(topic.name)) {
        ctx.addIssue({ code: 'custom', path: ['topics', index, 'name'], input: topic.name, message: 'must be unique (another topic has this name)' });
      }
      topics.add(topic.name);
      if (topic.replicas > broker.brokers) {
        ctx.addIssue({
          code: 'custom',
          path: ['topics', index, 'replicas'],
          input: topic.replicas,
          message: `must not exceed broker.brokers (${broker.brokers})`,
        });
      }
    });
    const users = new Set<string>();
    broker.users.forEach((user, index) => {
      if (users.has(user.name)) {
        ctx.addIssue({ code: 'custom', path: ['users', index, 'name'], input: user.name, message: 'must be unique (another user has this name)' });
      }
      users.add(user.name);
      user.acls.forEach((acl, aclIndex) => {
        if (!topics.has(acl.topic)) {
          ctx.addIssue({
            code: 'custom',
            path: ['users', index, 'acls', aclIndex, 'topic'],
            input: acl.topic,
            message: `must name a topic of broker.topics (${[...topics].join(', ') || 'none'})`,
          });
        }
      });
    });
  });

export type DatabaseConfig = z.output<typeof databaseSchema>;
export type BrokerConfig = z.output<typeof brokerSchema>;
