import { RefusedError, UsageError } from '../../base/errors';
import { listApplications } from '../../cluster/argo-cd';
import { applicationGenerations, failedAutomatedSync, hasAutomatedPolicy, pauseApplication, resumeApplication, settlePause } from '../../cluster/argo-cd-pause';
import type { LiveObject } from '../../cluster/connection';
import { podState } from '../../cluster/workloads';
import { WAITS_SECONDS } from '../../contract/contract';
import { applicationChartId } from '../../contract/layout';
import { ROOT_APPLICATION } from '../../contract/platform-charts';
import { ARGO_CD } from '../../contract/upstream';
import { type CommandContext, type CommandDefinition, seconds } from '../../tooling/cli';
import { type OpsTarget, TARGET_OPTIONS, TARGET_USAGE, actor, opsTarget } from './target';

const PAUSE_USAGE = `usage: npm run ops -- pause --env <environment> --reason <text> [--app <application>] [options]

Stops automated sync, self-heal and prune with it, so manual work (a rollback, an
emergency) is not undone: first the root Application (which would otherwise re-apply its
children's policies), then the application's Application (or every Application of the
environment without --app, each after the one that applied it, those of one generation
together). Sets automated.enabled=false, keeping the rendered policy, and records who and
why on each Application (platform-gitops.io/paused-by, -reason). A parent's pause is in
force before its children's start: Argo CD has compared the Application with automated
sync off, an automated sync still running (or awaiting a retry) is terminated as
\`argocd app terminate-op\` does, and a sync a person started is awaited.
An Application without automated sync (production) is left as it is.
${TARGET_USAGE}
  --reason <text>        why (required): shown by ops status
  --by <name>            who (default: $USER)
  --timeout <s>          the bound of each pause's wait (default ${WAITS_SECONDS.controllerSync},
                         the contract's sync timeout)
Exit code: 0 paused, 1 refused (a pause not in force in time: what was paused stays
paused), 2 bad arguments.`;

const RESUME_USAGE = `usage: npm run ops -- resume --env <environment> [--app <application>] [options]

Restores what pause stopped: the application's Application (or every one without --app),
then the root; the pause record is removed and Argo CD's automated sync, self-heal and
prune run again (a drifted object is set back to git within seconds). An Application whose
last automated sync failed (one a pause terminated among them) is not synced again by Argo
CD until git moves: the result names the \`npm run ops -- sync\` that puts git's state back.
${TARGET_USAGE}
Exit code: 0 resumed, 1 refused, 2 bad arguments.`;

const PAUSE_OPTIONS = { ...TARGET_OPTIONS, reason: { type: 'string' }, by: { type: 'string' }, timeout: { type: 'string' } } as const;

/** The Applications in scope, root first: the root and the applications' own, or every one. */
async function inScope(target: OpsTarget, all: boolean): Promise<LiveObject[]> {
  const apps = await listApplications(target.cluster, target.controllerNamespace);
  const wanted = new Set([ROOT_APPLICATION, ...target.applications.map((application) => applicationChartId(application.name))]);
  const chosen = all ? apps : apps.filter((app) => wanted.has(app.metadata.name));
  return [...chosen.filter((app) => app.metadata.name === ROOT_APPLICATION), ...chosen.filter((app) => app.metadata.name !== ROOT_APPLICATION)];
}

/** What became of one Application's automated sync. */
export interface PauseOutcome {
  readonly application: string;
  readonly result: string;
  /** Its automated sync was paused by this or an earlier pause (false: it has none, production's). */
  readonly paused: boolean;
}

/**
 * Whether Argo CD's application controller has a ready pod in its namespace (the chart's
 * StatefulSet, its pods labelled `app.kubernetes.io/name: argocd-application-controller`;
 * contract/upstream.ts ARGO_CD). Without one nothing syncs, and the controller reads the pause
 * when it is back: there is nothing to wait for.
 */
async function applicationControllerReady(target: OpsTarget): Promise<boolean> {
  const pods = await target.cluster.list('v1', 'Pod', target.controllerNamespace, `${ARGO_CD.nameLabel}=${ARGO_CD.components.applicationController}`);
  return pods.some((pod) => podState(pod).ready);
}

/**
 * Pause automated sync of `apps`, each parent's pause in force before its children's are
 * written (a parent's self-heal would put a child's policy back; applicationGenerations), the
 * Applications of one generation together; each in force (settlePause: Argo CD compared it
 * with automated sync off, an automated sync that still ran terminated, a person's awaited,
 * within `timeoutSeconds`); what became of each, in the order of `apps`. Where Argo CD's
 * application controller has no ready pod, the pauses are written and not awaited. Refused,
 * naming the Application, when a pause is not in force within the bound: what was paused
 * stays paused, and no later generation is touched.
 */
