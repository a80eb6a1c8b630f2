import { UsageError } from '../../base/errors';
import { startSync, waitForSync } from '../../cluster/argo-cd';
import { awaitOperationInProgress } from '../../cluster/sync-join';
import type { WaitResult } from '../../cluster/wait';
import { waitForRollout } from '../../cluster/workloads';
import { WAITS_SECONDS } from '../../contract/contract';
import { applicationChartId } from '../../contract/layout';
import { liveWorkloadsOf } from '../../strategies/values-registry';
import { type CommandDefinition, seconds } from '../../tooling/cli';
import { ENVIRONMENT_ORDER } from '../../environments';
import { withDeploymentNotice } from './deployment-notice';
import { TARGET_OPTIONS, TARGET_USAGE, actor, opsTarget } from './target';
import { HTTP_OPTIONS, HTTP_USAGE, verifyApplication } from './verify';

const USAGE = `usage: npm run ops -- sync --env <environment> [--app <application>] [options]

Contract 1.3.2-1.3.3: starts an Argo CD sync of the application's Application (as
\`argocd app sync\`, through the Application resource), waits for it to end (the sync
timeout, ${WAITS_SECONDS.controllerSync} s; a sync already in progress, such as automated sync's right after
\`ops resume\`, is awaited first within the same bound, and a sync of its own started only
when that one did not deploy the revision git names, or with --prune or --force), waits for the strategy's Deployments to roll out (the rollout
timeout, ${WAITS_SECONDS.rolloutStatus} s), then verifies as \`ops verify\` does. An environment that does not
sync automatically (production, planned) is synced only with --confirm <environment>
(as every changing verb: src/commands/ops/production-gate.ts).
${TARGET_USAGE}
  --application <name>   sync this Application of the environment instead (an infrastructure
                         release: \`argocd\`, \`envoy-gateway\`...): the sync and its wait only
  --prune                delete live objects that git no longer has
  --force                replace objects that cannot be patched (delete and re-create)
  --by <name>            who the sync is recorded as (default: $USER)
  --sync-timeout <s>     bound of the sync (default ${WAITS_SECONDS.controllerSync}, the contract's)
  --rollout-timeout <s>  bound of the rollout (default ${WAITS_SECONDS.rolloutStatus}, the contract's)
  --no-verify            stop after the rollout
${HTTP_USAGE}
Exit code: 0 synced, rolled out and verified; 1 a step failed (named, with why); 2 bad arguments.`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  ...HTTP_OPTIONS,
  application: { type: 'string' },
  prune: { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  by: { type: 'string' },
  'sync-timeout': { type: 'string' },
  'rollout-timeout': { type: 'string' },
  'no-verify': { type: 'boolean', default: false },
} as const;

/** Sync, wait, roll out, verify. */
const SYNC_STEPS: CommandDefinition<typeof OPTIONS> = {
  name: 'ops sync',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    if (values.application !== undefined && values.app !== undefined) throw new UsageError('give --app or --application, not both');
    const syncTimeout = seconds(values['sync-timeout'], '--sync-timeout', WAITS_SECONDS.controllerSync);
    const rolloutTimeout = seconds(values['rollout-timeout'], '--rollout-timeout', WAITS_SECONDS.rolloutStatus);
    const target = opsTarget(values, context, values.application === undefined);
    const { environment, controllerNamespace: namespace, say } = target;
    const application = target.applications[0]!;
    const { cluster } = target;
    const name = values.application ?? applicationChartId(application.name);
    const steps: { step: string; ok: boolean; detail: string }[] = [];
    const finish = (code: number) => {
      target.result({ environment: environment.name, application: application.name, steps, passed: code === 0 });
      return code;
    };
    const by = actor(values.by, context.env);
    say(`ops sync: Application ${name} in ${environment.name} on ${cluster.server}, by ${by}${values.prune ? ', pruning' : ''}${values.force ? ', forced' : ''}`);
    // A sync already in progress (automated sync right after a resume, a colleague's) is awaited within the same bound.
    const started = Date.now();
    const joined = await awaitOperationInProgress(cluster, namespace, name, syncTimeout, say);
    let sync: WaitResult;
    if (joined.joined && !joined.ok) {
      sync = { ok: false, state: 'Running', reason: joined.reason, seconds: syncTimeout };
    } else if (joined.joined && joined.current && !values.prune && !values.force) {
      say(`ops sync: the sync operation in progress on ${name} is over: ${joined.why}: no sync of its own`);
      sync = { ok: true, state: 'Succeeded (the operation in progress)', seconds: Math.round((Date.now() - started) / 1000) };
    } else {
      if (joined.joined) say(`ops sync: the sync operation in progress on ${name} is over: ${joined.why}: a sync of its own`);
      const request = await startSync(cluster, namespace, name, { by, prune: values.prune, force: values.force });
      sync = await waitForSync(cluster, namespace, name, request, Math.max(1, syncTimeout - Math.floor((Date.now() - started) / 1000)), say);
    }
    steps.push({ step: 'sync', ok: sync.ok, detail: sync.ok ? sync.state : sync.reason! });
    if (!sync.ok) {
      // Argo CD holds a sync until the workloads are healthy when a PostSync hook follows
      // (the smoke test): say why they are not.
      const workloads = values.application === undefined ? await waitForRollout(cluster, application.namespace, liveWorkloadsOf(application), 1, () => undefined) : undefined;
      const why = workloads === undefined || workloads.ok ? '' : `; workloads: ${workloads.reason}`;
      say(`ops sync: the sync of ${name} did not succeed: ${sync.reason}${why}${sync.state.startsWith('Running') ? ' (the operation keeps running in Argo CD)' : ''}`);
      return finish(1);
    }
    // Another Application than an application's: its sync is the whole operation.
    if (values.application !== undefined) return finish(0);
    const rollout = await waitForRollout(cluster, application.namespace, liveWorkloadsOf(application), rolloutTimeout, say);
    steps.push({ step: 'rollout', ok: rollout.ok, detail: rollout.ok ? rollout.state : rollout.reason! });
    if (!rollout.ok) {
      say(`ops sync: the rollout of ${application.name} did not complete: ${rollout.reason}`);
      return finish(1);
    }
    if (values['no-verify']) return finish(0);
    const verified = await verifyApplication(environment, application, () => cluster, values, context, say);
    steps.push({ step: 'verify', ok: verified.passed, detail: verified.steps.map((s) => `${s.name} ${s.status}`).join(', ') });
    return finish(verified.passed ? 0 : 1);
  },
};

/** `npm run ops -- sync`: a production sync is a significant deployment (1.6), its notice to the chat and the stakeholders. */
export const SYNC = withDeploymentNotice(SYNC_STEPS, (values, code, context) =>
  values.env !== ENVIRONMENT_ORDER.at(-1)
    ? undefined
    : { environment: values.env!, message: `sync of ${values.application ?? values.app ?? 'the application'} by ${actor(values.by, context.env)}: ${code === 0 ? 'done' : 'FAILED'}` },
);
