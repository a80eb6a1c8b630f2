import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../src/base/project-root';
import { serverPod } from '../src/cluster/database';
import { matchesLabels } from '../src/cluster/workloads';
import { MIGRATIONS_CONTAINER } from '../src/constructs/schema-migration';
import { DATABASE } from '../src/contract/choices';
import { BROKER, PORTS } from '../src/contract/contract';
import { databaseMigrationJob, migrationsName } from '../src/contract/naming';
import { STRIMZI } from '../src/contract/upstream';
import { DATABASE_SETUP_NAME } from '../src/constructs/database-setup';
import type { KubeClient, KubeObject } from './kube-client';
import { readState, seedState, updateTo, writeState } from './sql-server-state';
import { listensOn, serviceOfHost } from './cluster-dns';
import { networkError, parseConnectionString, setupLogins } from './stand-in-migrations';
import { addressesReaching, completedPodConditions, containerStatus, exited, kubeletTime, type LiveApplication, type MigrationRun, secretValue } from './live-pods';

/** The stand-in of sqlcmd inside the SQL Server container. */
const STAND_IN_SQLCMD = path.join(projectRoot(), 'e2e', 'stand-in-sqlcmd.mjs');

/** The stand-in of Kafka's kafka-topics.sh inside a broker's container. */
const STAND_IN_KAFKA_TOPICS = path.join(projectRoot(), 'e2e', 'stand-in-kafka-topics.mjs');

/**
 * The file of the stand-in Kafka cluster's state in the broker namespace's folder: its topics,
 * and each user's SCRAM-SHA-512 credential and ACLs (e2e/stand-in-kafka-topics.mjs reads it).
 */
export const KAFKA_STATE_FILE = 'kafka.json';

/** What the stand-in Kafka cluster holds: the topics, each user's credential and ACLs (as its KafkaUser names them). */
export interface KafkaState {
  readonly topics: readonly string[];
  readonly users: Record<string, { password: string; acls: readonly unknown[] }>;
}

/** The file of the stand-in SQL Server's state in its pod's folder (e2e/sql-server-state.ts). */
export const SQL_SERVER_STATE_FILE = 'sql-server.json';

/**
 * The variables the stand-in sqlcmd (e2e/stand-in-sqlcmd.mjs) reads: the server's state file,
 * and for a client outside the server's pod the network file (the addresses that reach the
 * server from the client's namespace, and the logins with their passwords and databases).
 */
export const SQL_SERVER_ENV = { state: 'SQL_SERVER_STATE', network: 'SQL_SERVER_NETWORK' } as const;

/**
 * The data services of the e2e cluster as the applications' hooks meet them, on loopback: SQL
 * Server's sqlcmd and state, the brokers' kafka-topics.sh and the Kafka cluster's state, and the
 * migrations image of the applications' migrations Jobs (LiveContainers runs a pass of each).
 */
