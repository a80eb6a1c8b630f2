import * as z from 'zod';
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
  storageClass: dnsLabel.meta({ description: 'StorageClass of the volume claim (2.7).' }),
  size: memoryQuantity.meta({ description: 'Requested size in Mi or Gi, e.g. "10Gi".' }),
});

export const databaseSchema = z.strictObject({
  namespace: namespaceName.meta({ description: "The SQL Server's own namespace, created by the sync (1.3 step 5)." }),
  edition: z
    .enum(['Developer', 'Express', 'Standard', 'Enterprise'], { error: 'must be Developer, Express, Standard or Enterprise' })
    .meta({ description: 'MSSQL_PID: the SQL Server edition the licence allows in this environment.' }),
  resources: resourcesSchema("Requests and limits of the SQL Server's container."),
  storage: volumeSchema.meta({ description: 'The data volume of the StatefulSet (its volume claim template).' }),
  backup: z
    .strictObject({
      schedule: cronSchedule.meta({ description: 'When the full backup runs: five cron fields or a descriptor such as "@daily", in UTC.' }),
      storage: volumeSchema.meta({ description: 'The dedicated backup volume.' }),
    })
    .meta({ description: 'The scheduled full backup and where it is written (7.2).' }),
});

const topicSchema = z.strictObject({
  name: z
    .string({ error: 'is required and must be a string' })
    .regex(TOPIC_NAME, { error: 'must be a lower-case topic name (letters, digits, "-" and ".")' })
    .meta({ description: 'Topic name, also its KafkaTopic name: lower-case letters, digits, "-" and "."; unique.' }),
  partitions: count(1).meta({ description: 'Partitions of the topic, at least 1.' }),
  replicas: count(1).meta({ description: 'Copies of each partition, at least 1 and at most broker.brokers.' }),
  retentionHours: count(1).meta({ description: 'How long messages are kept, in whole hours (rendered as retention.ms).' }),
});

export const ACL_OPERATIONS = ['Read', 'Write', 'Describe', 'Create', 'Delete', 'Alter', 'DescribeConfigs', 'AlterConfigs'] as const;

/** One ACL of a broker user (an application's, in its values file, or one of broker.users). */
export const aclSchema = z.strictObject({
  topic: z.string({ error: 'is required and must be a string' }).meta({ description: 'The topic the ACL is on: one of broker.topics.' }),
  operations: z
    .array(z.enum(ACL_OPERATIONS, { error: `must be one of ${ACL_OPERATIONS.join(', ')}` }))
    .min(1, { error: 'must name at least one operation' })
    .meta({ description: `What the user may do on the topic, at least one of ${ACL_OPERATIONS.join(', ')}.` }),
});

const userSchema = z.strictObject({
  name: dnsLabel.meta({ description: 'KafkaUser name: the SCRAM user name and the Secret Strimzi writes its password to; unique.' }),
  acls: z
    .array(aclSchema)
    .min(1, { error: 'must grant at least one ACL' })
    .meta({ description: 'What the user may do, topic by topic; only topics of this environment; at least one.' }),
  consumerGroup: dnsLabel
    .meta({ description: 'Consumer group (prefix) the user reads with. Default: none (the user does not consume).' })
    .optional(),
});

export const brokerSchema = z
  .strictObject({
    namespace: namespaceName.meta({ description: "Namespace of the Kafka cluster and its operator; not the database's." }),
    brokers: count(1).meta({ description: 'Brokers: KRaft nodes with the broker and controller roles, at least 1.' }),
    tlsListener: z.boolean({ error: 'must be true or false' }).meta({ description: 'Add a TLS listener on 9093 beside the plain one on 9092.' }),
    resources: resourcesSchema("Requests and limits of each broker's container."),
    storage: volumeSchema.meta({ description: 'The data volume of each broker.' }),
    topics: z.array(topicSchema).meta({ description: 'The topics of the cluster, each a KafkaTopic.' }),
    users: z
      .array(userSchema)
      .meta({
        description:
          "Broker users that are not an application's (each application gets its own, named after it, from its values file). Default: none.",
      })
      .default([]),
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

