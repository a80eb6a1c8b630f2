import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KubeClient, KubeObject } from '../e2e/kube-client';
import { readObjects } from '../e2e/dry-run';
import { STAND_INS } from '../e2e/stand-in-charts';
import { StandInControllers } from '../e2e/stand-in-controllers';
import {
  bootstrapServiceOf,
  brokerCount,
  brokerPodsOf,
  brokersReady,
  entityOperatorNamespace,
  kafkaProblem,
  kafkaNetworkPolicyOf,
  kafkaRefusal,
  kafkaTopicProblem,
  kafkaUserProblem,
  kafkaVersionProblem,
  listenerAdmits,
  listenersProblem,
  poolsOf,
  replicationProblem,
  saslJaasConfig,
  scramPassword,
  STRIMZI_SUPPORTED_KAFKA_VERSIONS,
} from '../e2e/stand-in-strimzi';
import { ENVIRONMENT_ORDER } from '../src/environments';
import { ROOT } from './support';

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

const withKafka = (kafka: object, spec: object): KubeObject => ({ ...(kafka as KubeObject), spec: { ...(kafka as any).spec, kafka: { ...(kafka as any).spec.kafka, ...spec } } }) as KubeObject;
const listeners = (...ports: Array<[string, number]>) => ({ listeners: ports.map(([name, port]) => ({ name, port, type: 'internal', tls: false })) });
const dualRole = pool('dual-role', ['controller', 'broker'], 3);

describe("a Kafka's version, as Strimzi 1.2.0's cluster operator takes it (KafkaVersion.java, kafka-versions.yaml)", () => {
  it('takes none (its default) and each supported one', () => {
    expect(kafkaVersionProblem(kafka())).toBeUndefined();
    for (const version of STRIMZI_SUPPORTED_KAFKA_VERSIONS) expect(kafkaVersionProblem(withKafka(kafka(), { version }))).toBeUndefined();
  });

  it('refuses one it does not support, listing those it does, as an UnsupportedKafkaVersionException', () => {
    const refused = withKafka(kafka(), { version: '3.9.0' });
    expect(kafkaVersionProblem(refused)).toBe(`Unsupported Kafka.spec.kafka.version: 3.9.0. Supported versions are: [${STRIMZI_SUPPORTED_KAFKA_VERSIONS.join(', ')}]`);
    expect(kafkaRefusal(refused, [dualRole])?.reason).toBe('UnsupportedKafkaVersionException');
  });
});

describe("a Kafka's listeners, as Strimzi 1.2.0's ListenersValidator takes them", () => {
  it('takes unique names and ports from 9092 up, but the reserved ones', () => {
    expect(listenersProblem(withKafka(kafka(), listeners(['plain', 9092], ['tls', 9093], ['external', 9094])))).toBeUndefined();
  });

  it('refuses a port Strimzi keeps (metrics 9404, JMX 9999) or one below 9092 (its control plane and replication)', () => {
    for (const port of [9404, 9999, 9091, 9090, 80]) {
      expect(listenersProblem(withKafka(kafka(), listeners(['plain', port])))).toBe(`Listener configuration is not valid: [port ${port} is forbidden and cannot be used]`);
    }
  });

  it('refuses two listeners on one port, and two of one name', () => {
    expect(listenersProblem(withKafka(kafka(), listeners(['plain', 9092], ['tls', 9092])))).toBe('Listener configuration is not valid: [every listener needs to have a unique port number]');
    expect(listenersProblem(withKafka(kafka(), listeners(['plain', 9092], ['plain', 9093])))).toBe('Listener configuration is not valid: [every listener needs to have a unique name]');
    expect(listenersProblem(withKafka(kafka(), listeners(['Plain_1', 9092])))).toBe('Listener configuration is not valid: [listener names [Plain_1] are invalid and do not match the pattern ^[a-z0-9]{1,11}$]');
  });

  it('refuses the Kafka for them as an InvalidResourceException', () => {
    expect(kafkaRefusal(withKafka(kafka(), listeners(['plain', 9999])), [dualRole])).toEqual({ reason: 'InvalidResourceException', message: 'Listener configuration is not valid: [port 9999 is forbidden and cannot be used]' });
  });
});

describe("a Kafka's replication settings, as KafkaCluster.fromCrd checks them", () => {
  it('refuses one above the brokers its pools give it, naming the setting', () => {
    const config = (value: unknown) => withKafka(kafka(), { config: { 'default.replication.factor': value } });
    expect(replicationProblem(config(3), 3)).toBeUndefined();
    expect(replicationProblem(config(3), 1)).toBe("Kafka configuration option 'default.replication.factor' should be set to 1 because this cluster has only 1 Kafka broker(s).");
    expect(replicationProblem(config(4), 3)).toBe("Kafka configuration option 'default.replication.factor' should be set to 3 or less because this cluster has only 3 Kafka broker(s).");
    expect(replicationProblem(config('three'), 3)).toBe('Property default.replication.factor should be an integer');
  });
});

