import type { NetworkPolicyJudge, PodConnection, PolicyVerdict } from '../e2e/network-policy';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_SETUP_NAME } from '../src/constructs/database-setup';
import { DATABASE } from '../src/contract/choices';
import { databaseLoginSecret, databaseSecret, migrationsName, SMOKE_VARIABLES, smokeName } from '../src/contract/naming';
import { BASE_URL_VARIABLE, BROKER_STEP_CONTAINER, DATABASE_STEP_CONTAINER, HTTP_STEP_CONTAINER } from '../src/constructs/smoke-hook';
import { BROKER } from '../src/contract/contract';
import { bootstrapServiceOf, brokerPodsOf } from '../e2e/stand-in-strimzi';
import { connectionString } from '../src/secrets/catalog';
import type { KubeClient, KubeObject } from '../e2e/kube-client';
import { LiveContainers, SQL_SERVER_STATE_FILE } from '../e2e/live-containers';
import { readState, STAND_IN_MIGRATIONS } from '../e2e/sql-server-state';
import { committedObjects, projectEnvironments, temporaryDirectory } from './support';

// The harness plays two hooks of each application (e2e/live-containers.ts): the migrations image
// of its Sync hook and the steps of its PostSync smoke hook (HTTP, database, broker). What local
// renders (the database's Service, the SQL Server pod, the setup hook, the application's Service
// and pod, its KafkaUser, the hooks' pods; the Kafka cluster's bootstrap Service and broker pod
// as the Strimzi stand-in makes them) in a cluster of plain objects, then one thing broken as a
// review could miss it: the hook's pod must fail as the real container would. The broker step
// runs as its container, in a mount namespace of its own: as root, like the e2e.

const local = projectEnvironments().local!;
const app = local.applications[0]!;
const databaseNamespace = local.database.namespace;
const password = 'the-login-password-1';
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

const brokerPassword = 'the-broker-password';
/** The smoke Secret's keys, `changed` over what local's catalog gives them. */
const smokeSecret = (changed: Record<string, string> = {}) => ({
  [SMOKE_VARIABLES.username]: 'smoke',
  [SMOKE_VARIABLES.password]: 'the-smoke-password',
  [SMOKE_VARIABLES.databaseUser]: app.name,
  [SMOKE_VARIABLES.databasePassword]: password,
  [SMOKE_VARIABLES.brokerUsername]: app.name,
  [SMOKE_VARIABLES.brokerPassword]: brokerPassword,
  ...changed,
});
const encode = (value: string) => Buffer.from(value, 'utf8').toString('base64');
const secret = (name: string, namespace: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, encode(value)])),
});

