import { RefusedError, UsageError } from '../../base/errors';
import { applicationHistory, rollbackEntry } from '../../cluster/application-history';
import { operationRuns, readApplication, startRollback, waitForSync } from '../../cluster/argo-cd';
import { rollbackRevision, rolloutHistory, undoRollout } from '../../cluster/rollout-history';
import { waitForRollout } from '../../cluster/workloads';
import { DATABASE } from '../../contract/choices';
import { WAITS_SECONDS } from '../../contract/contract';
import { applicationChartId } from '../../contract/layout';
import { liveWorkloadsOf } from '../../strategies/values-registry';
import { type CommandDefinition, seconds } from '../../tooling/cli';
import { pauseInScope } from './pause';
import { migrationOption, planDatabaseRollback, rollbackDatabase } from './rollback-database';
import { packageSubject, rollbackPackage } from './rollback-package';
import { withDeploymentNotice } from './deployment-notice';
import { oneOf, TARGET_OPTIONS, TARGET_USAGE, actor, opsTarget } from './target';

const LEVELS = ['orchestrator', 'controller', 'database', 'package'] as const;
type Level = (typeof LEVELS)[number];

const USAGE = `usage: npm run ops -- rollback --env <environment> --level orchestrator|controller [--app <application>] [options]
       npm run ops -- rollback --env <environment> --level database --to <migration> [--app <application>] [options]
       npm run ops -- rollback --env <environment> --level package --release <release> [--to <chart version> | --to-revision <history id>] [--force] [options]
       npm run ops -- rollback --env <environment> --level package --app <application> [--to <chart version>] [--force] [options]

Contract 1.5, on the live cluster. First checks what it goes back to (the rollout history,
the Application's history, the migrations, the chart versions), then pauses automated sync
(self-heal would undo the rollback), recording who and why, and leaves it paused; git is not
changed.
  orchestrator  each serving Deployment of the application's strategy back to its previous
                rollout revision (or --to-revision), as \`kubectl rollout undo\`; the history
                first, then the rollout, within ${WAITS_SECONDS.rolloutStatus} s
  controller    the Application back to an entry of its Argo CD history (the newest whose
                revision differs from the one that runs, or --to), as \`argocd app rollback\`; the sync within ${WAITS_SECONDS.controllerSync} s, then the rollout
  database      the applied migrations listed (newest first), then the database updated to
                the earlier migration --to names by the application's migrations image (a Job
                like its Sync hook's, ${DATABASE.migrations.updateTo('<migration>').join(' ')}), within ${WAITS_SECONDS.controllerSync} s,
                then verified in ${DATABASE.migrations.historyTable}; the application keeps
                running its version: roll it back too (controller or orchestrator level)
  package       a Helm chart Argo CD installs back to a chart version of its Application's
                history: an infrastructure release (--release: a row of
                src/infrastructure/releases.ts, installed by the Argo CD Application of its
                name), or an application whose Application follows its published chart from
                the registry (--app; one that follows git is refused: use the orchestrator or
                controller level); the newest version other than the deployed one, --to, or
                the version of the history entry --to-revision names (Argo CD's history id);
                the Helm source's targetRevision (spec.source, or its entry of spec.sources)
                set to it and synced (with --force, Argo CD's forced sync: the forced upgrade),
                the sync within ${WAITS_SECONDS.controllerSync} s, then the Application Healthy, its Helm source's
                synced revision and its newest history entry that version. A version never
                deployed goes through git.
The orchestrator, controller and database levels pause the root and the application's Application;
afterwards roll git back too (npm run rollback) before \`npm run ops -- resume\`, or
resuming syncs git's version again. The package level pauses the root, the \`infrastructure\`
Application (the releases' parent, which would put git's version back) and the release's;
afterwards git's pin must follow (infrastructure.versions.<release> of the environment's values
set to the version rolled back to: npm run upgrade ... --allow-downgrade, review, merge) before
\`npm run ops -- resume --env <environment>\`. For an application it pauses the root and the
application's Application; its chart version is what synth writes into dist/<env>/gitops.yaml
from src/environments/<env>/chart-versions.json, so git follows by a release of the previous tag or values
(npm run release or promote, then npm run publish) or a revert of the commit, reviewed and
merged, before \`npm run ops -- resume --env <environment>\`.
${TARGET_USAGE}
  --level <level>        ${LEVELS.join(', ')} (required)
  --release <name>       package: the infrastructure release, a row name of
                         src/infrastructure/releases.ts (a wrong one is answered with the list);
                         package takes it or --app, not both
  --to-revision <n>      orchestrator: the rollout revision to go back to; package: the Argo CD
                         history id whose chart version to go back to
  --to <id>              controller: the history entry to go back to
  --to <migration>       database: the applied migration to go back to (required)
  --to <chart version>   package: the chart version to go back to (one of its history)
  --prune                controller, package: delete what that entry or version does not have
  --force                controller, package: replace what cannot be patched (Argo CD's force)
  --reason <text>        recorded with the pause (default: "rollback (<level>)")
  --by <name>            who (default: $USER)
  --timeout <s>          bound of each wait: each pause in force, then the rollout, or for
                         package the Application's health (default ${WAITS_SECONDS.rolloutStatus})
Exit code: 0 rolled back and rolled out (package: Healthy at that version), 1 refused or failed
(named, with why), 2 bad arguments.`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  level: { type: 'string' },
  release: { type: 'string' },
  'to-revision': { type: 'string' },
  to: { type: 'string' },
  prune: { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  reason: { type: 'string' },
  by: { type: 'string' },
  timeout: { type: 'string' },
} as const;