describe("the platform's Kafka of every environment, as the stand-in judges it", () => {
  it('is accepted: its version, node pools, replication settings and listeners', () => {
    for (const environment of ENVIRONMENT_ORDER) {
      const objects = readObjects(path.join(ROOT, 'dist', environment)).map((entry) => entry.object);
      const pools = objects.filter((o) => o.kind === 'KafkaNodePool');
      for (const cluster of objects.filter((o) => o.kind === 'Kafka')) {
        expect(kafkaRefusal(cluster, poolsOf(cluster, pools)), `${environment}: Kafka ${cluster.metadata.name}`).toBeUndefined();
        expect(entityOperatorNamespace(cluster, 'KafkaTopic'), environment).toBe(cluster.metadata.namespace);
        expect(entityOperatorNamespace(cluster, 'KafkaUser'), environment).toBe(cluster.metadata.namespace);
      }
    }
  });
});

describe("the Entity Operator's topic and user operators (EntityOperator.java)", () => {
  it('watch the Kafka\'s namespace, or the one they name; none runs when the Kafka leaves it out', () => {
    const eo = (entityOperator: object) => ({ ...kafka(), spec: { kafka: {}, entityOperator } }) as unknown as KubeObject;
    expect(entityOperatorNamespace(kafka(), 'KafkaTopic')).toBeUndefined();
    expect(entityOperatorNamespace(eo({ userOperator: {} }), 'KafkaTopic')).toBeUndefined();
    expect(entityOperatorNamespace(eo({ userOperator: {} }), 'KafkaUser')).toBe('kafka');
    expect(entityOperatorNamespace(eo({ topicOperator: { watchedNamespace: 'topics' } }), 'KafkaTopic')).toBe('topics');
  });
});

/** An in-memory client: lists, reads, creates and patches objects, as the stand-in controllers use one. */
function memoryClient(objects: KubeObject[]): KubeClient & { stored: KubeObject[] } {
  const same = (a: KubeObject, b: KubeObject) => a.kind === b.kind && a.metadata.name === b.metadata.name && a.metadata.namespace === b.metadata.namespace;
  const client = {
    stored: objects,
    list: async (_apiVersion: string, kind: string, namespace?: string) => objects.filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace)),
    get: async (_apiVersion: string, kind: string, name: string, namespace?: string) => objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace),
    create: async (object: KubeObject) => void objects.push(structuredClone(object)),
    apply: async (object: KubeObject) => {
      const index = objects.findIndex((o) => same(o, object));
      if (index >= 0) objects[index] = structuredClone(object);
      else objects.push(structuredClone(object));
    },
    mergePatch: async (object: KubeObject, patch: { status?: unknown }) => {
      const found = objects.find((o) => same(o, object))!;
      found.status = patch.status;
    },
  };
  return client as unknown as KubeClient & { stored: KubeObject[] };
}

