import { RefusedError, UsageError } from '../../base/errors';
import { drainPlan, evictAll, nodeStates, podsNotRunning, setSchedulable, waitForAllPodsRunning } from '../../cluster/nodes';
import { waitForPodsReady } from '../../cluster/readiness';
import { waitForRollout } from '../../cluster/workloads';
import { INFRASTRUCTURE_NAMESPACES } from '../../contract/choices';
import { EMERGENCY_REPLICAS, EXAMPLE_FIX, WAITS_SECONDS } from '../../contract/contract';
import { liveWorkloadsOf } from '../../strategies/values-registry';
import { type CommandDefinition, seconds } from '../../tooling/cli';
import { checkGateway } from '../../verify/gateway';
import { crashLoop } from './emergency-crashloop';
import { restoreApplication } from './emergency-restore';
import { pauseInScope } from './pause';
import { type OpsTarget, TARGET_OPTIONS, TARGET_USAGE, actor, opsTarget } from './target';

const ACTIONS = ['outage', 'restore', 'crashloop', 'drain', 'uncordon'] as const;

/** How many of the cluster's non-running pods a report lists by name. */
const LISTED_PODS = 20;

const USAGE = `usage: npm run ops -- emergency outage --env <environment> --reason <text> [--app <application>] [options]
       npm run ops -- emergency restore --env <environment> --app <application> --reason <text> [--backup <file>] [options]
       npm run ops -- emergency crashloop --env <environment> --app <application> [--fix --reason <text>] [options]
       npm run ops -- emergency drain <node> --env <environment> [options]
       npm run ops -- emergency uncordon <node> --env <environment> [options]

The emergency procedures of 7.2 on the live cluster:
  outage    the nodes' health and the pods that are not running; then, with automated sync
            paused (root and application, who and why recorded), each serving Deployment of
            the application scaled to ${EMERGENCY_REPLICAS.outageScaleTarget} replicas (the contract's example) and its rollout
            awaited; then the ingress controller: Envoy Gateway's pods ready and the
            application's Gateway and routes accepted. Sync stays paused. When it is over:
            where sync is automated, \`npm run ops -- resume\` lets self-heal put git's replicas
            back; where it is not (production), \`npm run ops -- sync\` does; a canary's
            primary (Flagger's, not in git) keeps them until Flagger's next promotion, or
            \`--replicas <n>\` sets them again
  restore   data recovery: the application's own backups listed (newest first; never another
            database's) and the backup jobs' last runs; the chosen backup (newest, or
            --backup) verified readable, refused while a backup runs; then automated sync
            paused (root and application); every Deployment of its strategy scaled to 0 and
            its pods gone; the database restored with replacement; the migrations image run
            to bring it to the running version; the serving Deployments scaled to ${EMERGENCY_REPLICAS.afterRestore} (the
            contract's), the others as they were, the rollout awaited; automated sync resumed
            on the Applications it paused. A failure stops there, named, with sync left paused
  crashloop the application's containers in CrashLoopBackOff (or restarted and not ready):
            restarts, how the last run ended, the end of its log (kubectl logs --previous),
            and its Deployments' limits and liveness delay; exit 1 while one crash-loops.
            --fix (with --reason): automated sync paused, the container of the Deployments
            whose pods crash raised to the contract's example (memory ${EXAMPLE_FIX.memoryLimit}, CPU ${EXAMPLE_FIX.cpuLimit}, liveness initial
            delay ${EXAMPLE_FIX.livenessInitialDelaySeconds} s; never lowered), the rollout awaited; sync stays paused
            until the fix is in git
  drain     cordons the node, then evicts its pods through the Eviction API (PodDisruption-
            Budgets respected, a refusal tried again every 5 s), DaemonSet pods left alone,
            emptyDir data deleted with its pod; refused before anything is done when a pod
            has no controller to recreate it
  uncordon  lets the node take pods again, then waits until every pod of the cluster runs
${TARGET_USAGE}
  --reason <text>        outage, restore, crashloop --fix: why, recorded with the pause (required)
  --by <name>            outage, restore, crashloop --fix: who (default: $USER)
  --fix                  crashloop: apply the example fix
  --backup <file>        restore: the backup file (path or name) instead of the newest
  --replicas <n>         outage: the replicas to scale to (default ${EMERGENCY_REPLICAS.outageScaleTarget})
  --timeout <s>          the bound of each wait, each pause in force included (default
                         ${WAITS_SECONDS.rolloutStatus}, the rollout timeout)
Exit code: 0 done and checked, 1 refused or a check failed (named, with why), 2 bad arguments.`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  reason: { type: 'string' },
  by: { type: 'string' },
  replicas: { type: 'string' },
  backup: { type: 'string' },
  fix: { type: 'boolean', default: false },
  timeout: { type: 'string' },
} as const;

/** `--reason`, which the pause of automated sync records. */
function requiredReason(reason: string | undefined): string {
  if (reason === undefined || reason.trim() === '') throw new UsageError('--reason <text> is required: it is recorded with the pause of automated sync');
  return reason;
}

