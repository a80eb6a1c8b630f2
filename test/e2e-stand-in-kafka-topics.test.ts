import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../e2e/kube-client';
import { brokerPodsOf } from '../e2e/stand-in-strimzi';
import { listTopicsCommand, scramClientProperties } from '../src/cluster/kafka-topics';

// The e2e's stand-in of kafka-topics.sh in a broker's container (e2e/stand-in-kafka-topics.mjs)
// refuses what Kafka refuses and lists what Kafka would; here it runs under the very command
// `ops check --component broker` sends (src/cluster/kafka-topics.ts).

const STAND_IN = path.join(__dirname, '..', 'e2e', 'stand-in-kafka-topics.mjs');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stand-in-kafka-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
fs.writeFileSync(path.join(dir, 'kafka-topics.sh'), `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`, { mode: 0o755 });
const state = path.join(dir, 'kafka.json');
const allow = (topic: string, operations: string[], patternType = 'literal') => ({ type: 'allow', resource: { type: 'topic', name: topic, patternType }, operations });
fs.writeFileSync(
  state,
  JSON.stringify({
    topics: ['declarations', 'orders', 'orders-archive', 'secret'],
    users: {
      webapp: { password: 's3cret "quoted" \\ wörd', acls: [allow('declarations', ['Read', 'Write'])] },
      reporting: { password: 'r', acls: [allow('orders', ['Describe'], 'prefix'), allow('secret', ['Create', 'DescribeConfigs'])] },
    },
  }),
);

function list(properties: string, command = listTopicsCommand()) {
  const [shell, ...rest] = command;
  return spawnSync(shell!, rest, { input: properties, env: { PATH: `${dir}:${process.env['PATH']}`, KAFKA_STATE: state }, encoding: 'utf8' });
}

describe("the e2e's kafka-topics.sh in a broker's container", () => {
  it("lists, for the check's own command and properties, the topics the user's ACLs let it describe", () => {
    const run = list(scramClientProperties('webapp', 's3cret "quoted" \\ wörd'));
    expect(run.stdout, run.stderr).toBe('declarations\n');
    expect(run.status).toBe(0);
    expect(list(scramClientProperties('reporting', 'r')).stdout).toBe('orders\norders-archive\n');
  });

  it("refuses a wrong password or an unknown user with Kafka's authentication error, exit 1", () => {
    for (const [user, password] of [['webapp', 'wrong'], ['nobody', 'r']] as const) {
      const run = list(scramClientProperties(user, password));
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('Error while executing topic command : Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512\n');
      expect(run.stderr).toMatch(/ERROR org\.apache\.kafka\.common\.errors\.SaslAuthenticationException/);
    }
  });

  it('refuses another mechanism, a client without SASL and another bootstrap server', () => {
    const properties = scramClientProperties('webapp', 's3cret "quoted" \\ wörd');
    expect(list(properties.replace('SCRAM-SHA-512', 'SCRAM-SHA-256')).stdout).toMatch(/Client SASL mechanism 'SCRAM-SHA-256' not enabled in the server, enabled mechanisms are \[SCRAM-SHA-512\]/);
    expect(list(properties.replace('SASL_PLAINTEXT', 'PLAINTEXT')).stdout).toMatch(/Timed out waiting for a node assignment/);
    const elsewhere = listTopicsCommand().map((part) => part.replace('localhost:9092', 'kafka-cluster-kafka-bootstrap:9092'));
    const run = list(properties, elsewhere);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/Timed out waiting for a node assignment/);
  });
});

describe("the brokers' pods Strimzi runs for a Ready cluster", () => {
  it('makes one per replica of each broker pool, named <cluster>-<pool>-<n>, labelled with its roles, its container kafka with /tmp an emptyDir, restricted', () => {
    const kafka = { apiVersion: 'kafka.strimzi.io/v1', kind: 'Kafka', metadata: { name: 'kafka-cluster', namespace: 'kafka' }, spec: { kafka: { listeners: [{ port: 9092 }] } } } as KubeObject;
    const pool = (name: string, roles: string[], replicas: number) =>
      ({ apiVersion: 'kafka.strimzi.io/v1', kind: 'KafkaNodePool', metadata: { name, namespace: 'kafka', uid: `uid-${name}` }, spec: { roles, replicas } }) as KubeObject;
    const pods = brokerPodsOf(kafka, [pool('dual-role', ['controller', 'broker'], 2), pool('controllers', ['controller'], 3)]);
    expect(pods.map((pod) => pod.metadata.name)).toEqual(['kafka-cluster-dual-role-0', 'kafka-cluster-dual-role-1']);
    expect(pods[0]!.metadata.labels).toMatchObject({ 'strimzi.io/cluster': 'kafka-cluster', 'strimzi.io/pool-name': 'dual-role', 'strimzi.io/broker-role': 'true', 'strimzi.io/controller-role': 'true' });
    const container = pods[0]!['spec'].containers[0];
    expect(container.name).toBe('kafka');
    expect(container.volumeMounts).toEqual([{ name: 'strimzi-tmp', mountPath: '/tmp' }]);
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pods[0]!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'KafkaNodePool', name: 'dual-role', controller: true })]);
  });
});