describe('the Strimzi stand-in, pass by pass (e2e/stand-in-controllers.ts)', () => {
  const operator = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: STAND_INS['strimzi-kafka-operator']!.controller, namespace: 'strimzi' }, spec: {}, status: { availableReplicas: 1 } } as unknown as KubeObject;
  const cluster = (entityOperator?: object): KubeObject =>
    ({ ...kafka({ type: 'simple' }), metadata: { name: 'kafka-cluster', namespace: 'kafka', uid: 'k', generation: 1 }, spec: { kafka: { authorization: { type: 'simple' }, ...listeners(['plain', 9092]) }, ...(entityOperator ? { entityOperator } : {}) } }) as unknown as KubeObject;
  const labels = { 'strimzi.io/cluster': 'kafka-cluster' };
  const topic = { apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaTopic', metadata: { name: 'orders', namespace: 'kafka', labels, generation: 1 }, spec: { partitions: 3, replicas: 1 } } as unknown as KubeObject;
  const user = { apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaUser', metadata: { name: 'webapp', namespace: 'kafka', labels, uid: 'u', generation: 1 }, spec: { authentication: { type: 'scram-sha-512' } } } as unknown as KubeObject;
  const ready = (o: KubeObject | undefined) => (o?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready' || c.type === 'NotReady');
  /** kwok's part: every pod Running and Ready. */
  const run = (client: { stored: KubeObject[] }) => {
    for (const pod of client.stored.filter((o) => o.kind === 'Pod')) pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  };
  const find = (client: { stored: KubeObject[] }, kind: string, name: string) => client.stored.find((o) => o.kind === kind && o.metadata.name === name);

  it('makes the Kafka Ready only once its broker pods run, and its topic and user Ready only then', async () => {
    const client = memoryClient([operator, cluster({ topicOperator: {}, userOperator: {} }), { ...pool('dual-role', ['controller', 'broker'], 1), metadata: { ...dualRole.metadata, uid: 'p' } } as KubeObject, structuredClone(topic), structuredClone(user)]);
    const controllers = new StandInControllers(client);
    await controllers.reconcile();
    expect(ready(find(client, 'Kafka', 'kafka-cluster'))).toMatchObject({ type: 'NotReady', reason: 'Creating', message: 'Kafka cluster is being deployed' });
    expect(find(client, 'Pod', 'kafka-cluster-dual-role-0')).toBeDefined();
    expect(find(client, 'NetworkPolicy', 'kafka-cluster-network-policy-kafka')).toBeDefined();
    expect(brokersReady(find(client, 'Kafka', 'kafka-cluster')!, [find(client, 'KafkaNodePool', 'dual-role')!], client.stored.filter((o) => o.kind === 'Pod'))).toBe(false);
    // Nothing reconciles the topic and the user before the cluster is Ready (its Entity Operator is deployed after).
    expect(find(client, 'KafkaTopic', 'orders')!.status).toBeUndefined();
    expect(find(client, 'KafkaUser', 'webapp')!.status).toBeUndefined();
    run(client);
    await controllers.reconcile();
    expect(ready(find(client, 'Kafka', 'kafka-cluster'))).toMatchObject({ type: 'Ready', status: 'True' });
    await controllers.reconcile();
    expect(ready(find(client, 'KafkaTopic', 'orders'))).toMatchObject({ type: 'Ready', status: 'True' });
    expect(ready(find(client, 'KafkaUser', 'webapp'))).toMatchObject({ type: 'Ready', status: 'True' });
  });

  it("leaves the topic and the user unready without the Entity Operator's topic and user operators", async () => {
    const client = memoryClient([operator, cluster(), { ...pool('dual-role', ['controller', 'broker'], 1), metadata: { ...dualRole.metadata, uid: 'p' } } as KubeObject, structuredClone(topic), structuredClone(user)]);
    const controllers = new StandInControllers(client);
    await controllers.reconcile();
    run(client);
    await controllers.reconcile();
    await controllers.reconcile();
    expect(ready(find(client, 'Kafka', 'kafka-cluster'))).toMatchObject({ type: 'Ready', status: 'True' });
    expect(find(client, 'KafkaTopic', 'orders')!.status).toBeUndefined();
    expect(find(client, 'KafkaUser', 'webapp')!.status).toBeUndefined();
    expect(find(client, 'Secret', 'webapp')).toBeUndefined();
  });

  it('refuses a Kafka with a reserved listener port, and makes no broker pod for it', async () => {
    const refused = withKafka(cluster({ topicOperator: {}, userOperator: {} }), listeners(['plain', 9999]));
    const client = memoryClient([operator, refused, { ...pool('dual-role', ['controller', 'broker'], 1), metadata: { ...dualRole.metadata, uid: 'p' } } as KubeObject]);
    await new StandInControllers(client).reconcile();
    expect(ready(find(client, 'Kafka', 'kafka-cluster'))).toMatchObject({ type: 'NotReady', reason: 'InvalidResourceException', message: 'Listener configuration is not valid: [port 9999 is forbidden and cannot be used]' });
    expect(client.stored.filter((o) => o.kind === 'Pod')).toEqual([]);
  });
});

describe("the brokers' NetworkPolicy, as Strimzi's cluster operator makes it (KafkaCluster.java generateNetworkPolicy)", () => {
  const peers = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'webapp' } } }];
  const cluster = { ...kafka(), metadata: { name: 'kafka-cluster', namespace: 'kafka', uid: 'k' }, spec: { kafka: { listeners: [{ name: 'plain', port: 9092, type: 'internal', tls: false, networkPolicyPeers: peers }, { name: 'tls', port: 9093, type: 'internal', tls: true }] } } } as unknown as KubeObject;

  it("selects the cluster's pods and opens each listener to its peers (to everyone without), Strimzi's own ports to its components", () => {
    const policy = kafkaNetworkPolicyOf(cluster, 'strimzi');
    expect(policy.metadata.name).toBe('kafka-cluster-network-policy-kafka');
    expect(policy['spec'].podSelector).toEqual({ matchLabels: { 'strimzi.io/cluster': 'kafka-cluster', 'strimzi.io/name': 'kafka-cluster-kafka', 'strimzi.io/kind': 'Kafka' } });
    const rules = policy['spec'].ingress.map((rule: any) => [rule.ports[0].port, rule.from]);
    const operator = { podSelector: { matchLabels: { 'strimzi.io/kind': 'cluster-operator' } }, namespaceSelector: {} };
    expect(rules.map(([port]: [number]) => port)).toEqual([9090, 9091, 8443, 9092, 9093]);
    expect(rules[2][1]).toEqual([operator]);
    expect(rules[3][1]).toEqual(peers);
    expect(rules[4][1]).toEqual([]);
    // The operator in the cluster's own namespace: admitted from there only.
    expect(kafkaNetworkPolicyOf(cluster, 'kafka')['spec'].ingress[2].from).toEqual([{ podSelector: { matchLabels: { 'strimzi.io/kind': 'cluster-operator' } } }]);
  });
});
