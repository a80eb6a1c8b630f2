import * as path from 'node:path';
import { RefusedError } from '../base/errors';
import { DATABASE } from '../contract/choices';
import { WAITS_SECONDS } from '../contract/contract';
import { databaseMigrationJob, migrationsName } from '../contract/naming';
import { isBackupFileOf } from '../constructs/database-backup';
import { MIGRATIONS_CONTAINER } from '../constructs/schema-migration';
import type { ClusterConnection, LiveObject } from './connection';
import { type WaitResult, waitFor } from './wait';
import { labelSelector, podState } from './workloads';

/** The columns' separator sqlcmd prints (`-s`): no migration id, table name or file path holds it. */
const COLUMN_SEPARATOR = '|';

/** The database names the values files allow (and master, msdb), so a name is safe in the shell, `[...]` and `N'...'`. */
const SQL_NAME = /^[A-Za-z0-9_][-A-Za-z0-9_]*$/;

/** How long one listing query may take before the verb gives up on the server. */
const QUERY_TIMEOUT_MS = 60_000;

/** Who and which verb created an object of the live operations. */
export const CREATED_BY_ANNOTATION = 'platform-gitops/created-by';

/** How long a finished migrations Job of the live operations is kept, for its logs: a day. */
const MIGRATION_JOB_KEPT_SECONDS = 86_400;

/** SQL Server as the live operations reach it: the StatefulSet's one pod in the database namespace. */
export interface DatabaseServer {
  readonly cluster: ClusterConnection;
  /** The database namespace (`database.namespace` of the environment). */
  readonly namespace: string;
}

/** The server's pod and its container: the StatefulSet's only replica. */
export function serverPod(): { readonly pod: string; readonly container: string } {
  return { pod: `${DATABASE.serverName}-0`, container: DATABASE.serverName };
}

/**
 * The command that runs `sql` with the image's sqlcmd inside the server's container, as
 * `kubectl exec mssql-0 -- sqlcmd` would: as the administrator, whose password stays in the
 * container's environment (never on this machine, never in a command line); the rows only (no header, no row count,
 * trailing blanks trimmed, columns separated by `|`); `-b` makes an SQL error exit 1.
 * sqlcmd is found on PATH with the image's tools folder appended, which is where the image
 * has it (a loopback stand-in of the container provides its own on PATH).
 */
export function sqlcmdInServer(sql: string, database: string): string[] {
  if (/["$`\\]/.test(sql)) throw new Error(`a query run through sh -c holds no ", $, \` or \\: ${sql}`);
  if (!SQL_NAME.test(database)) throw new Error(`"${database}" is not a database name the platform makes (letters, digits, _ and -)`);
  // The password reaches sqlcmd through its environment (SQLCMDPASSWORD), never its arguments, which ps shows.
  const flags = `-S localhost -U ${DATABASE.administrator} -C -b -h -1 -W -s "${COLUMN_SEPARATOR}" -d ${database}`;
  return ['/bin/sh', '-c', `SQLCMDPASSWORD="$MSSQL_SA_PASSWORD" PATH="$PATH:${path.posix.dirname(DATABASE.sqlcmd)}" sqlcmd ${flags} -Q "SET NOCOUNT ON; ${sql}"`];
}

/** Run `sql` in `database` on the server; its rows, each a list of columns. Refused with sqlcmd's message when it fails. */
export async function query(server: DatabaseServer, database: string, sql: string, timeoutMs = QUERY_TIMEOUT_MS): Promise<string[][]> {
  const { pod, container } = serverPod();
  const result = await server.cluster.exec(server.namespace, pod, container, sqlcmdInServer(sql, database), timeoutMs);
  if (!result.ok) {
    const said = (result.stderr || result.stdout).trim().split('\n').slice(-3).join(' ');
    throw new RefusedError(`sqlcmd in Pod ${server.namespace}/${pod} (database ${database}) failed: ${said || result.message}`);
  }
  return result.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => line.split(COLUMN_SEPARATOR));
}

