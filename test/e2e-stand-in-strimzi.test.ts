import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../e2e/kube-client';
import { bootstrapServiceOf, brokerCount, brokerPodsOf, kafkaProblem, kafkaTopicProblem, kafkaUserProblem, listenerAdmits, poolsOf, saslJaasConfig, scramPassword } from '../e2e/stand-in-strimzi';

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

describe("a Kafka cluster's clients, as Strimzi serves them", () => {
  const cluster = {
    apiVersion: 'kafka.strimzi.io/v1',
    kind: 'Kafka',
    metadata: { name: 'kafka-cluster', namespace: 'kafka', uid: 'uid-kafka' },
    spec: {
      kafka: {
        listeners: [
          { name: 'plain', port: 9092, type: 'internal', tls: false },
          { name: 'tls', port: 9093, type: 'internal', tls: true },
          { name: 'external', port: 9094, type: 'nodeport', tls: true },
        ],
      },
    },
  } as unknown as KubeObject;

  it('makes the bootstrap Service: replication and each internal listener, port names as Strimzi\'s, selecting the brokers', () => {
    const service = bootstrapServiceOf(cluster);
    expect(service.metadata.name).toBe('kafka-cluster-kafka-bootstrap');
    expect(service['spec'].selector).toEqual({ 'strimzi.io/cluster': 'kafka-cluster', 'strimzi.io/name': 'kafka-cluster-kafka', 'strimzi.io/kind': 'Kafka', 'strimzi.io/broker-role': 'true' });
    // Each port sends to the brokers' container port of the same name.
    expect(service['spec'].ports.map((p: any) => [p.name, p.port, p.targetPort])).toEqual([
      ['tcp-replication', 9091, 'tcp-replication'],
      ['tcp-clients', 9092, 'tcp-clients'],
      ['tcp-clientstls', 9093, 'tcp-clientstls'],
    ]);
    const pool = { apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaNodePool', metadata: { name: 'dual-role', namespace: 'kafka', uid: 'p' }, spec: { roles: ['controller', 'broker'], replicas: 1 } } as unknown as KubeObject;
    expect(brokerPodsOf(cluster, [pool])[0]!['spec'].containers[0].ports).toEqual([
      { name: 'tcp-kafkaagent', containerPort: 8443, protocol: 'TCP' },
      { name: 'tcp-ctrlplane', containerPort: 9090, protocol: 'TCP' },
      { name: 'tcp-replication', containerPort: 9091, protocol: 'TCP' },
      { name: 'tcp-clients', containerPort: 9092, protocol: 'TCP' },
      { name: 'tcp-clientstls', containerPort: 9093, protocol: 'TCP' },
      { name: 'tcp-external', containerPort: 9094, protocol: 'TCP' },
    ]);
  });

  it("admits a client by its listener's network policy peers: everyone without peers, else a matching namespace (and pod)", () => {
    const webapp = { name: 'webapp', labels: { 'kubernetes.io/metadata.name': 'webapp' } };
    const open = { name: 'plain', port: 9092, tls: false };
    const peers = { ...open, networkPolicyPeers: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'webapp' } } }] };
    expect(listenerAdmits(open, 'kafka', webapp, {})).toBe(true);
    expect(listenerAdmits(peers, 'kafka', webapp, {})).toBe(true);
    expect(listenerAdmits(peers, 'kafka', { name: 'billing', labels: { 'kubernetes.io/metadata.name': 'billing' } }, {})).toBe(false);
    // A pod selector alone selects pods of the cluster's own namespace.
    const podsOnly = { ...open, networkPolicyPeers: [{ podSelector: { matchLabels: { app: 'smoke' } } }] };
    expect(listenerAdmits(podsOnly, 'kafka', webapp, { app: 'smoke' })).toBe(false);
    expect(listenerAdmits(podsOnly, 'kafka', { name: 'kafka', labels: {} }, { app: 'smoke' })).toBe(true);
  });
});

describe("a SCRAM user's password, as the User Operator chooses it", () => {
  const user = (ref?: { name: string; key: string }): KubeObject =>
    ({ apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaUser', metadata: { name: 'webapp', namespace: 'kafka' }, spec: { authentication: { type: 'scram-sha-512', ...(ref ? { password: { valueFrom: { secretKeyRef: ref } } } : {}) } } }) as KubeObject;
  const generate = () => 'generated';

  it('takes the one its Secret reference names, over the one it gave before', () => {
    const secrets = new Map([['webapp-broker-user', { password: 'desired' }], ['webapp', { password: 'earlier' }]]);
    expect(scramPassword(user({ name: 'webapp-broker-user', key: 'password' }), secrets, generate)).toEqual({ password: 'desired' });
  });

  it("refuses a reference to a Secret or key that does not exist, or an empty password, with Strimzi's messages", () => {
    const ref = { name: 'webapp-broker-user', key: 'password' };
    expect(scramPassword(user(ref), new Map(), generate)).toEqual({ problem: 'Secret webapp-broker-user with requested user password does not exist.' });
    expect(scramPassword(user(ref), new Map([['webapp-broker-user', { other: 'x' }]]), generate)).toEqual({ problem: 'Secret webapp-broker-user does not contain the key password with requested user password.' });
    expect(scramPassword(user(ref), new Map([['webapp-broker-user', { password: '' }]]), generate)).toEqual({ problem: 'The requested user password is empty.' });
  });

  it('gives none to a user that does not authenticate with SCRAM-SHA-512', () => {
    const tls = { ...user(), spec: { authentication: { type: 'tls' } } } as unknown as KubeObject;
    expect(scramPassword(tls, new Map([['webapp', { password: 'earlier' }]]), generate)).toBeUndefined();
  });

  it("without a reference keeps the password of the user's own Secret, else makes one", () => {
    expect(scramPassword(user(), new Map([['webapp', { password: 'earlier' }]]), generate)).toEqual({ password: 'earlier' });
    expect(scramPassword(user(), new Map(), generate)).toEqual({ password: 'generated' });
    expect(saslJaasConfig('webapp', 'p')).toBe('org.apache.kafka.common.security.scram.ScramLoginModule required username="webapp" password="p";');
  });
});
