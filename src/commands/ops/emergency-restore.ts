import { RefusedError } from '../../base/errors';
import { compareText } from '../../base/text-order';
import { appliedMigrations, type Backup, backupsOf, jobCondition, restore, startMigrationJob, verifyBackup, waitForJob } from '../../cluster/database';
import { waitFor } from '../../cluster/wait';
import { labelSelector, waitForRollout } from '../../cluster/workloads';
import { DATABASE } from '../../contract/choices';
import { EMERGENCY_REPLICAS, WAITS_SECONDS } from '../../contract/contract';
import { DEFAULT_BACKUP_NAME } from '../../constructs/database-backup';
import type { Application } from '../../environments';
import { liveWorkloadsOf } from '../../environments/strategy-registry';
import { pauseInScope, resumeApplications } from './pause';
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

/** The backup CronJob's runs, newest first: each as one line, and whether one is running now. */
async function backupJobs(target: OpsTarget): Promise<{ lines: string[]; running: string[] }> {
  const namespace = target.environment.database.namespace;
  const jobs = (await target.cluster.list('batch/v1', 'Job', namespace, labelSelector({ app: DEFAULT_BACKUP_NAME })))
    .map((job) => {
      const state = jobCondition(job, 'Complete') !== undefined ? 'Complete' : jobCondition(job, 'Failed') !== undefined ? 'Failed' : 'running';
      return { name: job.metadata.name, started: String(job['status']?.startTime ?? ''), state };
    })
    .sort((a, b) => compareText(b.started, a.started));
  return {
    lines: jobs.map((job) => `Job ${namespace}/${job.name} started ${job.started || 'not yet'}: ${job.state}`),
    running: jobs.filter((job) => job.state === 'running').map((job) => `Job ${namespace}/${job.name}`),
  };
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
 * 7.2 data recovery. Before anything changes: the application's own backups listed, the
 * chosen one (default newest) verified readable (RESTORE VERIFYONLY with its checksums), and
 * no backup running (it could be overwriting that file). Then: automated sync paused (self-heal
 * would start the application again); every Deployment of its strategy scaled to 0 and its
 * pods gone; the database restored with replacement; the migrations image run to apply what
 * the restored database lacks (a backup is older than the running version), before any pod
 * starts; the serving Deployments scaled to EMERGENCY_REPLICAS.afterRestore (the others as they
 * were) and the rollout awaited; then automated sync resumed on the Applications this paused.
 * A failure stops there, named, with what stays stopped and paused and the command to resume.
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
  const jobs = await backupJobs(target);
  for (const job of jobs.lines.slice(0, DATABASE.backup.historyLimit)) say(`  ${job}`);
  if (jobs.lines.length === 0) say(`  no run of the ${DEFAULT_BACKUP_NAME} CronJob is kept`);
  if (jobs.running.length > 0) throw new RefusedError(`a backup is running (${jobs.running.join(', ')}): it may be writing the file to restore; wait for it; nothing was changed`);
  await verifyBackup(server, chosen.file);
  say(`restoring ${chosen.file} (finished ${chosen.finishedAt}): verified readable`);
  const before = await appliedMigrations(server, database);

  say(`2. automated sync paused, then ${application.name} stopped`);
  const paused = await pauseInScope(target, false, request.by, `emergency restore: ${request.reason}`, request.timeoutSeconds);
  for (const { application: app, result } of paused) say(`Application ${app}: ${result}`);
  const fail = (reason: string, extra: Record<string, unknown>): number => {
    say(`FAIL: ${reason}`);
    say(`automated sync stays paused; when the database and ${application.name} are right again: ${resume}`);
    target.result({ environment, application: application.name, backup: chosen, ...extra, reason });
    return 1;
  };
  let replicas: Map<string, number>;
  try {
    replicas = await stopApplication(target, application, request.timeoutSeconds);
  } catch (error) {
    if (!(error instanceof RefusedError)) throw error;
    return fail(error.message, { restored: false });
  }

  say(`3. database ${database} restored from ${chosen.file} with replacement, then migrated to the running version`);
  let after: string[];
  try {
    await restore(server, database, chosen.file, DATABASE.backup.activeDeadlineSeconds);
    const restored = await appliedMigrations(server, database);
    say(`restored: newest migration ${restored[0] ?? 'none'} (before: ${before[0] ?? 'none'})`);
    const job = await startMigrationJob(cluster, application.name, application.namespace, undefined, `npm run ops -- emergency restore (${request.by})`);
    say(`Job ${application.namespace}/${job.name}: the migrations image applies what the restored database lacks`);
    const migrated = await waitForJob(cluster, application.namespace, job, WAITS_SECONDS.controllerSync, say);
    if (!migrated.ok) return fail(`database ${database} restored, but its migrations failed: ${migrated.reason}; ${application.name} stays stopped`, { restored: true, migrations: restored });
    after = await appliedMigrations(server, database);
    say(`database ${database} now (newest first): ${after.join(', ') || 'no migration'}`);
  } catch (error) {
    if (!(error instanceof RefusedError)) throw error;
    return fail(`${error.message}; the restore may be unfinished (the database single-user or restoring): check it before starting ${application.name}, which stays stopped`, { restored: false });
  }

  say(`4. ${application.name} started again`);
  const started = liveWorkloadsOf(application).filter((workload) => replicas.has(workload.deployment));
  for (const workload of started) {
    const count = workload.serves ? EMERGENCY_REPLICAS.afterRestore : replicas.get(workload.deployment)!;
    await cluster.mergePatch('apps/v1', 'Deployment', workload.deployment, application.namespace, { spec: { replicas: count } });
    say(`Deployment ${application.namespace}/${workload.deployment} (${workload.role}): scaled to ${count}`);
  }
  const rollout = await waitForRollout(cluster, application.namespace, started, request.timeoutSeconds, say);
  if (!rollout.ok) return fail(rollout.reason!, { restored: true, migrations: after });

  // Only what this paused: an Application paused before (another operation's) stays paused.
  const ours = paused.filter((entry) => entry.result === 'paused').map((entry) => entry.application);
  say(`5. automated sync resumed: ${ours.join(', ') || 'nothing this paused'}`);
  const resumed = await resumeApplications(target, ours);
  for (const { application: app, result } of resumed) say(`Application ${app}: ${result}`);
  const left = paused.filter((entry) => entry.result !== 'paused').map((entry) => entry.application);
  if (left.length > 0) say(`left as they were (paused before, or manual): ${left.join(', ')}`);
  say(`ops emergency restore: done: database ${database} from ${chosen.file}, ${application.name} running`);
  target.result({ environment, application: application.name, backup: chosen, restored: true, migrations: after, started: true, resumed });
  return 0;
}