function wholeNumber(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new UsageError(`${option} "${value}" must be a whole number`);
  return parsed;
}

/**
 * The options only some levels take: those levels, and what the others take instead. `--app`
 * goes with every level (at package level instead of --release: packageSubject).
 */
const LEVEL_OPTIONS: { readonly [option in 'release' | 'to-revision' | 'to']: { readonly levels: readonly Level[]; readonly instead: string } } = {
  release: { levels: ['package'], instead: 'the orchestrator, controller and database levels take --app <application>' },
  'to-revision': { levels: ['orchestrator', 'package'], instead: 'the controller level takes --to <id>, the database level --to <migration>' },
  to: { levels: ['controller', 'database', 'package'], instead: 'the orchestrator level takes --to-revision' },
};

/** 1.5's four levels (orchestrator, controller, database, package) on the live cluster. */
const ROLLBACK_LEVELS: CommandDefinition<typeof OPTIONS> = {
  name: 'ops rollback',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    const level = oneOf(values.level, LEVELS, '--level');
    for (const [option, { levels, instead }] of Object.entries(LEVEL_OPTIONS)) {
      if (values[option as keyof typeof LEVEL_OPTIONS] !== undefined && !levels.includes(level)) throw new UsageError(`--${option} is for --level ${levels.join(' or ')}; ${instead}`);
    }
    const timeout = seconds(values.timeout, '--timeout', WAITS_SECONDS.rolloutStatus);
    const by = actor(values.by, context.env);
    const reason = values.reason ?? `rollback (${level})`;
    if (level === 'package') {
      const target = opsTarget(values, context, values.app !== undefined);
      const subject = packageSubject(target, values.release, values.app, context.root);
      if (values.to?.trim() === '') throw new UsageError('--to <chart version> must not be empty');
      const toRevision = wholeNumber(values['to-revision'], '--to-revision');
      if (toRevision !== undefined && values.to !== undefined) throw new UsageError('give --to <chart version> or --to-revision <history id>, not both');
      const request = { subject, prune: values.prune, force: values.force, by, reason, timeoutSeconds: timeout, ...(toRevision === undefined ? {} : { toRevision }) };
      return rollbackPackage(target, values.to === undefined ? request : { ...request, to: values.to });
    }
    const toRevision = wholeNumber(values['to-revision'], '--to-revision');
    const toEntry = level === 'controller' ? wholeNumber(values.to, '--to') : undefined;
    const migration = level === 'database' ? migrationOption(values.to) : undefined;
    const target = opsTarget(values, context, true);
    const application = target.applications[0]!;
    const { cluster, controllerNamespace: namespace, say, environment } = target;
    const name = applicationChartId(application.name);
    const resume = `npm run ops -- resume --env ${environment.name} --app ${application.name}`;
    // The database level checks the named migration before anything changes.
    let applied: readonly string[] | undefined;
    if (level === 'database') {
      applied = await planDatabaseRollback(target, application, migration!);
      if (applied === undefined) {
        say(`ops rollback (database): nothing to do: database ${application.database.name} is at ${migration} already`);
        target.result({ environment: environment.name, application: application.name, level, passed: true, detail: 'already at the migration', migration });
        return 0;
      }
    }
    const workloads = liveWorkloadsOf(application);
    // Each level checks what it goes back to before anything is paused: a refusal leaves the environment as it was.
    if (level === 'orchestrator') {
      for (const workload of workloads.filter((w) => w.serves)) {
        const history = await rolloutHistory(cluster, application.namespace, workload.deployment);
        say(`Deployment ${application.namespace}/${workload.deployment} history (current ${history.current}):`);
        for (const revision of history.revisions) say(`  revision ${revision.revision}  ReplicaSet ${revision.replicaSet}  tag ${revision.tag}  ${revision.replicas} pods`);
        rollbackRevision(`${application.namespace}/${workload.deployment}`, history, toRevision);
      }
    }
    let entry: number | undefined;
    if (level === 'controller') {
      const app = await readApplication(cluster, namespace, name);
      const history = applicationHistory(app);
      say(`Application ${name} history:`);
      for (const each of history) say(`  ${each.id}  ${each.revision.slice(0, 12)}  ${each.deployedAt}  ${each.initiatedBy}`);
      entry = rollbackEntry(name, history, toEntry).id;
      if (app['operation'] !== undefined || operationRuns(app['status']?.operationState)) {
        throw new RefusedError(`Application ${name} has a sync operation ${app['operation'] !== undefined ? 'requested' : 'running'}: wait for it to end, then roll back`);
      }
    }
    // The root and the application's Application (target.applications holds the one application).
    for (const { application: paused, result } of await pauseInScope(target, false, by, reason, timeout)) say(`Application ${paused}: ${result}`);
    const finish = (ok: boolean, detail: string, extra: Record<string, unknown> = {}) => {
      say(`ops rollback (${level}): ${ok ? 'done' : 'FAILED'}: ${detail}`);
      say(`automated sync stays paused: roll git back too (npm run rollback -- --env ${environment.name} --app ${application.name}), then ${resume}`);
      target.result({ environment: environment.name, application: application.name, level, passed: ok, detail, ...extra });
      return ok ? 0 : 1;
    };
    try {
      return await rollBack();
    } catch (error) {
      // Refused once automated sync is paused: the failure is named with what stays paused.
      if (!(error instanceof RefusedError)) throw error;
      return finish(false, error.message);
    }

    async function rollBack(): Promise<number> {

      if (level === 'orchestrator') {
        const results: { deployment: string; from: number; to: number; skipped: boolean }[] = [];
        for (const workload of workloads.filter((w) => w.serves)) {
          const undone = await undoRollout(cluster, application.namespace, workload.deployment, toRevision);
          results.push({ deployment: workload.deployment, from: undone.from, to: undone.to.revision, skipped: undone.skipped });
          say(undone.skipped ? `  already at revision ${undone.to.revision}'s template: skipped` : `  rolled back from revision ${undone.from} to revision ${undone.to.revision}'s template (tag ${undone.to.tag})`);
        }
        const rollout = await waitForRollout(cluster, application.namespace, workloads.filter((w) => w.serves), timeout, say);
        return finish(rollout.ok, rollout.ok ? results.map((r) => `${r.deployment} revision ${r.from} -> ${r.to}`).join(', ') : rollout.reason!, { deployments: results });
      }

      if (level === 'database') {
        const rolledBack = await rollbackDatabase(target, application, migration!, applied!, `npm run ops -- rollback --level database (${by})`);
        return finish(rolledBack.ok, rolledBack.detail, { migration, before: rolledBack.before, after: rolledBack.after, ...(rolledBack.job === undefined ? {} : { job: rolledBack.job }) });
      }

      if (entry === undefined) throw new Error('the controller level chose its history entry before the pause');
      const request = await startRollback(cluster, namespace, name, entry, { by, prune: values.prune, force: values.force });
      const sync = await waitForSync(cluster, namespace, name, request, WAITS_SECONDS.controllerSync, say);
      if (!sync.ok) return finish(false, `rollback to history ${entry}: ${sync.reason}`, { entry });
      const rollout = await waitForRollout(cluster, application.namespace, workloads, timeout, say);
      return finish(rollout.ok, rollout.ok ? `Application ${name} rolled back to history ${entry}` : rollout.reason!, { entry });
    }
  },
};

/** `npm run ops -- rollback`: the four levels; every rollback is a significant deployment (1.6), its notice to the chat and the stakeholders. */
export const ROLLBACK = withDeploymentNotice(ROLLBACK_LEVELS, (values, code, context) => ({
  environment: values.env!,
  message: `rollback (${values.level}) of ${values.release ?? values.app ?? 'the application'}${values.to === undefined ? '' : ` to ${values.to}`} by ${actor(values.by, context.env)}${values.reason === undefined ? '' : ` (${values.reason})`}: ${code === 0 ? 'done' : 'FAILED'}`,
}));
