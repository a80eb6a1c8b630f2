import { RefusedError, UsageError } from '../../base/errors';
import { appliedMigrations, type DatabaseServer, startMigrationJob, waitForJob } from '../../cluster/database';
import { DATABASE } from '../../contract/choices';
import { WAITS_SECONDS } from '../../contract/contract';
import type { Application } from '../../environments';
import type { OpsTarget } from './target';

/** How the database level ended, for the verb's result. */
export interface DatabaseRollback {
  readonly ok: boolean;
  readonly detail: string;
  /** The migration history before and after, newest first. */
  readonly before: readonly string[];
  readonly after: readonly string[];
  /** The Job that ran the migrations image, when one ran. */
  readonly job?: string;
}

/** `--to` of the database level: a migration id the tool accepts. */
export function migrationOption(value: string | undefined): string {
  if (value === undefined) throw new UsageError('--to <migration> is required with --level database: the applied migration to go back to');
  if (!DATABASE.migrations.idPattern.test(value)) throw new UsageError(`--to "${value}" is not a migration id (letters, digits and _, as ${DATABASE.migrations.historyTable} records them)`);
  return value;
}

/** The server of the target's environment. */
export function databaseServer(target: OpsTarget): DatabaseServer {
  return { cluster: target.cluster, namespace: target.environment.database.namespace };
}

/**
 * Before anything changes: the applied migrations listed (newest first), and the named one
 * among them; refused, naming the database, when it is not. Undefined when the database is
 * at that migration already (nothing to do).
 */
export async function planDatabaseRollback(target: OpsTarget, application: Application, migration: string): Promise<readonly string[] | undefined> {
  const database = application.database.name;
  const before = await appliedMigrations(databaseServer(target), database);
  target.say(`database ${database}: ${before.length} migrations applied (${DATABASE.migrations.historyTable}, newest first):`);
  for (const id of before) target.say(`  ${id}`);
  if (!before.includes(migration)) throw new RefusedError(`${migration} is not an applied migration of database ${database}; nothing was changed`);
  return before[0] === migration ? undefined : before;
}

/**
 * 1.5, database level, once planned: the database updated to the named earlier migration by
 * the application's migrations image (a Job, within the sync timeout), then verified through
 * the migration history table: the named migration is the newest.
 */
export async function rollbackDatabase(target: OpsTarget, application: Application, migration: string, before: readonly string[], createdBy: string): Promise<DatabaseRollback> {
  const { cluster, say } = target;
  const database = application.database.name;
  const job = await startMigrationJob(cluster, application.name, application.namespace, migration, createdBy);
  say(`Job ${application.namespace}/${job.name}: the migrations image updates database ${database} to ${migration}`);
  const ran = await waitForJob(cluster, application.namespace, job, WAITS_SECONDS.controllerSync, say);
  if (!ran.ok) return { ok: false, detail: ran.reason!, before, after: before, job: job.name };

  const after = await appliedMigrations(databaseServer(target), database);
  say(`database ${database} now (newest first): ${after.join(', ') || 'no migration'}`);
  const ok = after[0] === migration;
  return {
    ok,
    detail: ok ? `database ${database} at ${migration} (was ${before[0]})` : `the migration history of ${database} shows ${after[0] ?? 'nothing'} as the newest, not ${migration}`,
    before,
    after,
    job: job.name,
  };
}
