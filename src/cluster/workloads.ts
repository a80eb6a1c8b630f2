import { RefusedError } from '../base/errors';
import { compareText } from '../base/text-order';
import { parseImageReference } from '../contract/naming';
import type { LiveWorkload } from '../environments/strategy-values';
import type { ClusterConnection, LiveObject } from './connection';
import { type WaitResult, waitFor } from './wait';

/** A pod of a workload, as `ops status` shows it. */
export interface PodState {
  readonly name: string;
  readonly phase: string;
  readonly ready: boolean;
  /** Why it is not ready: a container's waiting reason, an unscheduled pod's message; empty when ready. */
  readonly reason: string;
}

/** A strategy's Deployment as it runs. */
export interface WorkloadState extends LiveWorkload {
  readonly namespace: string;
  /** The Deployment exists. */
  readonly exists: boolean;
  /** Pods wanted, updated to the current template, and available. */
  readonly replicas: number;
  readonly updated: number;
  readonly available: number;
  /** The image tag its pod template runs (the first container's). */
  readonly liveTag?: string;
  /** The rollout is complete, as `kubectl rollout status` judges it. */
  readonly rolledOut: boolean;
  /** The rollout's state in words (`2 of 3 updated replicas are available`). */
  readonly rollout: string;
  /** Why the rollout cannot complete by waiting (Progressing=False, ProgressDeadlineExceeded). */
  readonly failed?: string;
  readonly pods: readonly PodState[];
}

