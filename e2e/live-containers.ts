import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../src/base/project-root';
import { serverPod } from '../src/cluster/database';
import { matchesLabels } from '../src/cluster/workloads';
import { MIGRATIONS_CONTAINER } from '../src/constructs/schema-migration';
import { DATABASE, VERSION_FILE } from '../src/contract/choices';
import { BROKER, PORTS, SMOKE } from '../src/contract/contract';
import { databaseMigrationJob, migrationsName, parseImageReference, SMOKE_VARIABLES, smokeName } from '../src/contract/naming';
import { BASE_URL_VARIABLE, BROKER_STEP_CONTAINER, DATABASE_STEP_CONTAINER, HTTP_STEP_CONTAINER } from '../src/constructs/smoke-hook';
import { STRIMZI } from '../src/contract/upstream';
import { DATABASE_SETUP_NAME } from '../src/constructs/database-setup';
import { closedPort, type ContractServer, type Fault, startContractServer } from './contract-server';
import type { KubeClient, KubeObject } from './kube-client';
import { readState, seedState, updateTo, writeState } from './sql-server-state';
import { listensOn, serviceHostNames, serviceOfHost } from './cluster-dns';
import { networkError, parseConnectionString, setupLogins } from './stand-in-migrations';
import { type ContainerPlay, type ContainerSpec, containerPlay, runContainer, type VolumeSource } from './sidecar';
import { type KafkaListener, listenerAdmits } from './stand-in-strimzi';
import { denial, type NetworkPolicyJudge, podConnection } from './network-policy';

/** The stand-in of sqlcmd inside the SQL Server container. */
const STAND_IN_SQLCMD = path.join(projectRoot(), 'e2e', 'stand-in-sqlcmd.mjs');

/**
 * Where the stand-ins a played container's image runs are put in its filesystem (node, the
 * stand-in's program and its state), apart from the image's own folders.
 */
const STAND_IN_IMAGE_FOLDER = '/opt/e2e-stand-in';

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

/**
 * Where a pod of `fromNamespace` reaches one of `pods` listening on one of `ports` (their
 * container `container`'s): each port of a Service of `services` whose selector selects such
 * a pod and whose target port is that container port (by number or name), with every name the
 * cluster's DNS gives the Service from `fromNamespace`.
 */
function addressesReaching(services: readonly KubeObject[], pods: readonly KubeObject[], container: string, ports: readonly number[], fromNamespace: string): Array<{ host: string; port: number }> {
  const listening = (pod: KubeObject) => ((pod.spec?.containers ?? []).find((c: { name: string }) => c.name === container)?.ports ?? []).filter((p: { containerPort: number }) => ports.includes(p.containerPort));
  const addresses: Array<{ host: string; port: number }> = [];
  for (const service of services) {
    const selected = pods.filter((pod) => matchesLabels(service.spec?.selector ?? {}, pod.metadata.labels));
    for (const port of service.spec?.ports ?? []) {
      if (!selected.some((pod) => listensOn(listening(pod), port.targetPort ?? port.port))) continue;
      for (const host of serviceHostNames(service.metadata.name, String(service.metadata.namespace), fromNamespace)) addresses.push({ host, port: port.port });
    }
  }
  return addresses;
}

/** A time as a kubelet writes it in a pod's status (whole seconds, UTC). */
function kubeletTime(): string {
  return new Date().toISOString().slice(0, 19) + 'Z';
}

/** A container's entry in a pod's status, as a kubelet writes it, in `state`. */
function containerStatus(name: string, image: string, state: unknown) {
  return { name, image, imageID: '', ready: false, started: false, restartCount: 0, state };
}

