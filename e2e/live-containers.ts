import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../src/base/project-root';
import { serverPod } from '../src/cluster/database';
import { MIGRATIONS_CONTAINER } from '../src/constructs/schema-migration';
import { DATABASE, VERSION_FILE } from '../src/contract/choices';
import { BROKER, PORTS } from '../src/contract/contract';
import { STRIMZI } from '../src/contract/upstream';
import { databaseMigrationJob, databaseSecret, parseImageReference } from '../src/contract/naming';
import { type ContractServer, type Fault, startContractServer } from './contract-server';
import type { KubeClient, KubeObject } from './kube-client';
import { readState, seedState, updateTo, writeState } from './sql-server-state';

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

/**
 * The file a test writes into a pod's folder to make its container crash-loop: the pod then
 * reports it in CrashLoopBackOff after an OOMKilled run (4 restarts), and its previous run's
 * log (`previous.log`) says why, as a kubelet would show a container over its memory limit.
 */
export const CRASH_FILE = 'crash';

/** A container's log files in its pod's folder (kwok's Logs): the current run's and the previous one's. */
const LOG_FILES = { current: 'container.log', previous: 'previous.log' } as const;

/** Log lines in the CRI format a kubelet keeps and kwok reads (`<RFC 3339 time> stdout F <line>`). */
function criLog(...lines: string[]): string {
  const now = new Date().toISOString();
  return lines.map((line) => `${now} stdout F ${line}\n`).join('');
}

/** The file of the stand-in SQL Server's state in its pod's folder (e2e/sql-server-state.ts). */
export const SQL_SERVER_STATE_FILE = 'sql-server.json';

/** The file a test writes into a pod's folder to break one endpoint of its container (a Fault of e2e/contract-server.ts). */
export const FAULT_FILE = 'fault';

/** An application whose pods get a loopback container: its namespace, its container's name and its database. */
export interface LiveApplication {
  readonly namespace: string;
  readonly container: string;
  /** The application's name (its database rollback Job's is derived from it). */
  readonly name: string;
  readonly database: string;
}

interface LiveContainer {
  readonly uid: string;
  readonly dir: string;
  readonly server: ContractServer;
  /** The crash written into its folder has been reported in the pod's status. */
  crashed: boolean;
}

/**
 * Every running pod of the applications gets what its container would answer, on loopback,
 * so the live operations run for real against it:
 * - `kubectl exec` runs in a folder of its own (kwok's Exec, `local.workDir`), which holds the
 *   version file the image would hold (VERSION_FILE: `version`, the pod's image tag);
 * - `kubectl port-forward` to 8080 reaches a contract server of its own (kwok's PortForward),
 *   which answers /health, /ready, login and /api/status as the application does;
 * - `kubectl logs [--previous]` reads `container.log` and `previous.log` there (kwok's Logs).
 * A test breaks one pod's container by writing into its folder: another `version`, or a
 * fault (`fault`: `health-503`). Folders are `<root>/<namespace>/<pod>`; the path is given to
 * `--exec` commands as E2E_CONTAINERS.
 */
export class LiveContainers {
  private readonly containers = new Map<string, LiveContainer>();

  private readonly ranMigrations = new Set<string>();
  private databaseServer: string | undefined;

  constructor(
    private readonly client: KubeClient,
    /** Where each pod's folder is made. */
    readonly root: string,
    private readonly applications: readonly LiveApplication[],
    /** The database namespace, whose SQL Server pod gets a loopback sqlcmd. */
    private readonly databaseNamespace: string,
    /** The broker namespace, whose broker pods get a loopback kafka-topics.sh. */
    private readonly brokerNamespace: string,
  ) {}

  private readonly brokers = new Set<string>();

