import { RefusedError } from '../../base/errors';
import { compareText } from '../../base/text-order';
import { appliedMigrations, type Backup, backupsOf, restore } from '../../cluster/database';
import { waitFor } from '../../cluster/wait';
import { labelSelector, waitForRollout } from '../../cluster/workloads';
import { DATABASE } from '../../contract/choices';
import { EMERGENCY_REPLICAS } from '../../contract/contract';
import { DEFAULT_BACKUP_NAME } from '../../constructs/database-backup';
import type { Application } from '../../environments';
import { liveWorkloadsOf } from '../../strategies/values-registry';
import { pauseInScope, resumeInScope } from './pause';
import type { OpsTarget } from './target';

/** What `emergency restore` was asked. */
export interface RestoreRequest {
  /** The backup file to restore, or its name; the newest of the application's own backups by default. */
  readonly backup?: string;
  /** Who, and why, recorded with the pause. */
  readonly by: string;
  readonly reason: string;
  /** The bound of each wait for the application's pods (the rollout timeout by default). */
  readonly timeoutSeconds: number;
}

/** The backup to restore: the one named (by path or file name), else the newest; refused when there is none. */
export function chooseBackup(database: string, backups: readonly Backup[], wanted: string | undefined): Backup {
  if (backups.length === 0) throw new RefusedError(`database ${database} has no backup on the backup volume: nothing to restore (is the ${DEFAULT_BACKUP_NAME} CronJob running?)`);
  if (wanted === undefined) return backups[0]!;
  const chosen = backups.find((backup) => backup.file === wanted || backup.file.endsWith(`/${wanted}`));
  if (chosen === undefined) throw new RefusedError(`--backup ${wanted} is not one of database ${database}'s backups: ${backups.map((backup) => backup.file).join(', ')}`);
  return chosen;
}

