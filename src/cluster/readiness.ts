import { compareText } from '../base/text-order';
import type { ClusterConnection, LiveObject } from './connection';
import { type WaitResult, waitFor } from './wait';
import { condition, podEnded, podState } from './workloads';

/**
 * Wait until every pod of a namespace is ready (pods of Jobs and pods that have ended, an
 * evicted one, left out) and
 * there is at least one, as `kubectl wait pods --all --for=condition=Ready` waits; the
 * reason names the pods that are not, and why.
 */
export async function waitForPodsReady(cluster: ClusterConnection, namespace: string, timeoutSeconds: number, progress: (line: string) => void, labelSelector?: string): Promise<WaitResult> {
  let waiting: string[] = [];
  const result = await waitFor({
    what: `pods of ${namespace}${labelSelector === undefined ? '' : ` (${labelSelector})`} ready`,
    timeoutSeconds,
    progress,
    check: async () => {
      const pods = (await cluster.list('v1', 'Pod', namespace, labelSelector)).filter(
        (pod) =>
          pod.metadata['deletionTimestamp'] === undefined &&
          !podEnded(pod) &&
          !(pod.metadata.ownerReferences ?? []).some((owner) => owner.kind === 'Job'),
      );
      const states = pods.map(podState).sort((a, b) => compareText(a.name, b.name));
      waiting = states.filter((pod) => !pod.ready).map((pod) => `Pod ${namespace}/${pod.name}: ${pod.reason}`);
      return { done: pods.length > 0 && waiting.length === 0, state: pods.length === 0 ? 'no pod yet' : `${pods.length - waiting.length}/${pods.length} ready` };
    },
  });
  return result.ok || waiting.length === 0 ? result : { ...result, reason: [result.reason, ...waiting].join('; ') };
}

/** A custom resource's `Ready` condition, as cert-manager, Strimzi and Flagger report it. */
export function readyCondition(object: LiveObject): { ready: boolean; detail: string } {
  const ready = condition(object, 'Ready');
  if (ready === undefined) return { ready: false, detail: 'no Ready condition yet' };
  return { ready: ready.status === 'True', detail: `Ready=${ready.status}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}` };
}

/** Wait until one custom resource is Ready (`kubectl wait --for=condition=Ready`). */
export async function waitForReady(cluster: ClusterConnection, apiVersion: string, kind: string, name: string, namespace: string | undefined, timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult> {
  return waitFor({
    what: `${kind} ${namespace === undefined ? '' : `${namespace}/`}${name} Ready`,
    timeoutSeconds,
    progress,
    check: async () => {
      const object = await cluster.get(apiVersion, kind, name, namespace);
      if (object === undefined) return { done: false, state: 'does not exist yet' };
      const { ready, detail } = readyCondition(object);
      return { done: ready, state: detail };
    },
  });
}