/** A container's state once it ran and exited at `at`, with what it printed last. */
function exited(exitCode: number, at: string, message?: string) {
  return { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', ...(message ? { message } : {}), startedAt: at, finishedAt: at } };
}

/** A pod's conditions once its containers ended at `at`. */
function completedPodConditions(at: string) {
  return ['Ready', 'ContainersReady'].map((type) => ({ type, status: 'False', reason: 'PodCompleted', lastTransitionTime: at }));
}

/** A container's log files in its pod's folder (kwok's Logs): the current run's and the previous one's. */
const LOG_FILES = { current: 'container.log', previous: 'previous.log' } as const;

/** Log lines in the CRI format a kubelet keeps and kwok reads (`<RFC 3339 time> stdout F <line>`). */
function criLog(...lines: string[]): string {
  const now = new Date().toISOString();
  return lines.map((line) => `${now} stdout F ${line}\n`).join('');
}

/** The file of the stand-in SQL Server's state in its pod's folder (e2e/sql-server-state.ts). */
export const SQL_SERVER_STATE_FILE = 'sql-server.json';

/**
 * The variables the stand-in sqlcmd (e2e/stand-in-sqlcmd.mjs) reads: the server's state file,
 * and for a client outside the server's pod the network file (the addresses that reach the
 * server from the client's namespace, and the logins with their passwords and databases).
 */
export const SQL_SERVER_ENV = { state: 'SQL_SERVER_STATE', network: 'SQL_SERVER_NETWORK' } as const;

/** The file a test writes into a pod's folder to break one endpoint of its container (a Fault of e2e/contract-server.ts). */
export const FAULT_FILE = 'fault';

/** One run of the migrations image the harness played: its pod, its Job, how it exited and what it printed. */
export interface MigrationRun {
  readonly pod: string;
  readonly job: string;
  readonly exitCode: number;
  readonly message: string;
}

/** One smoke hook the harness played (its HTTP, database and broker steps, in order): its pod, the address the HTTP step was given and where that reached, how the steps exited and what they printed. */
export interface SmokeRun {
  readonly pod: string;
  readonly baseUrl: string;
  /** The application pod the address reached through its Service, or why none. */
  readonly reached: string;
  /** The steps played, in order, up to the first that failed: `http`, `database`, then `broker`. */
  readonly steps: readonly string[];
  /** The first failing step's exit code, or 0. */
  readonly exitCode: number;
  /** What the steps printed, one after the other. */
  readonly output: string;
}

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
  private readonly migrationRuns: MigrationRun[] = [];

  private readonly playedSmoke = new Set<string>();
  private readonly smokePlays = new Set<Promise<void>>();
  private readonly smokeRuns: SmokeRun[] = [];

  /** Every smoke hook played so far, in the order they ended. */
  get smoke(): readonly SmokeRun[] {
    return [...this.smokeRuns];
  }

  /** Every run of the migrations image so far, in order. */
  get migrations(): readonly MigrationRun[] {
    return [...this.migrationRuns];
  }
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
    /** Where what a played container did is told (the run's output). */
    private readonly log: (line: string) => void = () => undefined,
    /**
     * The judge of the cluster's NetworkPolicies (e2e/network-policy.ts), asked before a smoke
     * hook's step reaches another pod: a connection it denies is played as one that never
     * connects, and the step's output names the policies.
     * @default none: every connection the Services route is played
     */
    private readonly policies?: NetworkPolicyJudge,
  ) {}

  /** Each smoke pod's connections the policies denied (by its uid), told in its steps' output. */
  private readonly denials = new Map<string, string[]>();

  /** Whether the policies allow `from` to reach `port` of `to`; a denial is kept for `from`'s smoke run. */
  private async allowed(from: KubeObject, to: KubeObject, port: number, what: string): Promise<boolean> {
    if (this.policies === undefined) return true;
    const [verdict] = await this.policies.judge([podConnection(from, to, port)]);
    const denied = denial(verdict!, `${what} (${from.metadata.namespace}/${from.metadata.name} to ${to.metadata.namespace}/${to.metadata.name}:${port})`);
    if (denied === undefined) return true;
    const uid = String(from.metadata.uid);
    this.denials.set(uid, [...(this.denials.get(uid) ?? []), denied]);
    return false;
  }

  private readonly brokers = new Set<string>();

  /** The stand-in SQL Server's state file, kept in its pod's folder across pod restarts. */
  private get sqlServerState(): string {
    return path.join(this.root, this.databaseNamespace, serverPod().pod, SQL_SERVER_STATE_FILE);
  }

  /** The stand-in Kafka cluster's state file, in the broker namespace's folder. */
  private get kafkaState(): string {
    return path.join(this.root, this.brokerNamespace, KAFKA_STATE_FILE);
  }

  /** Where the stand-in sqlcmd is put, first on the PATH of SQL Server's exec. */
  private get sqlcmdBin(): string {
    return path.join(this.root, 'bin');
  }

  /** One pass: map new running pods, forget deleted ones, apply the faults written since; the database server and the migrations Jobs of the live operations. */
  async reconcile(): Promise<void> {
    await this.mapDatabaseServer();
    await this.runMigrations();
    await this.mapBrokers();
    const live = new Set<string>();
    for (const application of this.applications) {
      for (const pod of await this.client.list('v1', 'Pod', application.namespace)) {
        // The application's own pods (its container among theirs), not its hooks' or Jobs'.
        if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp || !(pod.spec?.containers ?? []).some((c: { name: string }) => c.name === application.container)) continue;
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
    await this.playSmokeHooks();
  }

  /** Stop every container's server, once every smoke step being played has ended. */
  async close(): Promise<void> {
    await Promise.all(this.smokePlays);
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
    // The application's smoke login, which the application provisions from the same values as its smoke Secret.
    const username = await this.secretValue(namespace, smokeName(application.name), SMOKE_VARIABLES.username);
    const password = await this.secretValue(namespace, smokeName(application.name), SMOKE_VARIABLES.password);
    const server = await startContractServer(username !== undefined && password !== undefined ? { username, password } : undefined);
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
      const password = before.users[name]?.password ?? (await this.secretValue(namespace, name, 'password'));
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
    const text = await this.secretValue(namespace, ref.name, ref.key);
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

  /** One key of a Secret, decoded, or undefined when the Secret or the key is missing. */
  private async secretValue(namespace: string, name: string, key: string): Promise<string | undefined> {
    const encoded = (await this.client.get('v1', 'Secret', name, namespace))?.['data']?.[key];
    return typeof encoded === 'string' ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
  }

  /**
   * The steps of each smoke hook pod (`<app>-smoke`; kwok's pod-complete stage leaves these
   * pods running), once per pod, in order until one fails: the HTTP step's script, as
   * rendered, run by this machine's `sh` and `wget` with its container's environment (each
   * secretKeyRef read from its Secret), its base address sent where the cluster would send it
   * (`serviceTarget`); the database step's the same way, with the stand-in sqlcmd; the broker
   * step as its container (`playBrokerStep`). The pod then ends as the steps did: Succeeded
   * (the last line as kwok reports it), or Failed with the failing step's exit code and output.
   */
  private async playSmokeHooks(): Promise<void> {
    for (const application of this.applications) {
      for (const pod of await this.client.list('v1', 'Pod', application.namespace)) {
        const uid = String(pod.metadata.uid);
        if (pod.metadata.labels?.['app'] !== smokeName(application.name) || pod.status?.phase !== 'Running' || this.playedSmoke.has(uid)) continue;
        this.playedSmoke.add(uid);
        const play = this.playSmokeStep(pod).catch((error: Error) => this.log(`${application.namespace}/${pod.metadata.name}: the smoke hook could not be played: ${error.message}`));
        this.smokePlays.add(play);
        void play.finally(() => this.smokePlays.delete(play));
      }
    }
  }

  private async playSmokeStep(pod: KubeObject): Promise<void> {
    const namespace = String(pod.metadata.namespace);
    const id = `${namespace}/${pod.metadata.name}`;
    const initContainers: Array<{ name: string; image: string; command?: string[]; args?: string[]; env?: any[] }> = pod.spec?.initContainers ?? [];
    const environment = async (step: { env?: any[] } | undefined) => {
      const env: Record<string, string> = {};
      for (const variable of step?.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        const value = ref ? await this.secretValue(namespace, ref.name, ref.key) : variable.value;
        if (value !== undefined) env[variable.name] = value;
      }
      return env;
    };
    const run = (step: { name: string; command?: string[]; args?: string[] } | undefined, env: Record<string, string>, rewrite: (text: string) => string = (text) => text) =>
      new Promise<{ exitCode: number; output: string }>((resolve) => {
        const command = [...(step?.command ?? []), ...(step?.args ?? [])].map(rewrite);
        if (command.length === 0) return resolve({ exitCode: 1, output: `no ${step?.name ?? 'such'} step in the pod` });
        execFile(command[0]!, command.slice(1), { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: Object.values(SMOKE.stepTimeoutMs).reduce((sum, ms) => sum + ms, 0), encoding: 'utf8' }, (error, stdout, stderr) =>
          resolve({ exitCode: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}`.trim() }),
        );
      });

    // 4.1 steps 1-3: the HTTP step, its base address sent where the cluster would send it.
    const http = initContainers.find((c) => c.name === HTTP_STEP_CONTAINER);
    const httpEnv = await environment(http);
    const baseUrl = httpEnv[BASE_URL_VARIABLE] ?? '';
    const target = await this.serviceTarget(baseUrl, namespace, pod);
    const results = new Map<string, { exitCode: number; output: string }>();
    results.set(HTTP_STEP_CONTAINER, await run(http, { ...httpEnv, [BASE_URL_VARIABLE]: target.url }));
    // 4.1 step 4: the database step, the image's sqlcmd being the stand-in's, which knows the
    // addresses that reach SQL Server from this namespace and the logins the setup hook made.
    if (results.get(HTTP_STEP_CONTAINER)!.exitCode === 0) {
      const database = initContainers.find((c) => c.name === DATABASE_STEP_CONTAINER);
      const network = path.join(this.root, `sql-network-${pod.metadata.uid}.json`);
      fs.writeFileSync(network, `${JSON.stringify({ addresses: await this.serverAddresses(namespace, pod), logins: await this.serverLogins() }, null, 2)}\n`);
      const sqlcmd = path.join(this.sqlcmdBin, 'sqlcmd');
      results.set(DATABASE_STEP_CONTAINER, await run(database, { ...(await environment(database)), [SQL_SERVER_ENV.state]: this.sqlServerState, [SQL_SERVER_ENV.network]: network }, (text) => text.replaceAll(DATABASE.sqlcmd, sqlcmd)));
    }
    // 4.1 step 5: the broker step, played as its container (e2e/sidecar.ts), the image's tool
    // being the stand-in's, which knows the addresses that reach a broker from this namespace
    // and the users the cluster holds.
    if (results.get(DATABASE_STEP_CONTAINER)?.exitCode === 0) {
      const broker = initContainers.find((c) => c.name === BROKER_STEP_CONTAINER);
      results.set(BROKER_STEP_CONTAINER, broker === undefined ? { exitCode: 1, output: 'no broker step in the pod' } : await this.playBrokerStep(pod, broker, await environment(broker)));
    }
    const played = [...results.keys()];
    const failed = [...results.entries()].find(([, result]) => result.exitCode !== 0);
    // The connections the policies denied, named in the failing step's output (the pod itself
    // would only have seen them time out).
    const denied = this.denials.get(String(pod.metadata.uid)) ?? [];
    if (failed !== undefined && denied.length > 0) failed[1] = { ...failed[1], output: [failed[1].output, ...denied].filter(Boolean).join('\n') };
    if (failed !== undefined) results.set(failed[0], failed[1]);
    const ok = failed === undefined;
    const output = [...results.values()].map((result) => result.output).join('\n');
    this.smokeRuns.push({ pod: id, baseUrl, reached: target.reached, steps: played, exitCode: failed?.[1].exitCode ?? 0, output });
    this.log(`${id}: the smoke hook's ${played.join(', ')} step${played.length > 1 ? 's' : ''} (${baseUrl}: ${target.reached}) ${ok ? 'passed' : `failed at ${failed[0]} (exit ${failed[1].exitCode})`}: ${output.replaceAll('\n', ' | ')}`);
    const now = kubeletTime();
    // Init containers run in order: those before the failing one completed, those after it never started.
    const failedAt = failed === undefined ? initContainers.length : initContainers.findIndex((c) => c.name === failed[0]);
    await this.client.mergePatch(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace } },
      {
        status: {
          phase: ok ? 'Succeeded' : 'Failed',
          conditions: completedPodConditions(now),
          initContainerStatuses: initContainers.map((c, index) => {
            const result = results.get(c.name);
            if (index < failedAt) return containerStatus(c.name, c.image, exited(0, now, result?.output.slice(-1024)));
            if (index === failedAt) return containerStatus(c.name, c.image, exited(result?.exitCode ?? 1, now, result?.output.slice(-1024)));
            return containerStatus(c.name, c.image, { waiting: { reason: 'PodInitializing' } });
          }),
          containerStatuses: (pod.spec?.containers ?? []).map((c: { name: string; image: string }) => containerStatus(c.name, c.image, ok ? exited(0, now) : { waiting: { reason: 'PodInitializing' } })),
        },
      },
      'status',
    );
  }

  /**
   * The smoke hook's broker step of `pod`, run as its container would run (containerPlay: its
   * user, read-only root, its emptyDir at /tmp, only its environment with each Secret key
   * read), the image's kafka-broker-api-versions.sh being the stand-in's
   * (e2e/stand-in-kafka-broker-api-versions.mjs) over the cluster's users (kafka.json) and
   * what the pod's namespace reaches (`brokerNetwork`), both in the stand-in's own folder of
   * the image with node.
   */
  private async playBrokerStep(pod: KubeObject, container: ContainerSpec, env: Record<string, string>): Promise<{ exitCode: number; output: string }> {
    const dir = path.join(this.root, 'smoke', String(pod.metadata.uid));
    fs.mkdirSync(dir, { recursive: true });
    const network = path.join(dir, 'kafka-network.json');
    fs.writeFileSync(network, `${JSON.stringify(await this.brokerNetwork(pod), null, 2)}\n`);
    const tool = path.join(dir, 'kafka-broker-api-versions.sh');
    fs.writeFileSync(tool, `#!/bin/sh\nexec ${STAND_IN_IMAGE_FOLDER}/node ${STAND_IN_IMAGE_FOLDER}/stand-in-kafka-broker-api-versions.mjs "$@"\n`, { mode: 0o755 });
    const imageFiles = new Map([
      [STRIMZI.brokerPods.apiVersionsTool, tool],
      [`${STAND_IN_IMAGE_FOLDER}/node`, process.execPath],
      ...['stand-in-kafka-broker-api-versions.mjs', 'stand-in-kafka-client.mjs'].map((file): [string, string] => [`${STAND_IN_IMAGE_FOLDER}/${file}`, path.join(projectRoot(), 'e2e', file)]),
      [`${STAND_IN_IMAGE_FOLDER}/${KAFKA_STATE_FILE}`, this.kafkaState],
      [`${STAND_IN_IMAGE_FOLDER}/kafka-network.json`, network],
    ]);
    const variables = [
      ...Object.entries(env).map(([name, value]) => ({ name, value })),
      { name: 'KAFKA_STATE', value: `${STAND_IN_IMAGE_FOLDER}/${KAFKA_STATE_FILE}` },
      { name: 'KAFKA_NETWORK', value: `${STAND_IN_IMAGE_FOLDER}/kafka-network.json` },
    ];
    const volumes = new Map<string, VolumeSource>();
    for (const volume of pod.spec?.volumes ?? []) if (volume.emptyDir !== undefined) volumes.set(volume.name, { kind: 'emptyDir' });
    let play: ContainerPlay;
    try {
      if (!fs.existsSync(this.kafkaState)) throw new Error('the Kafka cluster holds no state yet');
      play = containerPlay({ ...container, env: variables }, volumes, imageFiles, (folder) => fs.existsSync(folder));
    } catch (error) {
      return { exitCode: 1, output: `the broker step could not be played: ${(error as Error).message}` };
    }
    return runContainer(play, SMOKE.stepTimeoutMs.broker);
  }

  /**
   * What a pod reaches of the Kafka cluster, as the stand-in kafka-broker-api-versions.sh reads
   * it: the host names the cluster's DNS resolves for it (every Service's); the `host:port`
   * addresses that reach a listener speaking SASL_PLAINTEXT with SCRAM-SHA-512 (a Service of the
   * broker namespace whose port sends to that listener's port on a running broker pod, the
   * listener's rule of Strimzi's NetworkPolicy admitting the pod: listenerAdmits); and the
   * brokers the metadata names, as Strimzi advertises them.
   */
  private async brokerNetwork(pod: KubeObject): Promise<{ resolvable: string[]; listeners: string[]; brokers: Array<{ id: number; host: string; port: number }> }> {
    const from = String(pod.metadata.namespace);
    const namespace = await this.client.get('v1', 'Namespace', from);
    const kafka = await this.client.get('kafka.strimzi.io/v1', 'Kafka', BROKER.clusterName, this.brokerNamespace);
    const listeners: KafkaListener[] = (kafka?.spec?.kafka?.listeners ?? []).filter(
      (listener: KafkaListener) => !listener.tls && listener.authentication?.type === 'scram-sha-512' && listenerAdmits(listener, this.brokerNamespace, { name: from, labels: namespace?.metadata.labels ?? {} }, pod.metadata.labels ?? {}),
    );
    const brokers = (await this.client.list('v1', 'Pod', this.brokerNamespace)).filter(
      (broker) => broker.metadata.labels?.[STRIMZI.clusterLabel] === BROKER.clusterName && broker.metadata.labels?.[STRIMZI.brokerPods.brokerRoleLabel] === 'true' && broker.status?.phase === 'Running' && !broker.metadata.deletionTimestamp,
    );
    const services = await this.client.list('v1', 'Service');
    const resolvable = services.flatMap((service) => serviceHostNames(service.metadata.name, String(service.metadata.namespace), from));
    const brokerServices = services.filter((service) => service.metadata.namespace === this.brokerNamespace);
    const addresses: Array<{ host: string; port: number }> = [];
    for (const { port } of listeners) {
      const admitted: KubeObject[] = [];
      for (const broker of brokers) if (await this.allowed(pod, broker, port, "the broker step's connection to a broker")) admitted.push(broker);
      addresses.push(...addressesReaching(brokerServices, admitted, STRIMZI.brokerPods.container, [port], from));
    }
    const plain = STRIMZI.listeners.plain.port;
    return {
      resolvable: [...new Set(resolvable)].sort(),
      listeners: addresses.map(({ host, port }) => `${host}:${port}`).sort(),
      brokers: brokers
        .map((broker) => ({ id: Number(/-(\d+)$/.exec(String(broker.metadata.name))?.[1] ?? -1), host: `${broker.metadata.name}.${BROKER.clusterName}-kafka-brokers.${this.brokerNamespace}.svc`, port: plain }))
        .sort((a, b) => a.id - b.id),
    };
  }

  /**
   * The logins SQL Server has, as the database chart's setup hook creates them, each with the
   * password that hook gives it (its Secret's value now) and its database.
   */
  private async serverLogins(): Promise<Record<string, { password: string; database: string }>> {
    const setup = await this.client.get('batch/v1', 'Job', DATABASE_SETUP_NAME, this.databaseNamespace);
    const logins: Record<string, { password: string; database: string }> = {};
    for (const login of setup === undefined ? [] : setupLogins(setup)) {
      const password = await this.secretValue(this.databaseNamespace, login.password.name, login.password.key);
      if (password !== undefined) logins[login.login] = { password, database: login.database };
    }
    return logins;
  }

  /**
   * The addresses (`host,port`; `host` alone for 1433) that reach SQL Server from a pod of
   * `namespace`: every name the cluster's DNS gives a Service of the database namespace that
   * selects the running SQL Server pod, with each of its ports that sends to SQL Server's.
   */
  private async serverAddresses(namespace: string, from?: KubeObject): Promise<string[]> {
    const server = await this.client.get('v1', 'Pod', serverPod().pod, this.databaseNamespace);
    if (server?.status?.phase !== 'Running' || !fs.existsSync(this.sqlServerState)) return [];
    if (from !== undefined && !(await this.allowed(from, server, PORTS.database, 'the database step\'s connection to SQL Server'))) return [];
    const services = await this.client.list('v1', 'Service', this.databaseNamespace);
    return addressesReaching(services, [server], serverPod().container, [PORTS.database], namespace)
      .flatMap(({ host, port }) => [`${host},${port}`, ...(port === PORTS.database ? [host] : [])])
      .sort();
  }

  /**
   * Where a pod's request to `base` goes, as the cluster would send it: a host that is a
   * Service, to the port that Service's port sends to on one of its ready pods (by name), here
   * that pod's loopback container. Anything else, to a closed port, so the step fails at
   * once as it would in the pod: a host that is no Service (there its name does not resolve), a
   * Service without that port, or without a ready pod listening there (the connection is
   * refused).
   */
  private async serviceTarget(base: string, namespace: string, from?: KubeObject): Promise<{ url: string; reached: string }> {
    let url: URL;
    try {
      url = new URL(base);
    } catch {
      return { url: base, reached: 'not an address' };
    }
    const refused = async (why: string) => ({ url: `http://127.0.0.1:${await closedPort()}`, reached: why });
    const service = serviceOfHost(url.hostname, namespace);
    if (service === undefined) return refused(`${url.hostname} is no Service of the cluster`);
    const object = await this.client.get('v1', 'Service', service.name, service.namespace);
    if (object === undefined) return refused(`Service ${service.namespace}/${service.name} does not exist`);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const servicePort = (object.spec?.ports ?? []).find((p: { port: number }) => p.port === port);
    if (servicePort === undefined) return refused(`Service ${service.namespace}/${service.name} has no port ${port}`);
    const targetPort = servicePort.targetPort ?? port;
    const selector: Record<string, string> = object.spec?.selector ?? {};
    const ready = (pod: KubeObject) => (pod.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
    const listening = (await this.client.list('v1', 'Pod', service.namespace))
      .filter((pod) => matchesLabels(selector, pod.metadata.labels))
      .filter((pod) => pod.status?.phase === 'Running' && !pod.metadata.deletionTimestamp && ready(pod))
      .filter((pod) => (pod.spec?.containers ?? []).some((c: { ports?: Array<{ name?: string; containerPort: number }> }) => listensOn(c.ports, targetPort)))
      .sort((a, b) => (String(a.metadata.name) < String(b.metadata.name) ? -1 : String(a.metadata.name) > String(b.metadata.name) ? 1 : 0));
    const pods = listening.map((pod) => String(pod.metadata.name));
    const reached = pods.map((pod) => ({ pod, container: this.containers.get(`${service.namespace}/${pod}`) })).find((candidate) => candidate.container !== undefined);
    if (reached === undefined) return refused(`Service ${service.namespace}/${service.name} port ${port} has no ready pod listening on ${targetPort}`);
    if (from !== undefined) {
      const pod = listening.find((candidate) => candidate.metadata.name === reached.pod)!;
      const containerPort =
        typeof targetPort === 'number'
          ? targetPort
          : (pod.spec?.containers ?? []).flatMap((c: { ports?: Array<{ name?: string; containerPort: number }> }) => c.ports ?? []).find((p: { name?: string }) => p.name === targetPort)?.containerPort;
      if (containerPort !== undefined && !(await this.allowed(from, pod, containerPort, "the HTTP step's connection to the application"))) {
        return refused(this.denials.get(String(from.metadata.uid))!.at(-1)!);
      }
    }
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    return { url: `${reached.container!.server.baseUrl}${path}`, reached: `pod ${service.namespace}/${reached.pod}` };
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
