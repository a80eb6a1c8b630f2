import { EXAMPLE_FIX } from '../contract/contract';
import { parseCpu, parseMemory } from '../environments/quantity';
import type { LiveObject } from './connection';
import { matchesLabels } from './workloads';

/** A container that keeps crashing: where, how often, and how its last run ended. */
export interface CrashingContainer {
  readonly pod: string;
  readonly container: string;
  readonly restarts: number;
  /** Why it is not running now (`CrashLoopBackOff`), or `''`. */
  readonly waiting: string;
  /** Its last run's end: `OOMKilled (exit 137) at <time>`, or `''` before it ended once. */
  readonly lastExit: string;
}

interface ContainerStatus {
  readonly name: string;
  readonly ready?: boolean;
  readonly restartCount?: number;
  readonly state?: { readonly waiting?: { readonly reason?: string } };
  readonly lastState?: { readonly terminated?: { readonly exitCode?: number; readonly reason?: string; readonly finishedAt?: string } };
}

/**
 * The containers of `pods` that crash-loop, as `kubectl get pods` shows them: waiting in
 * CrashLoopBackOff, or restarted and not ready since (contract 7, "pod in CrashLoopBackOff").
 */
export function crashingContainers(pods: readonly LiveObject[]): CrashingContainer[] {
  return pods.flatMap((pod) =>
    ((pod['status']?.containerStatuses ?? []) as ContainerStatus[])
      .filter((status) => status.state?.waiting?.reason === 'CrashLoopBackOff' || ((status.restartCount ?? 0) > 0 && status.ready === false))
      .map((status) => {
        const ended = status.lastState?.terminated;
        return {
          pod: pod.metadata.name,
          container: status.name,
          restarts: status.restartCount ?? 0,
          waiting: status.state?.waiting?.reason ?? '',
          lastExit: ended === undefined ? '' : `${ended.reason ?? 'exited'} (exit ${ended.exitCode ?? '?'})${ended.finishedAt ? ` at ${ended.finishedAt}` : ''}`,
        };
      }),
  );
}

/** A container's memory and CPU limits and its liveness probe's initial delay, as the pod template has them. */
export function limitsOf(deployment: LiveObject, container: string): { memory?: string; cpu?: string; livenessInitialDelaySeconds?: number } {
  const spec = ((deployment['spec']?.template?.spec?.containers ?? []) as { name: string; resources?: { limits?: Record<string, string> }; livenessProbe?: { initialDelaySeconds?: number } }[]).find((c) => c.name === container);
  return {
    ...(spec?.resources?.limits?.['memory'] === undefined ? {} : { memory: spec.resources.limits['memory'] }),
    ...(spec?.resources?.limits?.['cpu'] === undefined ? {} : { cpu: spec.resources.limits['cpu'] }),
    ...(spec?.livenessProbe?.initialDelaySeconds === undefined ? {} : { livenessInitialDelaySeconds: spec.livenessProbe.initialDelaySeconds }),
  };
}

/**
 * The contract's example fix of a crash loop (8: memory 1Gi, CPU 500m, liveness initial delay
 * 60 s) as a JSON patch of a Deployment's container: its limits raised to the example's, and
 * its liveness probe's initial delay where it has one; what is already higher, and a limit
 * that is not set (no limit), stay (no operation when all do). Refused
 * when the container is not in the pod template.
 */
export function exampleFixPatch(deployment: LiveObject, container: string): { op: string; path: string; value?: unknown }[] {
  const containers = (deployment['spec']?.template?.spec?.containers ?? []) as { name: string; resources?: { limits?: unknown }; livenessProbe?: unknown }[];
  const index = containers.findIndex((c) => c.name === container);
  if (index < 0) throw new Error(`Deployment ${deployment.metadata.name} has no container ${container}`);
  const at = `/spec/template/spec/containers/${index}`;
  const found = containers[index]!;
  const now = limitsOf(deployment, container);
  // Raised, never lowered: a limit or delay already above the example stays.
  // No limit is no limit: left as it is.
  const raise = {
    memory: now.memory !== undefined && (parseMemory(now.memory) ?? 0) < parseMemory(EXAMPLE_FIX.memoryLimit)!,
    cpu: now.cpu !== undefined && (parseCpu(now.cpu) ?? 0) < parseCpu(EXAMPLE_FIX.cpuLimit)!,
    delay: found.livenessProbe !== undefined && (now.livenessInitialDelaySeconds ?? 0) < EXAMPLE_FIX.livenessInitialDelaySeconds,
  };
  if (!raise.memory && !raise.cpu && !raise.delay) return [];
  return [
    ...(raise.memory ? [{ op: 'add', path: `${at}/resources/limits/memory`, value: EXAMPLE_FIX.memoryLimit }] : []),
    ...(raise.cpu ? [{ op: 'add', path: `${at}/resources/limits/cpu`, value: EXAMPLE_FIX.cpuLimit }] : []),
    ...(raise.delay ? [{ op: 'add', path: `${at}/livenessProbe/initialDelaySeconds`, value: EXAMPLE_FIX.livenessInitialDelaySeconds }] : []),
  ];
}

/** Whether a Deployment's selector (matchLabels) selects a pod. */
export function selects(deployment: LiveObject, pod: LiveObject): boolean {
  return matchesLabels(deployment['spec']?.selector?.matchLabels ?? {}, pod.metadata.labels);
}
