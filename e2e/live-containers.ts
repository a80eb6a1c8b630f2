import * as fs from 'node:fs';
import * as path from 'node:path';
import { VERSION_FILE } from '../src/contract/choices';
import { PORTS } from '../src/contract/contract';
import { parseImageReference, SMOKE_VARIABLES, smokeName } from '../src/contract/naming';
import { type Fault, startContractServer, type ContractServer } from './contract-server';
import type { KubeClient, KubeObject } from './kube-client';
import type { NetworkPolicyJudge } from './network-policy';
import { LiveDataServices } from './live-data-services';
import { SmokeHooks } from './live-smoke';
import { CRASH_FILE, criLog, FAULT_FILE, type LiveApplication, LOG_FILES, type MigrationRun, secretValue, type SmokeRun } from './live-pods';

// The data services (SQL Server, the brokers, the migrations image) are in e2e/live-data-services.ts,
// the smoke hooks' play and its NetworkPolicy judge in e2e/live-smoke.ts, what they share in e2e/live-pods.ts.
export { KAFKA_STATE_FILE, type KafkaState, SQL_SERVER_ENV, SQL_SERVER_STATE_FILE } from './live-data-services';
export { CRASH_FILE, FAULT_FILE, type LiveApplication, type MigrationRun, type SmokeRun } from './live-pods';

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
  private readonly data: LiveDataServices;
  private readonly smokeHooks: SmokeHooks;

  /** Every smoke hook played so far, in the order they ended. */
  get smoke(): readonly SmokeRun[] {
    return this.smokeHooks.runs;
  }

  /** Every run of the migrations image so far, in order. */
  get migrations(): readonly MigrationRun[] {
    return this.data.migrations;
  }

  constructor(
    private readonly client: KubeClient,
    /** Where each pod's folder is made. */
    readonly root: string,
    private readonly applications: readonly LiveApplication[],
    /** The database namespace, whose SQL Server pod gets a loopback sqlcmd. */
    databaseNamespace: string,
    /** The broker namespace, whose broker pods get a loopback kafka-topics.sh. */
    brokerNamespace: string,
    /** Where what a played container did is told (the run's output). */
    log: (line: string) => void = () => undefined,
    /**
     * The judge of the cluster's NetworkPolicies (e2e/network-policy.ts), asked before a smoke
     * hook's step reaches another pod: a connection it denies is played as one that never
     * connects, and the step's output names the policies.
     * @default none: every connection the Services route is played
     */
    policies?: NetworkPolicyJudge,
  ) {
    this.data = new LiveDataServices(client, root, applications, databaseNamespace, brokerNamespace, log);
    this.smokeHooks = new SmokeHooks(client, root, applications, this.data, (id) => this.containers.get(id)?.server.baseUrl, log, policies);
  }

  /** One pass: map new running pods, forget deleted ones, apply the faults written since; the database server and the migrations Jobs of the live operations. */
  async reconcile(): Promise<void> {
    await this.data.reconcile();
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
    await this.smokeHooks.play();
  }

  /** Stop every container's server, once every smoke step being played has ended. */
  async close(): Promise<void> {
    await this.smokeHooks.settle();
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
    const username = await secretValue(this.client, namespace, smokeName(application.name), SMOKE_VARIABLES.username);
    const password = await secretValue(this.client, namespace, smokeName(application.name), SMOKE_VARIABLES.password);
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