/** Print the nodes and the pods that are not running; the nodes with a problem. */
async function reportNodesAndPods(target: OpsTarget): Promise<{ nodes: unknown[]; notRunning: string[] }> {
  const nodes = await nodeStates(target.cluster);
  for (const node of nodes) {
    target.say(`Node ${node.name}: ${node.ready ? 'Ready' : 'NOT READY'}${node.unschedulable ? ', cordoned' : ''}${node.problems.length > 0 ? ` (${node.problems.join('; ')})` : ''}`);
  }
  const notRunning = await podsNotRunning(target.cluster);
  if (nodes.length === 0) target.say('no Node in the cluster');
  target.say(notRunning.length > 0 ? `${notRunning.length} pods not running:` : nodes.length === 0 ? 'no pod can run' : 'every pod runs');
  for (const pod of notRunning.slice(0, LISTED_PODS)) target.say(`  ${pod}`);
  if (notRunning.length > LISTED_PODS) target.say(`  ... and ${notRunning.length - LISTED_PODS} more`);
  return { nodes, notRunning };
}

/** The outage's --replicas: a whole number, at least 1; the contract's example when not given. */
function outageReplicas(value: string | undefined): number {
  const replicas = value === undefined ? EMERGENCY_REPLICAS.outageScaleTarget : Number(value);
  if (!Number.isInteger(replicas) || replicas < 1) throw new UsageError(`--replicas "${value}" must be a whole number, at least 1`);
  return replicas;
}

async function outage(target: OpsTarget, values: { by?: string }, reason: string, replicas: number, env: NodeJS.ProcessEnv, timeout: number): Promise<number> {
  const { cluster, say } = target;
  say('1. nodes and pods');
  const { nodes, notRunning } = await reportNodesAndPods(target);
  if (nodes.length === 0) {
    // Nothing a scale-out asks for could run: the outage is the cluster's, not the application's.
    const problem = 'no Node in the cluster: nothing can run';
    say(`FAIL: ${problem}; automated sync was not paused and nothing was scaled`);
    target.result({ environment: target.environment.name, nodes, notRunning, paused: [], scaled: [], problems: [problem] });
    return 1;
  }

  say(`2. automated sync paused, then the serving Deployments scaled to ${replicas}`);
  const by = actor(values.by, env);
  const paused = await pauseInScope(target, false, by, `emergency outage: ${reason}`, timeout);
  for (const { application, result } of paused) say(`Application ${application}: ${result}`);
  const problems: string[] = [];
  const scaled: { application: string; deployment: string; replicas: number; rolledOut: boolean }[] = [];
  for (const application of target.applications) {
    const serving = liveWorkloadsOf(application).filter((workload) => workload.serves);
    for (const workload of serving) {
      await cluster.mergePatch('apps/v1', 'Deployment', workload.deployment, application.namespace, { spec: { replicas } });
      say(`Deployment ${application.namespace}/${workload.deployment} (${workload.role}): scaled to ${replicas}`);
    }
    const rollout = await waitForRollout(cluster, application.namespace, serving, timeout, say);
    for (const workload of serving) scaled.push({ application: application.name, deployment: workload.deployment, replicas, rolledOut: rollout.ok });
    if (!rollout.ok) problems.push(`${application.name}: ${rollout.reason}`);
  }

  say('3. the ingress controller');
  // As `ops check --component infrastructure` judges it (1.3.4): every pod of its namespace
  // ready, Envoy Gateway's control plane and the Envoy proxies it runs for the Gateways.
  const ingressNamespace = INFRASTRUCTURE_NAMESPACES.ingressController;
  const controller = await waitForPodsReady(cluster, ingressNamespace, timeout, say);
  say(`ingress controller (pods of ${ingressNamespace}): ${controller.ok ? controller.state : `NOT READY: ${controller.reason}`}`);
  if (!controller.ok) problems.push(`ingress controller: ${controller.reason}`);
  for (const application of target.applications) {
    try {
      say(`Gateway ${application.namespace}/${application.name}: ${await checkGateway(cluster, application.namespace, application.name)}`);
    } catch (error) {
      say(`Gateway ${application.namespace}/${application.name}: ${(error as Error).message}`);
      problems.push(`Gateway ${application.namespace}/${application.name}: ${(error as Error).message}`);
    }
  }
  const environment = target.environment.name;
  const after = target.environment.autoSync
    ? target.applications.map((application) => `npm run ops -- resume --env ${environment} --app ${application.name}`)
    : target.applications.map((application) => `npm run ops -- sync --env ${environment} --app ${application.name} --confirm ${environment}`);
  say(`when the outage is over, git's replicas come back with: ${after.join('; ')}`);
  const canaries = target.applications.filter((application) => application.strategy.type === 'canary').map((application) => application.name);
  if (canaries.length > 0) say(`a canary's primary is Flagger's, not git's: it keeps ${replicas} replicas until Flagger's next promotion (${canaries.join(', ')}), or run this again with --replicas <n>`);
  for (const problem of problems) say(`FAIL: ${problem}`);
  target.result({ environment: target.environment.name, nodes, notRunning, paused, scaled, problems });
  return problems.length === 0 ? 0 : 1;
}