/** The migration history table of `database`, newest first (1.3 step 5: in descending order of migration id). */
export async function appliedMigrations(server: DatabaseServer, database: string): Promise<string[]> {
  const rows = await query(server, database, `SELECT MigrationId FROM ${DATABASE.migrations.historyTable} ORDER BY MigrationId DESC`);
  return rows.map(([id]) => id!);
}

/** The tables of `database`, `<schema>.<table>` in order. */
export async function tables(server: DatabaseServer, database: string): Promise<string[]> {
  const rows = await query(server, database, 'SELECT TABLE_SCHEMA, TABLE_NAME FROM INFORMATION_SCHEMA.TABLES ORDER BY TABLE_SCHEMA, TABLE_NAME');
  return rows.map(([schema, table]) => `${schema}.${table}`);
}

/** One full backup on the backup volume. */
export interface Backup {
  /** The file in the server's backup volume. */
  readonly file: string;
  /** When the backup that the file holds finished (the server's clock, ISO 8601). */
  readonly finishedAt: string;
}

/**
 * `database`'s own full backups still on the volume, newest first, from the server's backup
 * history (msdb): a slot's file holds its newest backup (the daily job overwrites it), and a
 * file that is not this database's (`<database>-day<N>.bak`) is never listed.
 */
export async function backupsOf(server: DatabaseServer, database: string): Promise<Backup[]> {
  const rows = await query(
    server,
    'msdb',
    'SELECT m.physical_device_name, CONVERT(varchar(19), b.backup_finish_date, 126) FROM dbo.backupset b ' +
      `JOIN dbo.backupmediafamily m ON m.media_set_id = b.media_set_id WHERE b.database_name = N'${database}' AND b.type = 'D' ` +
      'ORDER BY b.backup_finish_date DESC',
  );
  const seen = new Set<string>();
  const backups: Backup[] = [];
  for (const [file, finishedAt] of rows) {
    if (file === undefined || seen.has(file) || !isBackupFileOf(database, file)) continue;
    seen.add(file);
    backups.push({ file, finishedAt: finishedAt ?? '' });
  }
  return backups;
}

/** Whether a backup file is readable and whole (RESTORE VERIFYONLY with its checksums); refused with the server's message when it is not. */
export async function verifyBackup(server: DatabaseServer, file: string): Promise<void> {
  if (!/^[-/A-Za-z0-9_.]+$/.test(file)) throw new RefusedError(`${file} is not a backup file name the platform writes`);
  await query(server, 'master', `RESTORE VERIFYONLY FROM DISK = N'${file}' WITH CHECKSUM`);
}

/**
 * Restore `database` from `file` with replacement (7.2): other sessions ended first (single
 * user), the database open to all again after. Refused before anything is done when the file
 * is not one of the database's own backups.
 */
export async function restore(server: DatabaseServer, database: string, file: string, timeoutSeconds: number): Promise<void> {
  if (!isBackupFileOf(database, file)) throw new RefusedError(`${file} is not a backup of database ${database}: a restore takes only the database's own backups`);
  await query(
    server,
    'master',
    `ALTER DATABASE [${database}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; RESTORE DATABASE [${database}] FROM DISK = N'${file}' WITH REPLACE; ALTER DATABASE [${database}] SET MULTI_USER`,
    timeoutSeconds * 1000,
  );
}

/** A Job's condition of `type` when it holds (status True): how it ended. */
export function jobCondition(job: LiveObject, type: 'Complete' | 'Failed'): { message?: string; reason?: string } | undefined {
  return (job['status']?.conditions ?? []).find((c: { type?: string; status?: string }) => c.type === type && c.status === 'True');
}

/** A Job the live operations created: its name (the API server's) and uid, whose pods carry it. */
export interface CreatedJob {
  readonly name: string;
  readonly uid: string;
}