/** local's objects as a cluster would hold them once the hooks' pods run (the smoke hook's only with `smoke`), each changed by `change` first. */
function cluster(change: (objects: KubeObject[]) => void = () => undefined, smoke = false): KubeObject[] {
  const rendered = (kind: string, name: string, namespace: string) => structuredClone(committedObjects('local').find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace)) as KubeObject;
  const server = rendered('StatefulSet', DATABASE.serverName, databaseNamespace);
  const hook = rendered('Job', migrationsName(app.name), app.namespace);
  const objects: KubeObject[] = [
    rendered('Service', DATABASE.serverName, databaseNamespace),
    rendered('Job', DATABASE_SETUP_NAME, databaseNamespace),
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${DATABASE.serverName}-0`, namespace: databaseNamespace, uid: 'server', labels: server.spec.template.metadata.labels }, spec: server.spec.template.spec, status: { phase: 'Running' } },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${hook.metadata.name}-abcde`, namespace: app.namespace, uid: 'hook', labels: { ...hook.spec.template.metadata.labels, 'job-name': hook.metadata.name } },
      spec: hook.spec.template.spec,
      status: { phase: 'Running' },
    },
    secret(DATABASE.adminSecret.name, databaseNamespace, { [DATABASE.adminSecret.key]: 'the-admin-password' }),
    secret(databaseLoginSecret(app.name), databaseNamespace, { password }),
    secret(databaseSecret(app.name), app.namespace, { 'connection-string': connectionString(local, app, password) }),
  ];
  const service = rendered('Service', app.name, app.namespace);
  const workload = committedObjects('local').find((o) => o.kind === 'Deployment' && o.metadata.namespace === app.namespace && o.spec.template.metadata.labels.app === app.name) as KubeObject;
  const smokeJob = rendered('Job', smokeName(app.name), app.namespace);
  const ready = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  objects.push(
    service,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${workload.metadata.name}-1`, namespace: app.namespace, uid: 'app', labels: workload.spec.template.metadata.labels }, spec: structuredClone(workload.spec.template.spec), status: ready },
    secret(smokeName(app.name), app.namespace, smokeSecret()),
  );
  if (smoke) {
    // The broker step's cluster: Kafka's bootstrap Service and broker pod as the Strimzi
    // stand-in makes them, the application's KafkaUser Ready with the password Strimzi gave it.
    const kafka = rendered('Kafka', BROKER.clusterName, local.broker.namespace);
    kafka.metadata.uid = 'kafka';
    const pools = committedObjects('local').filter((o) => o.kind === 'KafkaNodePool').map((o) => structuredClone(o) as KubeObject);
    const user = rendered('KafkaUser', app.name, local.broker.namespace);
    user['status'] = { conditions: [{ type: 'Ready', status: 'True' }] };
    objects.push(
      kafka,
      bootstrapServiceOf(kafka),
      ...brokerPodsOf(kafka, pools).map((pod) => ({ ...pod, status: ready })),
      user,
      secret(app.name, local.broker.namespace, { password: brokerPassword }),
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: app.namespace, labels: { 'kubernetes.io/metadata.name': app.namespace } } },
    );
    objects.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${smokeJob.metadata.name}-fghij`, namespace: app.namespace, uid: 'smoke', labels: { ...smokeJob.spec.template.metadata.labels, 'job-name': smokeJob.metadata.name } },
      spec: smokeJob.spec.template.spec,
      status: { phase: 'Running' },
    });
  }
  change(objects);
  return objects;
}

/** One pass of the harness over `objects`: the hook pod's status as patched, and what was logged and recorded. */
async function play(objects: KubeObject[], policies?: NetworkPolicyJudge) {
  const find = (kind: string, name: string, namespace?: string) => objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
  const client = {
    get: async (_apiVersion: string, kind: string, name: string, namespace?: string) => find(kind, name, namespace),
    list: async (_apiVersion: string, kind: string, namespace?: string) => objects.filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace)),
    apply: async (object: KubeObject) => object,
    mergePatch: async (object: KubeObject, patch: { status: unknown }) => {
      const target = find(object.kind, object.metadata.name, object.metadata.namespace)!;
      target['status'] = patch.status;
      return target;
    },
  } as unknown as KubeClient;
  const root = temporaryDirectory('platform-gitops-live-migrations-');
  roots.push(root);
  const lines: string[] = [];
  const applications = local.applications.map((a) => ({ namespace: a.namespace, container: a.name, name: a.name, database: a.database.name }));
  const containers = new LiveContainers(client, root, applications, databaseNamespace, local.broker.namespace, (line) => lines.push(line), policies);
  await containers.reconcile();
  await containers.close();
  const pod = (uid: string) => objects.find((o) => o.kind === 'Pod' && o.metadata.uid === uid)!;
  const state = readState(path.join(root, databaseNamespace, `${DATABASE.serverName}-0`, SQL_SERVER_STATE_FILE));
  return { status: pod('hook')['status'], runs: containers.migrations, lines, migrated: state.databases[app.database.name]!.migrations, smoke: { status: objects.find((o) => o.metadata.uid === 'smoke')?.['status'], runs: containers.smoke } };
}