/** Refused, naming the cluster, when the node the action names does not exist. */
async function requireNode(target: OpsTarget, node: string): Promise<void> {
  if ((await target.cluster.get('v1', 'Node', node)) === undefined) throw new RefusedError(`Node ${node} does not exist on ${target.cluster.server}`);
}

async function drain(target: OpsTarget, node: string, timeout: number): Promise<number> {
  const { cluster, say } = target;
  await requireNode(target, node);
  const uncordon = `npm run ops -- emergency uncordon ${node} --env ${target.environment.name}`;
  const plan = await drainPlan(cluster, node);
  if (plan.unmanaged.length > 0) {
    throw new RefusedError(`Node ${node} runs pods that no controller would recreate, so a drain would lose them: ${plan.unmanaged.join(', ')} (delete or move them first); nothing was changed`);
  }
  await setSchedulable(cluster, node, false);
  say(`Node ${node}: cordoned`);
  for (const left of plan.left) say(`left alone: ${left}`);
  let eviction: Awaited<ReturnType<typeof evictAll>>;
  try {
    eviction = await evictAll(cluster, plan.evict, timeout, say);
  } catch (error) {
    throw new RefusedError(`${(error as Error).message}; Node ${node} stays cordoned (${uncordon})`);
  }
  const evicted = plan.evict.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`);
  say(eviction.ok ? `Node ${node}: drained (${evicted.length} pods evicted)` : `Node ${node}: FAIL: ${eviction.reason}; it stays cordoned (${uncordon})`);
  if (eviction.ok) say(`after the maintenance: ${uncordon}`);
  target.result({ environment: target.environment.name, node, drained: eviction.ok, evicted, left: plan.left, ...(eviction.ok ? {} : { reason: eviction.reason }) });
  return eviction.ok ? 0 : 1;
}

async function uncordon(target: OpsTarget, node: string, timeout: number): Promise<number> {
  const { cluster, say } = target;
  await requireNode(target, node);
  await setSchedulable(cluster, node, true);
  say(`Node ${node}: uncordoned`);
  const running = await waitForAllPodsRunning(cluster, timeout, say);
  say(running.ok ? 'every pod runs' : `FAIL: ${running.reason}`);
  target.result({ environment: target.environment.name, node, uncordoned: true, allPodsRunning: running.ok, notRunning: running.notRunning });
  return running.ok ? 0 : 1;
}

/** `npm run ops -- emergency`: 7.2's outage and maintenance procedures. */
export const EMERGENCY: CommandDefinition<typeof OPTIONS> = {
  name: 'ops emergency',
  usage: USAGE,
  options: OPTIONS,
  positionals: true,
  async run(values, positionals, context) {
    const [action, node, ...rest] = positionals;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`the action must be one of ${ACTIONS.join(', ')}`);
    const standing = action === 'outage' || action === 'restore' || action === 'crashloop';
    if (standing ? node !== undefined : node === undefined || rest.length > 0) {
      throw new UsageError(standing ? `${action} takes no node` : `${action} takes one node: npm run ops -- emergency ${action} <node> --env <environment>`);
    }
    if (!standing && (values.reason !== undefined || values.app !== undefined)) throw new UsageError('--reason and --app go with outage, restore and crashloop');
    if (action !== 'crashloop' && values.fix) throw new UsageError('--fix goes with crashloop');
    if (action !== 'outage' && values.replicas !== undefined) throw new UsageError('--replicas goes with outage');
    if (action !== 'restore' && values.backup !== undefined) throw new UsageError('--backup goes with restore');
    const timeout = seconds(values.timeout, '--timeout', WAITS_SECONDS.rolloutStatus);
    if (action === 'restore') {
      if (values.app === undefined) throw new UsageError('--app <application> is required: the application whose database is restored');
      const reason = requiredReason(values.reason);
      const target = opsTarget(values, context, true);
      return restoreApplication(target, target.applications[0]!, { backup: values.backup, by: actor(values.by, context.env), reason, timeoutSeconds: timeout });
    }
    if (action === 'crashloop') {
      if (values.app === undefined) throw new UsageError('--app <application> is required: the application whose containers crash-loop');
      const reason = values.fix ? requiredReason(values.reason) : '';
      const target = opsTarget(values, context, true);
      return crashLoop(target, target.applications[0]!, { fix: values.fix, by: actor(values.by, context.env), reason, timeoutSeconds: timeout });
    }
    if (action === 'outage') {
      // Every argument checked before the kubeconfig is read.
      const replicas = outageReplicas(values.replicas);
      const reason = requiredReason(values.reason);
      return outage(opsTarget(values, context), values, reason, replicas, context.env, timeout);
    }
    const target = opsTarget(values, context);
    return action === 'drain' ? drain(target, node!, timeout) : uncordon(target, node!, timeout);
  },
};