export async function pauseApplications(target: OpsTarget, apps: readonly LiveObject[], by: string, reason: string, timeoutSeconds: number): Promise<PauseOutcome[]> {
  const outcomes = new Map<string, PauseOutcome>();
  // Only a pause is awaited: where no Application has automated sync (production), the controller is not asked about.
  const controllerReady = !apps.some(hasAutomatedPolicy) || (await applicationControllerReady(target));
  if (!controllerReady) {
    target.say(`Argo CD's application controller has no ready pod in ${target.controllerNamespace}: nothing syncs while it is down, and it reads the pauses when it is back; they are not awaited`);
  }
  const inOrder = () => apps.map((app) => outcomes.get(app.metadata.name)).filter((outcome): outcome is PauseOutcome => outcome !== undefined);
  for (const generation of applicationGenerations(apps, ROOT_APPLICATION)) {
    const settled = await Promise.all(
      generation.map(async (app) => {
        const name = app.metadata.name;
        const result = await pauseApplication(target.cluster, target.controllerNamespace, app, by, reason);
        if (result === 'manual') return { name, outcome: { application: name, result: 'manual sync (nothing to pause)', paused: false } };
        if (!controllerReady) return { name, outcome: { application: name, result, paused: true } };
        const inForce = await settlePause(target.cluster, target.controllerNamespace, name, timeoutSeconds, target.say);
        if (!inForce.ok) return { name, refused: inForce };
        return { name, outcome: { application: name, result: inForce.terminated ? `${result}; the automated sync that was running terminated` : result, paused: true } };
      }),
    );
    for (const { name, outcome } of settled) if (outcome !== undefined) outcomes.set(name, outcome);
    const refused = settled.find((each) => each.refused !== undefined);
    if (refused?.refused !== undefined) {
      const failed = settled.filter((each) => each.refused !== undefined).map((each) => each.name);
      const paused = [...inOrder().filter((outcome) => outcome.paused).map((outcome) => outcome.application), ...failed];
      const terminating = refused.refused.terminated ? `; its automated sync was asked to terminate` : '';
      throw new RefusedError(`Application ${refused.name}: automated sync is off, but the pause is not in force: ${refused.refused.reason}${terminating}; automated sync stays paused (${paused.join(', ')}), nothing else was changed`);
    }
  }
  return inOrder();
}

/**
 * Pause automated sync of the Applications in scope (`all`, or the root and the applications'
 * own), each parent in force before its children (pauseApplications); what became of each.
 */
export async function pauseInScope(target: OpsTarget, all: boolean, by: string, reason: string, timeoutSeconds: number): Promise<PauseOutcome[]> {
  return pauseApplications(target, await inScope(target, all), by, reason, timeoutSeconds);
}

/**
 * Resume automated sync of the Applications in scope (`all`, or the applications' own and
 * the root), children first: the root's own automated sync starts when all is set.
 */
export async function resumeInScope(target: OpsTarget, all: boolean): Promise<{ application: string; result: string }[]> {
  const results: { application: string; result: string }[] = [];
  for (const app of (await inScope(target, all)).reverse()) results.push(await resumeOne(target, app));
  return results;
}

/**
 * Resume one Application's automated sync; what became of it. Where its last operation is an
 * automated sync that failed (one a pause terminated among them), Argo CD does not sync that
 * revision again by itself (failedAutomatedSync): the result says which sync puts git's state back.
 */
async function resumeOne(target: OpsTarget, app: LiveObject): Promise<{ application: string; result: string }> {
  const name = app.metadata.name;
  const result = await resumeApplication(target.cluster, target.controllerNamespace, app);
  if (result === 'manual') return { application: name, result: 'manual sync (nothing to resume)' };
  const failed = failedAutomatedSync(app);
  if (failed === undefined) return { application: name, result };
  return {
    application: name,
    result: `${result}; its last automated sync failed (${failed}), and Argo CD does not sync that revision again by itself until git moves: npm run ops -- sync --env ${target.environment.name} --application ${name} puts git's state back`,
  };
}

/** Resume automated sync of the Applications named, children first (the root last); the others are left as they are. */
export async function resumeApplications(target: OpsTarget, names: readonly string[]): Promise<{ application: string; result: string }[]> {
  const wanted = new Set(names);
  const apps = (await listApplications(target.cluster, target.controllerNamespace)).filter((app) => wanted.has(app.metadata.name));
  const ordered = [...apps.filter((app) => app.metadata.name !== ROOT_APPLICATION), ...apps.filter((app) => app.metadata.name === ROOT_APPLICATION)];
  const results: { application: string; result: string }[] = [];
  for (const app of ordered) results.push(await resumeOne(target, app));
  return results;
}

function report(target: OpsTarget, verb: string, results: readonly { application: string; result: string }[]): number {
  for (const { application, result } of results) target.say(`Application ${application}: ${result}`);
  target.result({ environment: target.environment.name, [verb]: results });
  return 0;
}

/** `npm run ops -- pause`: stop automated sync while people work on the cluster by hand. */
export const PAUSE: CommandDefinition<typeof PAUSE_OPTIONS> = {
  name: 'ops pause',
  usage: PAUSE_USAGE,
  options: PAUSE_OPTIONS,
  async run(values, _positionals, context: CommandContext) {
    if (values.reason === undefined || values.reason.trim() === '') throw new UsageError('--reason <text> is required: say why automated sync stops');
    const timeout = seconds(values.timeout, '--timeout', WAITS_SECONDS.controllerSync);
    const target = opsTarget(values, context);
    const by = actor(values.by, context.env);
    const results = await pauseInScope(target, values.app === undefined, by, values.reason, timeout);
    if (results.some((outcome) => outcome.paused)) {
      target.say(`automated sync paused by ${by}: ${values.reason}; undo with npm run ops -- resume --env ${target.environment.name}${values.app === undefined ? '' : ` --app ${values.app}`}`);
    } else {
      target.say(`nothing was paused: no Application in scope has automated sync (each syncs only when an operator asks)`);
    }
    return report(target, 'paused', results);
  },
};

/** `npm run ops -- resume`: automated sync again. */
export const RESUME: CommandDefinition<typeof TARGET_OPTIONS> = {
  name: 'ops resume',
  usage: RESUME_USAGE,
  options: TARGET_OPTIONS,
  async run(values, _positionals, context) {
    const target = opsTarget(values, context);
    const results = await resumeInScope(target, values.app === undefined);
    return report(target, 'resumed', results);
  },
};