const failedWith = async (change: (objects: KubeObject[]) => void, message: RegExp) => {
  const { status, runs, migrated } = await play(cluster(change));
  expect(status.phase).toBe('Failed');
  expect(status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  expect(runs).toEqual([{ pod: `${app.namespace}/${migrationsName(app.name)}-abcde`, job: migrationsName(app.name), exitCode: 1, message: expect.stringMatching(message) }]);
  expect(migrated).toEqual([]);
};
const objectOf = (objects: KubeObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;

describe('the Sync hook\'s migrations image, played with its pod\'s connection string', () => {
  it('logs in as the setup hook\'s login and applies every migration of the image to a database that has none', async () => {
    const { status, runs, lines, migrated } = await play(cluster());
    const ids = STAND_IN_MIGRATIONS.map((migration) => migration.id);
    expect(status.phase).toBe('Succeeded');
    expect(runs).toEqual([{ pod: `${app.namespace}/${migrationsName(app.name)}-abcde`, job: migrationsName(app.name), exitCode: 0, message: `Applied ${ids.join(', ')}. Done.` }]);
    expect(lines[0]).toBe(`${app.namespace}/${migrationsName(app.name)}-abcde: the migrations image exited 0: Applied ${ids.join(', ')}. Done.`);
    expect(migrated).toEqual(ids);
  });

  it('fails when the login\'s password is not the connection string\'s (one of the two Secrets rotated alone)', async () => {
    await failedWith((objects) => Object.assign(objectOf(objects, 'Secret', databaseLoginSecret(app.name)), secret(databaseLoginSecret(app.name), databaseNamespace, { password: 'rotated' })), new RegExp(`^Login failed for user '${app.name}'\\.$`));
  });

  it('fails when the setup hook creates no such login', async () => {
    await failedWith((objects) => {
      const env = objectOf(objects, 'Job', DATABASE_SETUP_NAME)['spec'].template.spec.containers[0].env;
      for (const variable of env) if (typeof variable.value === 'string') variable.value = variable.value.replaceAll(`[${app.name}]`, '[someone-else]');
    }, /^Login failed for user/);
  });

  it('fails when the database\'s Service has no port 1433, or sends it elsewhere, or selects no SQL Server pod', async () => {
    await failedWith((objects) => (objectOf(objects, 'Service', DATABASE.serverName)['spec'].ports[0].port = 1434), /Could not open a connection to SQL Server: .*,1433: Service \S+ has no port 1433\)$/);
    await failedWith((objects) => (objectOf(objects, 'Service', DATABASE.serverName)['spec'].ports[0].targetPort = 1434), /port 1433 sends to 1434, where SQL Server does not listen\)$/);
    await failedWith((objects) => (objectOf(objects, 'Service', DATABASE.serverName)['spec'].selector = { app: 'nothing' }), /sends to no running SQL Server pod\)$/);
  });

  it('fails when the connection string names a host outside the cluster, or another application\'s database', async () => {
    const other = local.applications[1]!;
    await failedWith((objects) => Object.assign(objectOf(objects, 'Secret', databaseSecret(app.name)), secret(databaseSecret(app.name), app.namespace, { 'connection-string': `Server=tcp:db.example.org,1433;Database=${app.database.name};User ID=${app.name};Password=${password}` })), /db\.example\.org is no Service of the cluster\)$/);
    await failedWith(
      (objects) => Object.assign(objectOf(objects, 'Secret', databaseSecret(app.name)), secret(databaseSecret(app.name), app.namespace, { 'connection-string': connectionString(local, app, password).replace(`Database=${app.database.name}`, `Database=${other.database.name}`) })),
      new RegExp(`^The server principal "${app.name}" is not able to access the database "${other.database.name}"`),
    );
  });
});