export class LiveDataServices {
  private readonly ranMigrations = new Set<string>();
  private readonly migrationRuns: MigrationRun[] = [];
  private databaseServer: string | undefined;
  private readonly brokers = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    /** Where each pod's folder is made. */
    private readonly root: string,
    private readonly applications: readonly LiveApplication[],
    /** The database namespace, whose SQL Server pod gets a loopback sqlcmd. */
    private readonly databaseNamespace: string,
    /** The broker namespace, whose broker pods get a loopback kafka-topics.sh. */
    readonly brokerNamespace: string,
    /** Where what a played container did is told (the run's output). */
    private readonly log: (line: string) => void,
  ) {}

  /** Every run of the migrations image so far, in order. */
  get migrations(): readonly MigrationRun[] {
    return [...this.migrationRuns];
  }

  /** The stand-in SQL Server's state file, kept in its pod's folder across pod restarts. */
  get sqlServerState(): string {
    return path.join(this.root, this.databaseNamespace, serverPod().pod, SQL_SERVER_STATE_FILE);
  }

  /** The stand-in Kafka cluster's state file, in the broker namespace's folder. */
  get kafkaState(): string {
    return path.join(this.root, this.brokerNamespace, KAFKA_STATE_FILE);
  }

  /** Where the stand-in sqlcmd is put, first on the PATH of SQL Server's exec. */
  get sqlcmdBin(): string {
    return path.join(this.root, 'bin');
  }

  /** One pass: the database server, the migrations Jobs' pods, then the brokers and the Kafka cluster's state. */
  async reconcile(): Promise<void> {
    await this.mapDatabaseServer();
    await this.runMigrations();
    await this.mapBrokers();
  }

  /**
   * SQL Server's pod: its exec runs in its folder, where sqlcmd (on PATH, with the
   * container's MSSQL_SA_PASSWORD) is e2e/stand-in-sqlcmd.mjs over the server's state
   * (`sql-server.json`, seeded once, kept across pod restarts like the data volume).
   */
  private async mapDatabaseServer(): Promise<void> {
    const { pod: name, container } = serverPod();
    const pod = await this.client.get('v1', 'Pod', name, this.databaseNamespace);
    if (pod === undefined || pod.status?.phase !== 'Running' || pod.metadata.uid === this.databaseServer) return;
    const secret = await this.client.get('v1', 'Secret', DATABASE.adminSecret.name, this.databaseNamespace);
    const encoded = secret?.['data']?.[DATABASE.adminSecret.key];
    if (typeof encoded !== 'string') return;
    const password = Buffer.from(encoded, 'base64').toString('utf8');
    const dir = path.dirname(this.sqlServerState);
    const bin = this.sqlcmdBin;
    fs.mkdirSync(dir, { recursive: true });
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'sqlcmd'), `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN_SQLCMD}" "$@"\n`, { mode: 0o755 });
    const state = this.sqlServerState;
    // Each database as the setup hook leaves it: the applications' Sync hooks migrate them.
    if (!fs.existsSync(state)) writeState(state, seedState(password, this.applications.map((application) => application.database), Date.now(), false));
    const owner = { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid };
    await this.client.apply({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'Exec',
      metadata: { name, namespace: this.databaseNamespace, ownerReferences: [owner] },
      spec: {
        execs: [
          {
            containers: [container],
            local: {
              workDir: dir,
              envs: [
                { name: 'PATH', value: `${bin}${path.delimiter}${process.env['PATH'] ?? ''}` },
                { name: 'MSSQL_SA_PASSWORD', value: password },
                { name: SQL_SERVER_ENV.state, value: state },
              ],
            },
          },
        ],
      },
    });
    this.databaseServer = String(pod.metadata.uid);
  }

  /**
   * The Kafka cluster as its brokers hold it (kafka.json in the broker namespace's folder): the
   * topics of the Ready KafkaTopics, and for each Ready KafkaUser its ACLs and its SCRAM
   * credential, taken from the user's Secret (the User Operator's, named as the user) when the
   * user is first seen, as the User Operator sets it in Kafka, and kept for the run (the User
   * Operator would set it again at its next reconciliation, every 2 minutes by default): a test
   * changes one in the file to play a credential changed in Kafka behind the operator's back.
   * The file is replaced whole (written beside, then renamed), so a step reading it never sees
   * half of it. Each broker pod's exec runs in its
   * folder, where kafka-topics.sh (first on PATH) is e2e/stand-in-kafka-topics.mjs over that state.
   */
  private async mapBrokers(): Promise<void> {
    const namespace = this.brokerNamespace;
    const dir = path.join(this.root, namespace);
    const stateFile = this.kafkaState;
    const ready = (object: KubeObject) => (object['status']?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
    const before: KafkaState = fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : { topics: [], users: {} };
    const topics = (await this.client.list('kafka.strimzi.io/v1', 'KafkaTopic', namespace)).filter(ready).map((topic) => String(topic.spec?.topicName ?? topic.metadata.name));
    const users: KafkaState['users'] = {};
    for (const user of (await this.client.list('kafka.strimzi.io/v1', 'KafkaUser', namespace)).filter(ready)) {
      const name = user.metadata.name;
      // The credential the User Operator set in Kafka: the password of the user's Secret (KafkaUserModel.java).
      const password = before.users[name]?.password ?? (await secretValue(this.client, namespace, name, 'password'));
      if (password === undefined) continue;
      users[name] = { password, acls: user.spec?.authorization?.acls ?? [] };
    }
    fs.mkdirSync(dir, { recursive: true });
    const state: KafkaState = { topics: topics.sort(), users };
    const text = `${JSON.stringify(state, null, 2)}\n`;
    if (!fs.existsSync(stateFile) || fs.readFileSync(stateFile, 'utf8') !== text) {
      fs.writeFileSync(`${stateFile}.next`, text);
      fs.renameSync(`${stateFile}.next`, stateFile);
    }
    const bin = path.join(this.root, 'bin-kafka');
    for (const pod of await this.client.list('v1', 'Pod', namespace)) {
      const uid = String(pod.metadata.uid);
      const labels = pod.metadata.labels ?? {};
      if (labels[STRIMZI.clusterLabel] !== BROKER.clusterName || labels[STRIMZI.brokerPods.brokerRoleLabel] !== 'true') continue;
      if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp || this.brokers.has(uid)) continue;
      const podDir = path.join(dir, pod.metadata.name);
      fs.mkdirSync(podDir, { recursive: true });
      fs.mkdirSync(bin, { recursive: true });
      fs.writeFileSync(path.join(bin, 'kafka-topics.sh'), `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN_KAFKA_TOPICS}" "$@"\n`, { mode: 0o755 });
      const owner = { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid };
      await this.client.apply({
        apiVersion: 'kwok.x-k8s.io/v1alpha1',
        kind: 'Exec',
        metadata: { name: pod.metadata.name, namespace, ownerReferences: [owner] },
        spec: {
          execs: [
            {
              containers: [STRIMZI.brokerPods.container],
              local: {
                workDir: podDir,
                envs: [
                  { name: 'PATH', value: `${bin}${path.delimiter}${process.env['PATH'] ?? ''}` },
                  { name: 'KAFKA_STATE', value: stateFile },
                ],
              },
            },
          ],
        },
      });
      this.brokers.add(uid);
    }
  }

  /**
   * The migrations image in a pod of the application's migrations Jobs: the Sync hook's
   * (`<app>-migrations`) and the live operations' (`<app>-db-migrate`); kwok's pod-complete
   * stage leaves these pods running. As the image does, it reads DATABASE_CONNECTION_STRING
   * from the Secret its pod names and logs in with it (`login`); then with the arguments
   * `database update <migration>` the database's migrations become the image's up to that
   * one, and without arguments every migration of the image is applied (the Sync hook), and
   * the pod exits 0; otherwise it exits 1 with the message the client or the tool prints.
   */
  private async runMigrations(): Promise<void> {
    const state = this.sqlServerState;
    for (const application of this.applications) {
      const labels: readonly string[] = [migrationsName(application.name), databaseMigrationJob(application.name).label];
      for (const pod of await this.client.list('v1', 'Pod', application.namespace)) {
        const uid = String(pod.metadata.uid);
        if (!labels.includes(pod.metadata.labels?.['app'] ?? '') || pod.status?.phase !== 'Running' || this.ranMigrations.has(uid)) continue;
        this.ranMigrations.add(uid);
        const container = (pod.spec?.containers ?? []).find((c: { name: string }) => c.name === MIGRATIONS_CONTAINER);
        const args: string[] = container?.args ?? [];
        let result: { ok: boolean; message: string };
        const login = await this.login(application.namespace, container, state);
        if (!login.ok) result = login;
        else if (args.length !== 0 && (args.length !== 3 || args[0] !== 'database' || args[1] !== 'update')) result = { ok: false, message: `unknown command: ${args.join(' ')}` };
        else {
          const server = readState(state);
          result = updateTo(server, login.database, args[2] ?? server.catalog[login.database]?.at(-1)?.id ?? '');
          if (result.ok) writeState(state, server);
        }
        this.migrationRuns.push({ pod: `${application.namespace}/${pod.metadata.name}`, job: pod.metadata.labels?.['job-name'] ?? '', exitCode: result.ok ? 0 : 1, message: result.message });
        this.log(`${application.namespace}/${pod.metadata.name}: the migrations image ${result.ok ? 'exited 0' : 'failed'}: ${result.message}`);
        const at = kubeletTime();
        await this.client.mergePatch(
          { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace: application.namespace } },
          {
            status: {
              phase: result.ok ? 'Succeeded' : 'Failed',
              conditions: completedPodConditions(at),
              containerStatuses: [containerStatus(MIGRATIONS_CONTAINER, container?.image ?? '', exited(result.ok ? 0 : 1, at, result.message))],
            },
          },
          'status',
        );
      }
    }
  }

  /**
   * What the migrations image's SQL client does with its DATABASE_CONNECTION_STRING (the
   * value of the Secret key its container names): reach the server at the host and port it
   * names, a Service of the cluster whose port sends to SQL Server's pod on 1433, then log in
   * as a login the setup hook created, with the password that hook gave it (its Secret's value
   * now), into that login's database (e2e/stand-in-migrations.ts).
   */
  private async login(namespace: string, container: any, state: string): Promise<{ ok: true; database: string } | { ok: false; message: string }> {
    const ref = (container?.env ?? []).find((e: { name: string }) => e.name === 'DATABASE_CONNECTION_STRING')?.valueFrom?.secretKeyRef;
    if (!ref?.name || !ref?.key) return { ok: false, message: 'no connection string: DATABASE_CONNECTION_STRING is not read from a Secret' };
    const text = await secretValue(this.client, namespace, ref.name, ref.key);
    if (text === undefined) return { ok: false, message: `no connection string: Secret ${namespace}/${ref.name} has no key ${ref.key}` };
    const parsed = parseConnectionString(text);
    if (!parsed.ok) return parsed;
    const connection = parsed.connection;
    const target = serviceOfHost(connection.host, namespace);
    if (target === undefined) return { ok: false, message: networkError(connection, `${connection.host} is no Service of the cluster`) };
    const service = await this.client.get('v1', 'Service', target.name, target.namespace);
    if (service === undefined) return { ok: false, message: networkError(connection, `Service ${target.namespace}/${target.name} does not exist`) };
    const port = (service.spec?.ports ?? []).find((p: { port: number }) => p.port === connection.port);
    if (port === undefined) return { ok: false, message: networkError(connection, `Service ${target.namespace}/${target.name} has no port ${connection.port}`) };
    const server = target.namespace === this.databaseNamespace ? await this.client.get('v1', 'Pod', serverPod().pod, this.databaseNamespace) : undefined;
    const selector: Record<string, string> = service.spec?.selector ?? {};
    const selected = server !== undefined && matchesLabels(selector, server.metadata.labels);
    if (!selected || server?.status?.phase !== 'Running' || !fs.existsSync(state)) return { ok: false, message: networkError(connection, `Service ${target.namespace}/${target.name} sends to no running SQL Server pod`) };
    const serverPorts = (server.spec?.containers ?? []).find((c: { name: string }) => c.name === serverPod().container)?.ports ?? [];
    const targetPort = port.targetPort ?? port.port;
    if (!listensOn(serverPorts.filter((p: { containerPort: number }) => p.containerPort === PORTS.database), targetPort)) return { ok: false, message: networkError(connection, `Service ${target.namespace}/${target.name} port ${connection.port} sends to ${targetPort}, where SQL Server does not listen`) };
    const login = (await this.serverLogins())[connection.user];
    if (login === undefined || login.password !== connection.password) return { ok: false, message: `Login failed for user '${connection.user}'.` };
    if (!(connection.database in readState(state).databases)) return { ok: false, message: `Cannot open database "${connection.database}" requested by the login. The login failed.` };
    if (connection.database !== login.database) return { ok: false, message: `The server principal "${connection.user}" is not able to access the database "${connection.database}" under the current security context.` };
    return { ok: true, database: connection.database };
  }

  /**
   * The logins SQL Server has, as the database chart's setup hook creates them, each with the
   * password that hook gives it (its Secret's value now) and its database.
   */
  async serverLogins(): Promise<Record<string, { password: string; database: string }>> {
    const setup = await this.client.get('batch/v1', 'Job', DATABASE_SETUP_NAME, this.databaseNamespace);
    const logins: Record<string, { password: string; database: string }> = {};
    for (const login of setup === undefined ? [] : setupLogins(setup)) {
      const password = await secretValue(this.client, this.databaseNamespace, login.password.name, login.password.key);
      if (password !== undefined) logins[login.login] = { password, database: login.database };
    }
    return logins;
  }

  /**
   * The addresses (`host,port`; `host` alone for 1433) that reach SQL Server from a pod of
   * `namespace`: every name the cluster's DNS gives a Service of the database namespace that
   * selects the running SQL Server pod, with each of its ports that sends to SQL Server's.
   */
  async serverAddresses(namespace: string, admits?: (server: KubeObject) => Promise<boolean>): Promise<string[]> {
    const server = await this.client.get('v1', 'Pod', serverPod().pod, this.databaseNamespace);
    if (server?.status?.phase !== 'Running' || !fs.existsSync(this.sqlServerState)) return [];
    if (admits !== undefined && !(await admits(server))) return [];
    const services = await this.client.list('v1', 'Service', this.databaseNamespace);
    return addressesReaching(services, [server], serverPod().container, [PORTS.database], namespace)
      .flatMap(({ host, port }) => [`${host},${port}`, ...(port === PORTS.database ? [host] : [])])
      .sort();
  }
}