/**
 * Run the application's migrations image as a Job (1.5 database level; 7.2 data recovery):
 * the image the application's last sync ran (the Sync hook Job's pod template: the same
 * image, pull secret, connection string and restrictions), with the tool's arguments for one
 * migration (DATABASE.migrations.updateTo), or none: every pending migration applied, as the
 * hook does. Its name is made by the API server (`<application>-db-xxxxx`), so it never
 * replaces anything; it is kept a day for its logs (ttlSecondsAfterFinished).
 */
export async function startMigrationJob(cluster: ClusterConnection, application: string, namespace: string, migration: string | undefined, createdBy: string): Promise<CreatedJob> {
  const hookName = migrationsName(application);
  const hook = await cluster.get('batch/v1', 'Job', hookName, namespace);
  if (hook === undefined) {
    throw new RefusedError(`Job ${namespace}/${hookName} does not exist: the migrations image is the one the application's last sync ran (its Sync hook Job, kept until the next sync); sync the application first`);
  }
  const template = hook['spec']?.template ?? {};
  const spec = structuredClone(template.spec ?? {});
  const container = (spec.containers ?? []).find((c: { name?: string }) => c.name === MIGRATIONS_CONTAINER);
  if (container === undefined) throw new RefusedError(`Job ${namespace}/${hookName} has no container ${MIGRATIONS_CONTAINER}`);
  if (migration === undefined) delete container.args;
  else container.args = DATABASE.migrations.updateTo(migration);
  const { label, namePrefix } = databaseMigrationJob(application);
  const labels = { app: label };
  const created = await cluster.create({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: '', generateName: namePrefix, namespace, labels, annotations: { [CREATED_BY_ANNOTATION]: createdBy } },
    spec: {
      backoffLimit: DATABASE.migrations.backoffLimit,
      activeDeadlineSeconds: WAITS_SECONDS.controllerSync,
      ttlSecondsAfterFinished: MIGRATION_JOB_KEPT_SECONDS,
      template: { metadata: { labels }, spec },
    },
  });
  return { name: created.metadata.name, uid: String(created.metadata.uid) };
}

/** How a Job's pod ended: each container's exit code, reason and message (the tool's last words). */
function exitOf(pod: LiveObject): string {
  const ended = ((pod['status']?.containerStatuses ?? []) as { name: string; state?: { terminated?: { exitCode?: number; reason?: string; message?: string } } }[])
    .filter((container) => container.state?.terminated !== undefined)
    .map(({ name, state }) => `${name} exited ${state!.terminated!.exitCode ?? '?'}${state!.terminated!.reason ? ` (${state!.terminated!.reason})` : ''}${state!.terminated!.message ? `: ${state!.terminated!.message.trim()}` : ''}`);
  return ended.length > 0 ? ended.join('; ') : podState(pod).reason || String(pod['status']?.phase ?? 'Unknown');
}

/** Wait until a Job completes; the reason names its failed pods' states when it fails. */
export async function waitForJob(cluster: ClusterConnection, namespace: string, job: CreatedJob, timeoutSeconds: number, progress: (line: string) => void): Promise<WaitResult> {
  const { name, uid } = job;
  return waitFor({
    what: `Job ${namespace}/${name}`,
    timeoutSeconds,
    progress,
    check: async () => {
      const job = await cluster.get('batch/v1', 'Job', name, namespace);
      if (job === undefined) return { done: false, state: 'does not exist', failed: `Job ${namespace}/${name} was deleted` };
      if (jobCondition(job, 'Complete') !== undefined) return { done: true, state: 'Complete' };
      const failed = jobCondition(job, 'Failed');
      if (failed !== undefined) {
        const pods = (await cluster.list('v1', 'Pod', namespace, labelSelector({ 'batch.kubernetes.io/controller-uid': uid }))).map((pod) => `Pod ${pod.metadata.name}: ${exitOf(pod)}`);
        return { done: false, state: 'Failed', failed: [`Job ${namespace}/${name} failed: ${failed.reason ?? ''} ${failed.message ?? ''}`.trim(), ...pods].join('; ') };
      }
      const status = job['status'] ?? {};
      return { done: false, state: `${Number(status.active ?? 0)} active, ${Number(status.failed ?? 0)} failed` };
    },
  });
}
