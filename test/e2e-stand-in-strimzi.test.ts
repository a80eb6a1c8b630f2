import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../e2e/kube-client';
import { brokerCount, kafkaProblem, kafkaTopicProblem, kafkaUserProblem, poolsOf } from '../e2e/stand-in-strimzi';

// The e2e's Strimzi stand-in refuses what Strimzi 1.2.0 refuses (each rule's upstream file is
// named in e2e/stand-in-strimzi.ts). Before, a Kafka was Ready with any labelled node pool
// and a KafkaUser's ACLs were Ready on a cluster without authorization.

const kafka = (authorization?: object): KubeObject =>
  ({ apiVersion: 'kafka.strimzi.io/v1', kind: 'Kafka', metadata: { name: 'kafka-cluster', namespace: 'kafka' }, spec: { kafka: { ...(authorization ? { authorization } : {}) } } }) as KubeObject;
const pool = (name: string, roles: string[], replicas: number, cluster = 'kafka-cluster'): KubeObject =>
  ({ apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaNodePool', metadata: { name, namespace: 'kafka', labels: { 'strimzi.io/cluster': cluster } }, spec: { roles, replicas } }) as KubeObject;

describe('a Kafka cluster, as Strimzi\'s cluster operator validates its node pools', () => {
  it('is valid with a pool that is both broker and controller, or with one of each', () => {
    expect(kafkaProblem(kafka(), [pool('dual-role', ['controller', 'broker'], 1)])).toBeUndefined();
    expect(kafkaProblem(kafka(), [pool('brokers', ['broker'], 3), pool('controllers', ['controller'], 3)])).toBeUndefined();
  });

  it('refuses a cluster without a pool of its own that has replicas', () => {
    const message = kafkaProblem(kafka(), poolsOf(kafka(), [pool('other', ['broker', 'controller'], 1, 'other-cluster')]));
    expect(message).toMatch(/^KafkaNodePools are enabled, but KafkaNodePools for Kafka cluster kafka-cluster either don't exist or have 0 replicas\./);
    expect(kafkaProblem(kafka(), [pool('dual-role', ['controller', 'broker'], 0)])).toMatch(/have 0 replicas/);
  });

  it('refuses pools without a broker or a controller with replicas, and a pool without roles', () => {
    expect(kafkaProblem(kafka(), [pool('brokers', ['broker'], 3)])).toBe(
      'The Kafka cluster kafka-cluster is invalid: [At least one KafkaNodePool with the controller role and at least one replica is required when KRaft mode is enabled]',
    );
    expect(kafkaProblem(kafka(), [pool('brokers', ['broker'], 3), pool('controllers', ['controller'], 0)])).toMatch(/controller role/);
    expect(kafkaProblem(kafka(), [pool('dual-role', ['controller', 'broker'], 1), pool('empty', [], 1)])).toBe(
      'The Kafka cluster kafka-cluster is invalid: [KafkaNodePool empty has no role defined in .spec.roles]',
    );
  });

  it('counts as brokers the replicas of its broker pools', () => {
    expect(brokerCount([pool('brokers', ['broker'], 3), pool('controllers', ['controller'], 3), pool('dual-role', ['controller', 'broker'], 1)])).toBe(4);
  });
});

describe('a KafkaUser, as Strimzi\'s user operator takes it', () => {
  const user = (authorization?: object): KubeObject =>
    ({ apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaUser', metadata: { name: 'webapp', namespace: 'kafka' }, spec: { ...(authorization ? { authorization } : {}) } }) as KubeObject;
  const acls = { type: 'simple', acls: [{ resource: { type: 'topic', name: 'orders' }, operations: ['Read'] }] };

  it('refuses simple ACLs on a cluster whose authorization does not manage ACLs', () => {
    const refused = 'Simple authorization ACL rules are configured but not supported in the Kafka cluster configuration.';
    expect(kafkaUserProblem(user(acls), kafka())).toBe(refused);
    expect(kafkaUserProblem(user(acls), kafka({ type: 'custom', authorizerClass: 'x.Authorizer' }))).toBe(refused);
  });

  it('takes them on a cluster with simple authorization, or a custom one that supports the admin API; a user without ACLs anywhere', () => {
    expect(kafkaUserProblem(user(acls), kafka({ type: 'simple' }))).toBeUndefined();
    expect(kafkaUserProblem(user(acls), kafka({ type: 'custom', authorizerClass: 'x.Authorizer', supportsAdminApi: true }))).toBeUndefined();
    expect(kafkaUserProblem(user(), kafka())).toBeUndefined();
  });
});

describe('a KafkaTopic, as Kafka creates it for the topic operator', () => {
  const topic = (replicas: number): KubeObject => ({ apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaTopic', metadata: { name: 'orders', namespace: 'kafka' }, spec: { partitions: 3, replicas } }) as KubeObject;

  it('is refused with more replicas than the cluster has brokers', () => {
    expect(kafkaTopicProblem(topic(3), 1)).toMatch(/InvalidReplicationFactorException: Replication factor: 3 larger than available brokers: 1\./);
    expect(kafkaTopicProblem(topic(1), 1)).toBeUndefined();
  });
});
