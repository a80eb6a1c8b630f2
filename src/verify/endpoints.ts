import type { ClusterConnection } from '../cluster/connection';
import { workloadStates } from '../cluster/workloads';
import type { LiveWorkload } from '../environments/strategy-values';

/** The label an EndpointSlice carries with its Service's name (Kubernetes' discovery.k8s.io/v1 convention). */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/**
 * The application's Service sends its traffic where its strategy says (1.4; blue-green step
 * 5, "verify the endpoints"): it has ready endpoints, and each is a pod of a workload that
 * serves (the active unit, Flagger's primary, the rolling Deployment), none of another.
 */
export async function checkEndpoints(cluster: ClusterConnection, namespace: string, service: string, workloads: readonly LiveWorkload[]): Promise<string> {
  const slices = await cluster.list('discovery.k8s.io/v1', 'EndpointSlice', namespace, `${SERVICE_NAME_LABEL}=${service}`);
  const ready = slices.flatMap((slice) => (slice['endpoints'] ?? []).filter((e: any) => e.conditions?.ready !== false).map((e: any) => String(e.targetRef?.name ?? e.addresses?.[0] ?? '?')));
  const states = await workloadStates(cluster, namespace, workloads);
  const serving = new Map(states.flatMap((w) => w.pods.map((pod) => [pod.name, w] as const)));
  const problems: string[] = [];
  if (ready.length === 0) problems.push(`Service ${namespace}/${service} has no ready endpoint`);
  for (const pod of ready) {
    const workload = serving.get(pod);
    if (workload === undefined) problems.push(`endpoint ${pod} is not a pod of ${workloads.map((w) => w.deployment).join(' or ')}`);
    else if (!workload.serves) problems.push(`endpoint ${pod} belongs to ${workload.deployment} (${workload.role}), which should not take traffic`);
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  const by = [...new Set(ready.map((pod) => serving.get(pod)!.deployment))].join(', ');
  return `Service ${namespace}/${service}: ${ready.length} ready endpoints, all of ${by}`;
}