  /** One pass: map new running pods, forget deleted ones, apply the faults written since; the database server and the migrations Jobs of the live operations. */
  async reconcile(): Promise<void> {
    await this.mapDatabaseServer();
    await this.runMigrations();
    await this.mapBrokers();
    const live = new Set<string>();
    for (const application of this.applications) {
      for (const pod of await this.client.list('v1', 'Pod', application.namespace)) {
        if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp) continue;
        const id = `${application.namespace}/${pod.metadata.name}`;
        live.add(id);
        const known = this.containers.get(id);
        if (known === undefined || known.uid !== pod.metadata.uid) {
          if (known !== undefined) await known.server.close();
          this.containers.set(id, await this.map(pod, application));
        }
        const container = this.containers.get(id)!;
        const faultFile = path.join(container.dir, FAULT_FILE);
        container.server.fault = fs.existsSync(faultFile) ? (fs.readFileSync(faultFile, 'utf8').trim() as Fault) : 'none';
        if (!container.crashed && fs.existsSync(path.join(container.dir, CRASH_FILE))) {
          await this.crash(pod, application, container.dir);
          container.crashed = true;
        }
      }
    }
    for (const [id, container] of this.containers) {
      if (live.has(id)) continue;
      await container.server.close();
      this.containers.delete(id);
    }
  }

  /** Stop every container's server. */
  async close(): Promise<void> {
    for (const container of this.containers.values()) await container.server.close();
    this.containers.clear();
  }

  private async map(pod: KubeObject, application: LiveApplication): Promise<LiveContainer> {
    const namespace = application.namespace;
    const name = pod.metadata.name;
    const dir = path.join(this.root, namespace, name);
    fs.mkdirSync(dir, { recursive: true });
    const image = (pod.spec?.containers ?? []).find((c: { name: string }) => c.name === application.container)?.image ?? '';
    fs.writeFileSync(path.join(dir, VERSION_FILE.name), `${parseImageReference(image).tag ?? ''}\n`);
    fs.writeFileSync(path.join(dir, LOG_FILES.current), criLog(`listening on :${PORTS.application}`));
    fs.writeFileSync(path.join(dir, LOG_FILES.previous), '');
    const server = await startContractServer();
    const port = Number(new URL(server.baseUrl).port);
    const owner = { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid };
    try {
      await this.expose(namespace, name, owner, application.container, dir, port);
    } catch (error) {
      await server.close();
      throw error;
    }
    return { uid: String(pod.metadata.uid), dir, server, crashed: false };
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
    const dir = path.join(this.root, this.databaseNamespace, name);
    const bin = path.join(this.root, 'bin');
    fs.mkdirSync(dir, { recursive: true });
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'sqlcmd'), `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN_SQLCMD}" "$@"\n`, { mode: 0o755 });
    const state = path.join(dir, SQL_SERVER_STATE_FILE);
    if (!fs.existsSync(state)) writeState(state, seedState(password, this.applications.map((application) => application.database)));
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
                { name: 'SQL_SERVER_STATE', value: state },
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
   * credential, taken from its password Secret when the user is first seen (as the User
   * Operator sets it) and kept after, as Kafka keeps it: a test changes one in the file to
   * play a credential that no longer matches the Secret. Each broker pod's exec runs in its
   * folder, where kafka-topics.sh (first on PATH) is e2e/stand-in-kafka-topics.mjs over that state.
   */
  private async mapBrokers(): Promise<void> {
    const namespace = this.brokerNamespace;
    const dir = path.join(this.root, namespace);
    const stateFile = path.join(dir, KAFKA_STATE_FILE);
    const ready = (object: KubeObject) => (object['status']?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
    const before: KafkaState = fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : { topics: [], users: {} };
    const topics = (await this.client.list('kafka.strimzi.io/v1', 'KafkaTopic', namespace)).filter(ready).map((topic) => String(topic.spec?.topicName ?? topic.metadata.name));
    const users: KafkaState['users'] = {};
    for (const user of (await this.client.list('kafka.strimzi.io/v1', 'KafkaUser', namespace)).filter(ready)) {
      const name = user.metadata.name;
      let password = before.users[name]?.password;
      if (password === undefined) {
        const ref = user.spec?.authentication?.password?.valueFrom?.secretKeyRef;
        const encoded = ref ? (await this.client.get('v1', 'Secret', ref.name, namespace))?.['data']?.[ref.key] : undefined;
        if (typeof encoded !== 'string') continue;
        password = Buffer.from(encoded, 'base64').toString('utf8');
      }
      users[name] = { password, acls: user.spec?.authorization?.acls ?? [] };
    }
    fs.mkdirSync(dir, { recursive: true });
    const state: KafkaState = { topics: topics.sort(), users };
    const text = `${JSON.stringify(state, null, 2)}\n`;
    if (!fs.existsSync(stateFile) || fs.readFileSync(stateFile, 'utf8') !== text) fs.writeFileSync(stateFile, text);
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
   * The migrations image in a pod of the live operations' migrations Jobs (kwok's pod-complete
   * stage leaves these pods running), with the application's connection string: with the
   * arguments `database update <migration>` the database's migrations become the image's up
   * to that one, without arguments every migration of the image is applied (as the Sync hook
   * does), and the pod exits 0; otherwise it exits 1 with the tool's message.
   */
  private async runMigrations(): Promise<void> {
    const state = path.join(this.root, this.databaseNamespace, serverPod().pod, SQL_SERVER_STATE_FILE);
    for (const application of this.applications) {
      const label = databaseMigrationJob(application.name).label;
      for (const pod of await this.client.list('v1', 'Pod', application.namespace)) {
        const uid = String(pod.metadata.uid);
        if (pod.metadata.labels?.['app'] !== label || pod.status?.phase !== 'Running' || this.ranMigrations.has(uid)) continue;
        this.ranMigrations.add(uid);
        const container = (pod.spec?.containers ?? []).find((c: { name: string }) => c.name === MIGRATIONS_CONTAINER);
        const args: string[] = container?.args ?? [];
        const connection = (container?.env ?? []).find((e: { name: string }) => e.name === 'DATABASE_CONNECTION_STRING')?.valueFrom?.secretKeyRef?.name;
        let result: { ok: boolean; message: string };
        if (!fs.existsSync(state)) result = { ok: false, message: 'A network-related error occurred while establishing a connection to SQL Server.' };
        else if (connection !== databaseSecret(application.name)) result = { ok: false, message: `no connection string: DATABASE_CONNECTION_STRING is not read from Secret ${databaseSecret(application.name)}` };
        else if (args.length !== 0 && (args.length !== 3 || args[0] !== 'database' || args[1] !== 'update')) result = { ok: false, message: `unknown command: ${args.join(' ')}` };
        else {
          const server = readState(state);
          result = updateTo(server, application.database, args[2] ?? server.catalog[application.database]?.at(-1)?.id ?? '');
          if (result.ok) writeState(state, server);
        }
        const terminated = { exitCode: result.ok ? 0 : 1, reason: result.ok ? 'Completed' : 'Error', message: result.message, startedAt: new Date().toISOString().slice(0, 19) + 'Z', finishedAt: new Date().toISOString().slice(0, 19) + 'Z' };
        await this.client.mergePatch(
          { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace: application.namespace } },
          {
            status: {
              phase: result.ok ? 'Succeeded' : 'Failed',
              conditions: ['Ready', 'ContainersReady'].map((type) => ({ type, status: 'False', reason: 'PodCompleted', lastTransitionTime: terminated.finishedAt })),
              containerStatuses: [{ name: MIGRATIONS_CONTAINER, image: container?.image ?? '', imageID: '', ready: false, started: false, restartCount: 0, state: { terminated } }],
            },
          },
          'status',
        );
      }
    }
  }

  /** The pod's container reported crash-looping, killed for its memory, with the previous run's log saying so. */
  private async crash(pod: KubeObject, application: LiveApplication, dir: string): Promise<void> {
    const limit = (pod.spec?.containers ?? []).find((c: { name: string }) => c.name === application.container)?.resources?.limits?.memory ?? 'its limit';
    fs.writeFileSync(path.join(dir, LOG_FILES.previous), criLog(`listening on :${PORTS.application}`, 'loading the declarations cache', `fatal: out of memory: the cache needs more than ${limit}`));
    const now = new Date().toISOString().slice(0, 19) + 'Z';
    const image = (pod.spec?.containers ?? []).find((c: { name: string }) => c.name === application.container)?.image ?? '';
    await this.client.mergePatch(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace: application.namespace } },
      {
        status: {
          conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: type === 'Ready' || type === 'ContainersReady' ? 'False' : 'True', lastTransitionTime: now })),
          containerStatuses: [
            {
              name: application.container,
              image,
              imageID: '',
              ready: false,
              started: false,
              restartCount: 4,
              state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off 1m20s restarting failed container=${application.container} pod=${pod.metadata.name}` } },
              lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: now, finishedAt: now } },
            },
          ],
        },
      },
      'status',
    );
  }

  /** kwok's Exec, PortForward and Logs of one pod: its exec in `dir`, its port-forward to `port`, its logs from `dir`. */
  private async expose(namespace: string, name: string, owner: { kind: string; name: string }, container: string, dir: string, port: number): Promise<void> {
    await this.client.apply({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'Exec',
      metadata: { name, namespace, ownerReferences: [owner] },
      spec: { execs: [{ containers: [container], local: { workDir: dir } }] },
    });
    await this.client.apply({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'PortForward',
      metadata: { name, namespace, ownerReferences: [owner] },
      spec: { forwards: [{ ports: [PORTS.application], target: { port, address: '127.0.0.1' } }] },
    });
    await this.client.apply({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'Logs',
      metadata: { name, namespace, ownerReferences: [owner] },
      spec: { logs: [{ containers: [container], logsFile: path.join(dir, LOG_FILES.current), previousLogsFile: path.join(dir, LOG_FILES.previous) }] },
    });
  }
}
