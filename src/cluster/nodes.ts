import { compareText } from '../base/text-order';
import { type ClusterConnection, ClusterRefusal, type LiveObject } from './connection';
import { type WaitResult, waitFor } from './wait';
import { podEnded, podPhase } from './workloads';

/** Seconds between two tries of an eviction a PodDisruptionBudget refused, as `kubectl drain` waits. */
const EVICTION_RETRY_SECONDS = 5;

/** A node's health as `kubectl get nodes` shows it, with the pressure conditions that are on. */
export interface NodeState {
  readonly name: string;
  readonly ready: boolean;
  /** Cordoned: no new pod is scheduled on it. */
  readonly unschedulable: boolean;
  /** What is wrong: not Ready (with its message), a pressure condition that is True. */
  readonly problems: readonly string[];
}

const PRESSURES = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'] as const;

export function nodeState(node: LiveObject): NodeState {
  const conditions = ((node.status as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions ?? []);
  const ready = conditions.find((c) => c.type === 'Ready');
  const problems = [
    ...(ready?.status === 'True' ? [] : [`not Ready${ready?.message ? `: ${ready.message}` : ''}`]),
    ...conditions.filter((c) => (PRESSURES as readonly string[]).includes(c.type) && c.status === 'True').map((c) => c.type),
  ];
  return { name: node.metadata.name, ready: ready?.status === 'True', unschedulable: (node.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true, problems };
}

/** Every node's state, by name. */
export async function nodeStates(cluster: ClusterConnection): Promise<NodeState[]> {
  return (await cluster.list('v1', 'Node')).map(nodeState).sort((a, b) => compareText(a.name, b.name));
}

/** `namespace/name` of a pod. */
function podId(pod: LiveObject): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/** `namespace/name phase (node)` of a pod. */
function podLine(pod: LiveObject): string {
  const node = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  return `${podId(pod)} ${podPhase(pod) || 'Unknown'}${node ? ` on ${node}` : ' (not scheduled)'}`;
}

/** Whether a pod ran to its end for a Job: it is not meant to run on (a failed try the Job retried included). */
function jobPodEnded(pod: LiveObject): boolean {
  return podEnded(pod) && (pod.metadata.ownerReferences ?? []).some((owner) => owner.kind === 'Job');
}

/** The pods of the cluster that are not running (7.2: "non-running pods"), a Job's ended pods and a pod being deleted left out. */
export async function podsNotRunning(cluster: ClusterConnection): Promise<string[]> {
  const pods = await cluster.list('v1', 'Pod');
  return pods
    .filter((pod) => !['Running', 'Succeeded'].includes(podPhase(pod)) && !jobPodEnded(pod) && pod.metadata.deletionTimestamp === undefined)
    .map(podLine)
    .sort(compareText);
}

/** Cordon (true) or uncordon (false) a node, as `kubectl cordon` and `uncordon`. */
export async function setSchedulable(cluster: ClusterConnection, node: string, schedulable: boolean): Promise<void> {
  await cluster.mergePatch('v1', 'Node', node, undefined, { spec: { unschedulable: schedulable ? null : true } });
}

/** Whether a pod is one drain leaves alone: a DaemonSet's (it would come back at once) or a mirror pod (the kubelet's). */
function leftByDrain(pod: LiveObject): string | undefined {
  if ((pod.metadata.ownerReferences ?? []).some((owner) => owner.kind === 'DaemonSet' && owner.controller === true)) return 'a DaemonSet pod';
  if (pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return 'a mirror pod';
  return undefined;
}

/** The pods a drain of `node` evicts, and the ones it cannot (no controller would recreate them). */
export async function drainPlan(cluster: ClusterConnection, node: string): Promise<{ evict: LiveObject[]; unmanaged: string[]; left: string[] }> {
  const pods = (await cluster.list('v1', 'Pod', undefined, undefined, `spec.nodeName=${node}`)).sort((a, b) => compareText(podLine(a), podLine(b)));
  const evict: LiveObject[] = [];
  const unmanaged: string[] = [];
  const left: string[] = [];
  for (const pod of pods) {
    const why = leftByDrain(pod);
    if (why !== undefined) left.push(`${podId(pod)} (${why})`);
    // A pod that ended is not lost with the node (kubectl drain deletes it too).
    else if (!podEnded(pod) && !(pod.metadata.ownerReferences ?? []).some((owner) => owner.controller === true)) unmanaged.push(podId(pod));
    else evict.push(pod);
  }
  return { evict, unmanaged, left };
}

/**
 * Evict each pod (a refusal by a PodDisruptionBudget is tried again every 5 s, as `kubectl
 * drain` does), then wait until every one is gone, within `timeoutSeconds` in all.
 * Its emptyDir data goes with it (7.2: "deleting empty-dir data").
 */
export async function evictAll(cluster: ClusterConnection, pods: readonly LiveObject[], timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult> {
  const pending = new Map(pods.map((pod) => [podId(pod), pod]));
  const evicted = new Set<string>();
  return waitFor({
    what: `eviction of ${pods.length} pods`,
    timeoutSeconds,
    intervalSeconds: EVICTION_RETRY_SECONDS,
    progress,
    check: async () => {
      const refused: string[] = [];
      for (const [id, pod] of pending) {
        if (evicted.has(id)) continue;
        try {
          await cluster.evict(pod.metadata.namespace!, pod.metadata.name);
          evicted.add(id);
        } catch (error) {
          if (!(error instanceof ClusterRefusal) || error.status !== 429) throw error;
          refused.push(`${id} (its PodDisruptionBudget allows no disruption now)`);
        }
      }
      const remaining: string[] = [];
      for (const [id, pod] of pending) {
        const live = await cluster.get('v1', 'Pod', pod.metadata.name, pod.metadata.namespace);
        if (live === undefined || live.metadata.uid !== pod.metadata.uid) pending.delete(id);
        else remaining.push(id);
      }
      const state = remaining.length === 0 ? 'every pod evicted and gone' : `${pods.length - remaining.length}/${pods.length} gone${refused.length > 0 ? `; refused: ${refused.join(', ')}` : ''}`;
      return { done: remaining.length === 0, state };
    },
  });
}

/** Wait until no pod of the cluster is left not running (7.2 maintenance: "verify that all pods are running"). */
export async function waitForAllPodsRunning(cluster: ClusterConnection, timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult & { notRunning: string[] }> {
  let notRunning: string[] = [];
  const result = await waitFor({
    what: 'every pod running',
    timeoutSeconds,
    progress,
    check: async () => {
      notRunning = await podsNotRunning(cluster);
      return { done: notRunning.length === 0, state: notRunning.length === 0 ? 'every pod running' : `${notRunning.length} not running: ${notRunning.slice(0, 5).join(', ')}${notRunning.length > 5 ? ', ...' : ''}` };
    },
  });
  return { ...result, notRunning };
}