/** An object's status condition of one type (a Deployment's `Available`, a Gateway's `Programmed`), if it has one. */
export function condition(object: LiveObject, type: string): { status?: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined {
  return (object['status']?.conditions ?? []).find((c: { type?: string }) => c.type === type);
}

/**
 * Whether a Deployment's rollout is complete, the test `kubectl rollout status` makes
 * (k8s.io/kubectl v0.36.3 pkg/polymorphichelpers/rollout_status.go,
 * DeploymentStatusViewer): the controller saw the latest spec, every replica is updated,
 * no old replica is left, and every updated one is available; a Progressing condition with
 * reason ProgressDeadlineExceeded means it will not complete.
 */
export function rolloutState(deployment: LiveObject): { done: boolean; state: string; failed?: string } {
  const spec = deployment['spec'] ?? {};
  const status = deployment['status'] ?? {};
  const generation = Number(deployment.metadata.generation ?? 0);
  if (Number(status.observedGeneration ?? 0) < generation) return { done: false, state: 'waiting for the controller to see the new spec' };
  const progressing = condition(deployment, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return { done: false, state: 'progress deadline exceeded', failed: `deployment "${deployment.metadata.name}" exceeded its progress deadline: ${progressing.message ?? ''}`.trim() };
  const replicas = Number(spec.replicas ?? 1);
  const updated = Number(status.updatedReplicas ?? 0);
  const current = Number(status.replicas ?? 0);
  const available = Number(status.availableReplicas ?? 0);
  if (updated < replicas) return { done: false, state: `${updated} of ${replicas} new replicas updated` };
  if (current > updated) return { done: false, state: `${current - updated} old replicas pending termination` };
  if (available < updated) return { done: false, state: `${available} of ${updated} updated replicas available` };
  return { done: true, state: `${available}/${replicas} available` };
}

/** A pod's phase, `''` before its first status. */
export function podPhase(pod: LiveObject): string {
  return String(pod['status']?.phase ?? '');
}

/** Whether a pod has ended (Succeeded or Failed): it never runs again, nor counts as not ready. */
export function podEnded(pod: LiveObject): boolean {
  return ['Succeeded', 'Failed'].includes(podPhase(pod));
}

/** Why a pod is not ready, from its conditions and container states; empty when it is. */
export function podState(pod: LiveObject): PodState {
  const status = pod['status'] ?? {};
  const ready = condition(pod, 'Ready')?.status === 'True';
  const reasons: string[] = [];
  if (!ready) {
    const scheduled = condition(pod, 'PodScheduled');
    if (scheduled?.status === 'False') reasons.push(`not scheduled: ${scheduled.message ?? scheduled.reason ?? ''}`.trim());
    for (const container of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]) {
      const waiting = container.state?.waiting;
      const terminated = container.state?.terminated;
      if (waiting) reasons.push(`${container.name} waiting: ${waiting.reason ?? ''}${waiting.message ? ` (${waiting.message})` : ''}`);
      else if (terminated && terminated.exitCode !== 0) reasons.push(`${container.name} terminated: ${terminated.reason ?? `exit ${terminated.exitCode}`}${terminated.message ? ` (${String(terminated.message).trim()})` : ''}`);
      else if (container.ready === false && container.state?.running) reasons.push(`${container.name} running, not ready (readiness probe)`);
    }
    if (reasons.length === 0) reasons.push(`phase ${status.phase ?? 'Unknown'}`);
  }
  return { name: pod.metadata.name, phase: String(status.phase ?? 'Unknown'), ready, reason: reasons.join('; ') };
}

/**
 * Whether an equality selector (a Service's `selector`, a workload's `matchLabels`) selects an
 * object with these labels; an empty selector selects nothing here, as a Service without one
 * sends to no pod by itself.
 */
export function matchesLabels(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>> | undefined): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/** A label selector (`key=value,...`) selecting every one of `labels`. */
export function labelSelector(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

function selectorOf(deployment: LiveObject): string {
  return labelSelector(deployment['spec']?.selector?.matchLabels ?? {});
}

/** Each of the strategy's Deployments in `namespace` with its rollout and pods. */
export async function workloadStates(cluster: ClusterConnection, namespace: string, workloads: readonly LiveWorkload[]): Promise<WorkloadState[]> {
  return Promise.all(
    workloads.map(async (workload): Promise<WorkloadState> => {
      const deployment = await cluster.get('apps/v1', 'Deployment', workload.deployment, namespace);
      if (deployment === undefined) {
        return { ...workload, namespace, exists: false, replicas: 0, updated: 0, available: 0, rolledOut: false, rollout: 'the Deployment does not exist', pods: [] };
      }
      const rollout = rolloutState(deployment);
      const pods = (await cluster.list('v1', 'Pod', namespace, selectorOf(deployment))).filter((pod) => pod.metadata['deletionTimestamp'] === undefined).map(podState);
      const image = deployment['spec']?.template?.spec?.containers?.[0]?.image;
      const liveTag = typeof image === 'string' ? parseImageReference(image).tag : undefined;
      return {
        ...workload,
        namespace,
        exists: true,
        replicas: Number(deployment['spec']?.replicas ?? 1),
        updated: Number(deployment['status']?.updatedReplicas ?? 0),
        available: Number(deployment['status']?.availableReplicas ?? 0),
        ...(liveTag === undefined ? {} : { liveTag }),
        rolledOut: rollout.done,
        rollout: rollout.state,
        ...(rollout.failed === undefined ? {} : { failed: rollout.failed }),
        pods,
      };
    }),
  );
}

/**
 * Wait until every Deployment of the strategy has rolled out (contract 1.3: the rollout
 * timeout), printing progress; when it does not, the reason names the Deployments and
 * why their pods are not ready.
 */
export async function waitForRollout(cluster: ClusterConnection, namespace: string, workloads: readonly LiveWorkload[], timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult> {
  let last: WorkloadState[] = [];
  const result = await waitFor({
    what: `rollout of ${workloads.map((w) => `Deployment ${namespace}/${w.deployment}`).join(', ')}`,
    timeoutSeconds,
    progress,
    check: async () => {
      last = await workloadStates(cluster, namespace, workloads);
      const failed = last.filter((w) => w.failed !== undefined).map((w) => w.failed!);
      return {
        done: last.every((w) => w.rolledOut),
        state: last.map((w) => `${w.deployment} ${w.rollout}`).join('; '),
        ...(failed.length > 0 ? { failed: failed.join('; ') } : {}),
      };
    },
  });
  if (result.ok) return result;
  const pods = last.flatMap((w) => w.pods.filter((p) => !p.ready).map((p) => `Pod ${namespace}/${p.name} ${p.reason}`));
  return { ...result, reason: [result.reason, ...pods].join('; ') };
}

/**
 * A local port forwarded to `port` of the first ready pod (by name) that `labelSelector`
 * selects in `namespace`, for a verb that talks to an in-cluster server (Alertmanager,
 * Flagger's load tester); refused, naming what was looked for, when none is ready.
 */
export async function forwardToReadyPod(
  cluster: ClusterConnection,
  namespace: string,
  labelSelector: string,
  port: number,
  /** What the server is, and what to do when no pod is ready (`: is the monitoring stack running?`). */
  what: { readonly name: string; readonly hint: string },
): Promise<{ readonly url: string; readonly via: string; close(): Promise<void> }> {
  const pod = (await cluster.list('v1', 'Pod', namespace, labelSelector)).map(podState).filter((state) => state.ready).sort((a, b) => compareText(a.name, b.name))[0];
  if (pod === undefined) throw new RefusedError(`no ready ${what.name} pod (${labelSelector}) in namespace ${namespace} on ${cluster.server}${what.hint}`);
  const forward = await cluster.portForward(namespace, pod.name, port, 0);
  return { url: `http://127.0.0.1:${forward.localPort}`, via: `Pod ${namespace}/${pod.name}:${port} (port-forward)`, close: () => forward.close() };
}
