import type { KubeClient, KubeObject } from './kube-client';
import { matchesLabels } from '../src/cluster/workloads';
import { listensOn, serviceHostNames } from './cluster-dns';

// What the harness's loopback containers share (e2e/live-containers.ts, e2e/live-data-services.ts,
// e2e/live-smoke.ts): the applications they serve, the runs they record, the files a test writes
// into a pod's folder, and a pod's status and logs as a kubelet would write them.

/**
 * The file a test writes into a pod's folder to make its container crash-loop: the pod then
 * reports it in CrashLoopBackOff after an OOMKilled run (4 restarts), and its previous run's
 * log (`previous.log`) says why, as a kubelet would show a container over its memory limit.
 */
export const CRASH_FILE = 'crash';

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

/**
 * Where a pod of `fromNamespace` reaches one of `pods` listening on one of `ports` (their
 * container `container`'s): each port of a Service of `services` whose selector selects such
 * a pod and whose target port is that container port (by number or name), with every name the
 * cluster's DNS gives the Service from `fromNamespace`.
 */
export function addressesReaching(services: readonly KubeObject[], pods: readonly KubeObject[], container: string, ports: readonly number[], fromNamespace: string): Array<{ host: string; port: number }> {
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
export function kubeletTime(): string {
  return new Date().toISOString().slice(0, 19) + 'Z';
}

/** A container's entry in a pod's status, as a kubelet writes it, in `state`. */
export function containerStatus(name: string, image: string, state: unknown) {
  return { name, image, imageID: '', ready: false, started: false, restartCount: 0, state };
}

/** A container's state once it ran and exited at `at`, with what it printed last. */
export function exited(exitCode: number, at: string, message?: string) {
  return { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', ...(message ? { message } : {}), startedAt: at, finishedAt: at } };
}

/** A pod's conditions once its containers ended at `at`. */
export function completedPodConditions(at: string) {
  return ['Ready', 'ContainersReady'].map((type) => ({ type, status: 'False', reason: 'PodCompleted', lastTransitionTime: at }));
}

/** A container's log files in its pod's folder (kwok's Logs): the current run's and the previous one's. */
export const LOG_FILES = { current: 'container.log', previous: 'previous.log' } as const;

/** Log lines in the CRI format a kubelet keeps and kwok reads (`<RFC 3339 time> stdout F <line>`). */
export function criLog(...lines: string[]): string {
  const now = new Date().toISOString();
  return lines.map((line) => `${now} stdout F ${line}\n`).join('');
}

/** One key of a Secret, decoded, or undefined when the Secret or the key is missing. */
export async function secretValue(client: KubeClient, namespace: string, name: string, key: string): Promise<string | undefined> {
  const encoded = (await client.get('v1', 'Secret', name, namespace))?.['data']?.[key];
  return typeof encoded === 'string' ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}