describe('the smoke hook\'s steps, the HTTP step\'s run against the pod its Service sends to', () => {
  const smokePod = `${app.namespace}/${smokeName(app.name)}-fghij`;
  const service = (objects: KubeObject[]) => objectOf(objects, 'Service', app.name)['spec'];

  it('passes health, login with the smoke Secret\'s credentials, and declarations on the application\'s pod; the pod then succeeds', async () => {
    const { smoke } = await play(cluster(undefined, true));
    expect(smoke.runs).toEqual([
      {
        pod: smokePod,
        baseUrl: expect.stringMatching(new RegExp(`^http://${app.name}\\.${app.namespace}\\.svc\\.cluster\\.local`)),
        reached: expect.stringMatching(new RegExp(`^pod ${app.namespace}/`)),
        steps: [HTTP_STEP_CONTAINER, DATABASE_STEP_CONTAINER, BROKER_STEP_CONTAINER],
        exitCode: 0,
        output: 'smoke: health, login, declarations passed\nsmoke: database passed\nsmoke: broker passed',
      },
    ]);
    expect(smoke.status.phase).toBe('Succeeded');
    expect(smoke.status.initContainerStatuses.map((c: any) => [c.name, c.state.terminated.exitCode])).toEqual(smoke.status.initContainerStatuses.map((c: any) => [c.name, 0]));
    expect(smoke.status.initContainerStatuses[0].name).toBe(HTTP_STEP_CONTAINER);
  });

  const failed = async (change: (objects: KubeObject[]) => void, reached: RegExp, output: string) => {
    const { smoke } = await play(cluster(change, true));
    expect(smoke.runs).toEqual([{ pod: smokePod, baseUrl: expect.any(String), reached: expect.stringMatching(reached), steps: [HTTP_STEP_CONTAINER], exitCode: 1, output }]);
    expect(smoke.status.phase).toBe('Failed');
    const http = smoke.status.initContainerStatuses.find((c: any) => c.name === HTTP_STEP_CONTAINER);
    expect(http.state.terminated).toMatchObject({ exitCode: 1, reason: 'Error', message: output });
  };

  it('fails at its first step when the Service selects no ready pod, or sends the port where the application does not listen', async () => {
    await failed((objects) => (service(objects).selector = { app: 'nothing' }), /has no ready pod listening on 8080$/, 'smoke: health failed');
    await failed((objects) => (service(objects).ports[0].targetPort = 8081), /has no ready pod listening on 8081$/, 'smoke: health failed');
    await failed((objects) => (service(objects).ports[0].port = 8080), /has no port 80$/, 'smoke: health failed');
  });

  it('fails when its base address names no Service of the cluster', async () => {
    await failed(
      (objects) => {
        const pod = objects.find((o) => o.kind === 'Pod' && o.metadata.uid === 'smoke')!;
        const variable = pod['spec'].initContainers.find((c: any) => c.name === HTTP_STEP_CONTAINER).env.find((e: any) => e.name === BASE_URL_VARIABLE);
        variable.value = `http://${app.name}.elsewhere.svc.cluster.local`;
      },
      new RegExp(`^Service elsewhere/${app.name} does not exist$`),
      'smoke: health failed',
    );
  });

  const databaseFailed = async (change: (objects: KubeObject[]) => void, said: RegExp) => {
    const { smoke } = await play(cluster(change, true));
    expect(smoke.runs).toEqual([{ pod: smokePod, baseUrl: expect.any(String), reached: expect.any(String), steps: [HTTP_STEP_CONTAINER, DATABASE_STEP_CONTAINER], exitCode: 1, output: expect.stringMatching(said) }]);
    expect(smoke.runs[0]!.output).toMatch(/smoke: database failed$/);
    expect(smoke.status.phase).toBe('Failed');
    expect(smoke.status.initContainerStatuses.map((c: any) => [c.name, c.state.terminated?.exitCode ?? 'waiting'])).toEqual([
      [HTTP_STEP_CONTAINER, 0],
      [DATABASE_STEP_CONTAINER, 1],
      ...smoke.status.initContainerStatuses.slice(2).map((c: any) => [c.name, 'waiting']),
    ]);
  };

  it('then logs in to SQL Server as the application\'s login with the smoke Secret\'s password; a password the setup hook did not give fails the database step', async () => {
    await databaseFailed((objects) => Object.assign(objectOf(objects, 'Secret', smokeName(app.name)), secret(smokeName(app.name), app.namespace, smokeSecret({ [SMOKE_VARIABLES.databasePassword]: 'stale' }))), new RegExp(`Login failed for user '${app.name}'`));
  });

  it('fails the database step when no Service port sends its address to SQL Server', async () => {
    await databaseFailed((objects) => (objectOf(objects, 'Service', DATABASE.serverName)['spec'].ports[0].targetPort = 1434), /Login timeout expired/);
  });

  it("fails the database step, naming the policies, when the cluster's NetworkPolicies deny its connection to SQL Server's 1433", async () => {
    const denied: PolicyVerdict = { allowed: false, ingress: { allowed: true, allowedBy: [], deniedBy: [] }, egress: { allowed: false, allowedBy: [], deniedBy: [`${app.namespace}/default-deny`, `${app.namespace}/${smokeName(app.name)}`] } };
    const allowed: PolicyVerdict = { allowed: true, ingress: { allowed: true, allowedBy: [], deniedBy: [] }, egress: { allowed: true, allowedBy: [], deniedBy: [] } };
    const asked: PodConnection[] = [];
    // The engine's part (test/e2e/network-policy-engine.test.ts runs the real one): the database's port denied, the rest allowed.
    const judge = { judge: async (connections: PodConnection[]) => connections.map((c) => (asked.push(c), c.port === 1433 ? denied : allowed)) } as unknown as NetworkPolicyJudge;
    const { smoke } = await play(cluster(undefined, true), judge);
    expect(asked.map((c) => [c.from.namespace, c.from.labels['app'], c.to.namespace, c.port])).toEqual([
      [app.namespace, smokeName(app.name), app.namespace, 8080],
      [app.namespace, smokeName(app.name), databaseNamespace, 1433],
    ]);
    expect(smoke.runs[0]!.steps).toEqual([HTTP_STEP_CONTAINER, DATABASE_STEP_CONTAINER]);
    expect(smoke.runs[0]!.exitCode).not.toBe(0);
    expect(smoke.runs[0]!.output).toMatch(
      new RegExp(`smoke: database failed\\nthe database step's connection to SQL Server \\(${smokePod} to ${databaseNamespace}/\\S+:1433\\) denied: egress by NetworkPolicy ${app.namespace}/default-deny, ${app.namespace}/${smokeName(app.name)} \\(cyclonus`),
    );
    expect(smoke.status.phase).toBe('Failed');
  });

  const brokerFailed = async (change: (objects: KubeObject[]) => void, said: RegExp) => {
    const { smoke } = await play(cluster(change, true));
    expect(smoke.runs).toEqual([{ pod: smokePod, baseUrl: expect.any(String), reached: expect.any(String), steps: [HTTP_STEP_CONTAINER, DATABASE_STEP_CONTAINER, BROKER_STEP_CONTAINER], exitCode: 1, output: expect.stringMatching(said) }]);
    expect(smoke.status.phase).toBe('Failed');
    expect(smoke.status.initContainerStatuses.find((c: any) => c.name === BROKER_STEP_CONTAINER).state.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  };
  const brokerStep = (objects: KubeObject[]) => objects.find((o) => o.kind === 'Pod' && o.metadata.uid === 'smoke')!['spec'].initContainers.find((c: any) => c.name === BROKER_STEP_CONTAINER);

  it("then, as its container, asks the brokers through the bootstrap Service as the application's Kafka user; a password Strimzi did not give fails the broker step", async () => {
    await brokerFailed(
      (objects) => Object.assign(objectOf(objects, 'Secret', smokeName(app.name)), secret(smokeName(app.name), app.namespace, smokeSecret({ [SMOKE_VARIABLES.brokerPassword]: 'stale' }))),
      /Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512\nsmoke: broker failed$/,
    );
  });

  it("fails the broker step when the listener's network policy does not admit the application's namespace, or no Service port sends to the listener", async () => {
    const unanswered = /^smoke: health, login, declarations passed\nsmoke: database passed\nRequest METADATA failed on brokers \[kafka-cluster-kafka-bootstrap\.kafka\.svc\.cluster\.local:9092 \(id: -1 rack: null isFenced: false\)\]\nsmoke: broker failed$/;
    await brokerFailed((objects) => {
      const listeners = objects.find((o) => o.kind === 'Kafka')!['spec'].kafka.listeners;
      for (const listener of listeners) listener.networkPolicyPeers = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'someone-else' } } }];
    }, unanswered);
    await brokerFailed((objects) => {
      const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === `${BROKER.clusterName}-kafka-bootstrap`)!;
      for (const port of service['spec'].ports) port.targetPort = 9091;
    }, unanswered);
  });

  it('fails the broker step when its container has no emptyDir at /tmp: the root filesystem is read-only', async () => {
    await brokerFailed((objects) => (brokerStep(objects).volumeMounts = []), /\/tmp\/client\.properties: Read-only file system\n(.|\n)*smoke: broker failed$/);
  });

  it('fails at the login when the application does not know the smoke Secret\'s credentials', async () => {
    // The application's pod was provisioned before the smoke Secret changed: its contract server keeps the old login.
    const { smoke } = await play(
      cluster((objects) => {
        const pod = objects.find((o) => o.kind === 'Pod' && o.metadata.uid === 'smoke')!;
        const variable = pod['spec'].initContainers.find((c: any) => c.name === HTTP_STEP_CONTAINER).env.find((e: any) => e.name === SMOKE_VARIABLES.password);
        variable.valueFrom.secretKeyRef.key = SMOKE_VARIABLES.username;
      }, true),
    );
    expect(smoke.runs[0]).toMatchObject({ exitCode: 1, output: 'smoke: login failed or returned no token' });
  });
});