/** The last runs of the backup CronJob, newest first, as one line each. */
async function backupJobs(target: OpsTarget): Promise<string[]> {
  const namespace = target.environment.database.namespace;
  const jobs = await target.cluster.list('batch/v1', 'Job', namespace, labelSelector({ app: DEFAULT_BACKUP_NAME }));
  return jobs
    .map((job) => {
      const conditions: { type?: string; status?: string }[] = job['status']?.conditions ?? [];
      const state = conditions.find((c) => c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'))?.type ?? 'running';
      return { name: job.metadata.name, started: String(job['status']?.startTime ?? ''), state };
    })
    .sort((a, b) => compareText(b.started, a.started))
    .map((job) => `Job ${namespace}/${job.name} started ${job.started || 'not yet'}: ${job.state}`);
}

/** Scale every Deployment of the strategy (both blue-green units, a canary and its primary) and wait until their pods are gone. */
async function stopApplication(target: OpsTarget, application: Application, timeoutSeconds: number): Promise<Map<string, number>> {
  const { cluster, say } = target;
  const before = new Map<string, number>();
  const selectors: string[] = [];
  for (const workload of liveWorkloadsOf(application)) {
    const deployment = await cluster.get('apps/v1', 'Deployment', workload.deployment, application.namespace);
    if (deployment === undefined) continue;
    before.set(workload.deployment, Number(deployment['spec']?.replicas ?? 1));
    selectors.push(labelSelector(deployment['spec']?.selector?.matchLabels ?? {}));
    await cluster.mergePatch('apps/v1', 'Deployment', workload.deployment, application.namespace, { spec: { replicas: 0 } });
    say(`Deployment ${application.namespace}/${workload.deployment} (${workload.role}): scaled from ${before.get(workload.deployment)} to 0`);
  }
  const stopped = await waitFor({
    what: `pods of ${application.name} gone`,
    timeoutSeconds,
    progress: say,
    check: async () => {
      let left = 0;
      for (const selector of selectors) left += (await cluster.list('v1', 'Pod', application.namespace, selector)).length;
      return { done: left === 0, state: `${left} pods left` };
    },
  });
  if (!stopped.ok) throw new RefusedError(`${application.name} did not stop: ${stopped.reason}; nothing was restored, its Deployments stay at 0 and automated sync paused`);
  return before;
}

/**
 * 7.2 data recovery: the application stopped (automated sync paused first, or self-heal
 * would start it again), the backup jobs checked, its database restored with replacement
 * from its own newest backup (or the one named), the application started again with
 * EMERGENCY_REPLICAS.afterRestore replicas where it serves (the other Deployments of its
 * strategy as they were), then automated sync resumed. A failure stops there, named, with
 * automated sync left paused.
 */
export async function restoreApplication(target: OpsTarget, application: Application, request: RestoreRequest): Promise<number> {
  const { cluster, say } = target;
  const server = { cluster, namespace: target.environment.database.namespace };
  const database = application.database.name;
  const environment = target.environment.name;
  const resume = `npm run ops -- resume --env ${environment} --app ${application.name}`;

  say(`1. the backups of database ${database}`);
  const backups = await backupsOf(server, database);
  for (const backup of backups) say(`  ${backup.file}  finished ${backup.finishedAt}`);
  const chosen = chooseBackup(database, backups, request.backup);
  say(`restoring ${chosen.file} (finished ${chosen.finishedAt})`);
  const jobs = await backupJobs(target);
  for (const job of jobs.slice(0, DATABASE.backup.historyLimit)) say(`  ${job}`);
  if (jobs.length === 0) say(`  no run of the ${DEFAULT_BACKUP_NAME} CronJob is kept`);

  say(`2. automated sync paused, then ${application.name} stopped`);
  for (const { application: paused, result } of await pauseInScope(target, false, request.by, `emergency restore: ${request.reason}`)) say(`Application ${paused}: ${result}`);
  const replicas = await stopApplication(target, application, request.timeoutSeconds);

  say(`3. database ${database} restored from ${chosen.file} with replacement`);
  try {
    await restore(server, database, chosen.file, DATABASE.backup.activeDeadlineSeconds);
  } catch (error) {
    say(`FAIL: ${(error as Error).message}`);
    say(`${application.name} stays stopped and automated sync paused; after fixing it, ${resume}`);
    target.result({ environment, application: application.name, backup: chosen, restored: false, reason: (error as Error).message });
    return 1;
  }
  const migrations = await appliedMigrations(server, database);
  say(`database ${database} restored: newest migration ${migrations[0] ?? 'none'}`);

  say(`4. ${application.name} started again`);
  const serving = liveWorkloadsOf(application).filter((workload) => replicas.has(workload.deployment));
  for (const workload of serving) {
    const count = workload.serves ? EMERGENCY_REPLICAS.afterRestore : replicas.get(workload.deployment)!;
    await cluster.mergePatch('apps/v1', 'Deployment', workload.deployment, application.namespace, { spec: { replicas: count } });
    say(`Deployment ${application.namespace}/${workload.deployment} (${workload.role}): scaled to ${count}`);
  }
  const rollout = await waitForRollout(cluster, application.namespace, serving, request.timeoutSeconds, say);
  if (!rollout.ok) {
    say(`FAIL: ${rollout.reason}; automated sync stays paused (${resume})`);
    target.result({ environment, application: application.name, backup: chosen, restored: true, migrations, started: false, reason: rollout.reason });
    return 1;
  }

  say('5. automated sync resumed (a sync runs the migrations Sync hook: a backup older than the running version is migrated forward)');
  const resumed = await resumeInScope(target, false);
  for (const { application: app, result } of resumed) say(`Application ${app}: ${result}`);
  say(`ops emergency restore: done: database ${database} from ${chosen.file}, ${application.name} running`);
  target.result({ environment, application: application.name, backup: chosen, restored: true, migrations, started: true, resumed });
  return 0;
}
