import { RefusedError } from '../../base/errors';
import { crashingContainers, exampleFixPatch, limitsOf, selects } from '../../cluster/crash-loops';
import type { LiveObject } from '../../cluster/connection';
import { labelSelector, waitForRollout } from '../../cluster/workloads';
import { EXAMPLE_FIX } from '../../contract/contract';
import { applicationValuesPath } from '../../environments/values-file';
import type { Application } from '../../environments';
import { liveWorkloadsOf } from '../../environments/strategy-registry';
import { pauseInScope } from './pause';
import type { OpsTarget } from './target';

/** How many lines of a crashed run's log are shown. */
const LOG_LINES = 20;

/** What `emergency crashloop` was asked. */
export interface CrashLoopRequest {
  /** Apply the contract's example fix to the Deployments whose pods crash (sync paused first). */
  readonly fix: boolean;
  readonly by: string;
  readonly reason: string;
  readonly timeoutSeconds: number;
}

/** A Deployment's limits as one line: `memory 512Mi, cpu 250m, liveness initial delay 30 s`. */
function limitsLine(deployment: LiveObject, container: string): string {
  const limits = limitsOf(deployment, container);
  return `memory ${limits.memory ?? 'no limit'}, cpu ${limits.cpu ?? 'no limit'}, liveness initial delay ${limits.livenessInitialDelaySeconds === undefined ? 'none' : `${limits.livenessInitialDelaySeconds} s`}`;
}

/**
 * Contract 7, "pod in CrashLoopBackOff": the application's containers that crash-loop, each
 * with its restarts, how its last run ended and the end of that run's log (`kubectl logs
 * --previous`), and the limits and liveness delay of its Deployments. With `fix`: automated sync
 * paused (root and application), the container of the Deployments whose pods crash (a new
 * blue-green unit or canary as well as the one that serves) raised to the contract's
 * example (8: memory 1Gi, CPU 500m, liveness initial delay 60 s), the rollout awaited, and
 * the change to make permanent in git named. Exit 0 when nothing crash-loops (after the fix).
 */
export async function crashLoop(target: OpsTarget, application: Application, request: CrashLoopRequest): Promise<number> {
  const { cluster, say } = target;
  const namespace = application.namespace;
  const workloads = liveWorkloadsOf(application);
  const deployments = new Map<string, LiveObject>();
  for (const workload of workloads) {
    const deployment = await cluster.get('apps/v1', 'Deployment', workload.deployment, namespace);
    if (deployment !== undefined) deployments.set(workload.deployment, deployment);
  }
  const podsOf = async () => {
    const pods: LiveObject[] = [];
    for (const deployment of deployments.values()) pods.push(...(await cluster.list('v1', 'Pod', namespace, labelSelector(deployment['spec']?.selector?.matchLabels ?? {}))));
    return pods.filter((pod) => pod.metadata.deletionTimestamp === undefined);
  };

  say(`1. the containers of ${application.name} that crash-loop`);
  const pods = await podsOf();
  const crashing = crashingContainers(pods);
  if (crashing.length === 0) say('none: every container of the application runs');
  for (const container of crashing) {
    say(`Pod ${namespace}/${container.pod}, container ${container.container}: restarted ${container.restarts} times${container.waiting ? `, ${container.waiting}` : ''}; last run ended ${container.lastExit || 'not yet'}`);
    try {
      const log = (await cluster.logs(namespace, container.pod, container.container, { previous: true, tailLines: LOG_LINES })).trimEnd();
      say(log === '' ? '  (its last run logged nothing)' : `  its last run's log (last ${LOG_LINES} lines):\n${log.replace(/^/gm, '  | ')}`);
    } catch (error) {
      say(`  its last run's log: ${(error as Error).message}`);
    }
  }
  say('2. limits and probes');
  for (const [name, deployment] of deployments) say(`Deployment ${namespace}/${name}: ${limitsLine(deployment, application.name)}`);

  const example = `memory ${EXAMPLE_FIX.memoryLimit}, CPU ${EXAMPLE_FIX.cpuLimit}, liveness initial delay ${EXAMPLE_FIX.livenessInitialDelaySeconds} s`;
  if (!request.fix) {
    if (crashing.length > 0) say(`to raise the limits and the liveness delay to the contract's example (${example}) while you find the cause: the same command with --fix`);
    target.result({ environment: target.environment.name, application: application.name, crashing });
    return crashing.length === 0 ? 0 : 1;
  }

  if (crashing.length === 0) {
    say('nothing to fix: no container crash-loops');
    target.result({ environment: target.environment.name, application: application.name, crashing, fixed: false });
    return 0;
  }
  // The Deployments whose pods crash (a new blue-green unit or canary, not always the one that serves).
  const crashingPods = new Set(crashing.map((container) => container.pod));
  const owners = workloads.filter((workload) => {
    const deployment = deployments.get(workload.deployment);
    return deployment !== undefined && pods.some((pod) => crashingPods.has(pod.metadata.name) && selects(deployment, pod));
  });
  if (owners.length === 0) throw new RefusedError(`no Deployment of ${application.name} in ${namespace} selects the crashing pods`);
  say(`3. the example fix (${example}) on ${owners.map((workload) => workload.deployment).join(', ')}, automated sync paused first`);
  for (const { application: paused, result } of await pauseInScope(target, false, request.by, `emergency crashloop: ${request.reason}`, request.timeoutSeconds)) say(`Application ${paused}: ${result}`);
  for (const workload of owners) {
    const patch = exampleFixPatch(deployments.get(workload.deployment)!, application.name);
    if (patch.length === 0) {
      say(`Deployment ${namespace}/${workload.deployment}: already at or above the example`);
      continue;
    }
    const patched = await cluster.jsonPatch('apps/v1', 'Deployment', workload.deployment, namespace, patch);
    say(`Deployment ${namespace}/${workload.deployment}: now ${limitsLine(patched, application.name)}`);
  }
  const rollout = await waitForRollout(cluster, namespace, owners, request.timeoutSeconds, say);
  const still = rollout.ok ? crashingContainers(await podsOf()) : crashing;
  const file = applicationValuesPath(target.environment.name, application.name);
  say(`automated sync stays paused; make it permanent: resources.limits in ${file} (and the liveness delay in the application's workload construct if it stays), npm run synth, review, merge, then npm run ops -- resume --env ${target.environment.name} --app ${application.name}`);
  const ok = rollout.ok && still.length === 0;
  say(ok ? `ops emergency crashloop: fixed: every container runs (a crash can come later: run this again after ${EXAMPLE_FIX.livenessInitialDelaySeconds} s and more)` : `ops emergency crashloop: FAILED: ${rollout.ok ? `${still.length} containers still crash-loop` : rollout.reason}`);
  target.result({ environment: target.environment.name, application: application.name, crashing, fixed: ok, still });
  return ok ? 0 : 1;
}
