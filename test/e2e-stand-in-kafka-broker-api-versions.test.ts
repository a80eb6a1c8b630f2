import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { brokerStepScript } from '../src/constructs/smoke-hook';
import { SMOKE_VARIABLES } from '../src/contract/naming';
import { STRIMZI } from '../src/contract/upstream';

// The smoke hook's broker step (4.1 step 5), its rendered script run by `sh`, against the e2e's
// stand-in of kafka-broker-api-versions.sh (e2e/stand-in-kafka-broker-api-versions.mjs), which
// answers as Kafka 4.3.1's tool does from what the cluster holds and what the pod reaches.

const STAND_IN = path.join(__dirname, '..', 'e2e', 'stand-in-kafka-broker-api-versions.mjs');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stand-in-kafka-api-versions-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const tool = path.join(dir, 'kafka-broker-api-versions.sh');
fs.writeFileSync(tool, `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`, { mode: 0o755 });

const BOOTSTRAP = 'kafka-cluster-kafka-bootstrap.kafka.svc.cluster.local';
const state = path.join(dir, 'kafka.json');
const network = path.join(dir, 'network.json');
fs.writeFileSync(network, JSON.stringify({
  resolvable: [BOOTSTRAP, 'webapp.webapp.svc.cluster.local'],
  listeners: [`${BOOTSTRAP}:9092`],
  brokers: [{ id: 0, host: 'kafka-cluster-dual-role-0.kafka-cluster-kafka-brokers.kafka.svc', port: 9092 }],
}));
const users = (password: string) => fs.writeFileSync(state, JSON.stringify({ topics: [], users: { webapp: { password, acls: [] } } }));

/** The rendered step, its image's tool the stand-in's and its scratch folder (the /tmp emptyDir) this test's. */
function brokerStep(variables: { username?: string; password: string; bootstrap?: string }) {
  const script = brokerStepScript().replaceAll('/tmp/', `${dir}/`).replaceAll(STRIMZI.brokerPods.apiVersionsTool, tool);
  return spawnSync('sh', ['-c', script], {
    env: {
      PATH: process.env['PATH'] ?? '',
      KAFKA_STATE: state,
      KAFKA_NETWORK: network,
      [SMOKE_VARIABLES.bootstrapServers]: variables.bootstrap ?? `${BOOTSTRAP}:9092`,
      [SMOKE_VARIABLES.brokerUsername]: variables.username ?? 'webapp',
      [SMOKE_VARIABLES.brokerPassword]: variables.password,
    },
    encoding: 'utf8',
  });
}

describe("the smoke hook's broker step on the e2e's kafka-broker-api-versions.sh", () => {
  it('passes with the user\'s credential at the bootstrap address, the tool having asked each broker', () => {
    users('Gen3rated-pass');
    const run = brokerStep({ password: 'Gen3rated-pass' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('smoke: broker passed\n');
    expect(run.status).toBe(0);
    const direct = spawnSync(tool, ['--bootstrap-server', `${BOOTSTRAP}:9092`, '--command-config', path.join(dir, 'client.properties')], { env: { KAFKA_STATE: state, KAFKA_NETWORK: network }, encoding: 'utf8' });
    expect(direct.stdout).toMatch(/^kafka-cluster-dual-role-0\.kafka-cluster-kafka-brokers\.kafka\.svc:9092 \(id: 0 rack: null isFenced: false\) -> \(/);
  });

  it('carries a password with a double quote, a backslash, a dollar and spaces to the broker unchanged', () => {
    const password = 'a "quoted" \\ back$slash $HOME `x`';
    users(password);
    const run = brokerStep({ password });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('fails with Kafka\'s authentication error for a wrong password or another user', () => {
    users('right');
    for (const variables of [{ password: 'wrong' }, { username: 'billing', password: 'right' }]) {
      const run = brokerStep(variables);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/^Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512\nsmoke: broker failed\n$/);
    }
  });

  it('fails as the client does for a host DNS does not resolve, and for an address no listener answers', () => {
    users('right');
    expect(brokerStep({ password: 'right', bootstrap: 'kafka-cluster-kafka-bootstrap:9092' }).stderr).toBe('No resolvable bootstrap urls given in bootstrap.servers\nsmoke: broker failed\n');
    const elsewhere = brokerStep({ password: 'right', bootstrap: `${BOOTSTRAP}:9093` });
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.stderr).toBe(`Request METADATA failed on brokers [${BOOTSTRAP}:9093 (id: -1 rack: null isFenced: false)]\nsmoke: broker failed\n`);
  });
});
