import * as fs from 'node:fs';
import { backupFile } from '../src/constructs/database-backup';
import { DATABASE } from '../src/contract/choices';

/** A migration of the stand-in migrations image: its id and the tables it creates. */
export interface StandInMigration {
  readonly id: string;
  readonly tables: readonly string[];
}

/**
 * The migrations every application's stand-in migrations image carries, oldest first (ids
 * as EF Core makes them: `<yyyyMMddHHmmss>_<Name>`).
 */
export const STAND_IN_MIGRATIONS: readonly StandInMigration[] = [
  { id: '20260901090000_Initial', tables: ['dbo.Accounts'] },
  { id: '20261001090000_AddOrders', tables: ['dbo.Orders'] },
  { id: '20261101090000_AddAuditLog', tables: ['dbo.AuditLog'] },
];

/** A backup on the stand-in's backup volume: whose, which file, when it finished, the migrations it holds. */
export interface StandInBackup {
  readonly database: string;
  readonly file: string;
  readonly finishedAt: string;
  readonly migrations: readonly string[];
}

/**
 * What the stand-in SQL Server holds (e2e/stand-in-sqlcmd.mjs reads and writes it): the
 * administrator's password, each database's applied migrations, the migrations each
 * application's image carries, and the backup history (msdb).
 */
export interface SqlServerState {
  readonly password: string;
  readonly databases: Record<string, { migrations: string[] }>;
  readonly catalog: Record<string, readonly StandInMigration[]>;
  readonly backups: readonly StandInBackup[];
  readonly restores?: readonly { database: string; file: string }[];
}

const DAY_MS = 86_400_000;

/** The slot file of a backup finished at `at` (the day number modulo DATABASE.backup.keep, as the CronJob names it). */
function slotFile(database: string, at: number): string {
  return backupFile(database, `day${Math.floor(at / DAY_MS) % DATABASE.backup.keep}`);
}

/**
 * The server with every database, and two daily backups of each taken on the days before:
 * two days ago with the first migration, yesterday with the first two. The last database's
 * backups are an hour newer than the others', so a restore that took the newest backup of any
 * database would take another's. `applied`: every migration of the image applied to each
 * database, as the converged platform leaves them; false for a server the Sync hooks have not
 * migrated yet (the e2e cluster's, whose hooks the harness plays).
 */
export function seedState(password: string, databases: readonly string[], now = Date.now(), applied = true): SqlServerState {
  const ids = STAND_IN_MIGRATIONS.map((migration) => migration.id);
  const backups = databases.flatMap((database, index) => {
    const offset = index === databases.length - 1 ? 3_600_000 : 0;
    return [2, 1].map((daysAgo) => {
      const at = now - daysAgo * DAY_MS + offset;
      return { database, file: slotFile(database, at), finishedAt: new Date(at).toISOString().slice(0, 19), migrations: ids.slice(0, 3 - daysAgo) };
    });
  });
  return {
    password,
    databases: Object.fromEntries(databases.map((database) => [database, { migrations: applied ? [...ids] : [] }])),
    catalog: Object.fromEntries(databases.map((database) => [database, STAND_IN_MIGRATIONS])),
    backups,
  };
}

export function readState(file: string): SqlServerState {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as SqlServerState;
}

export function writeState(file: string, state: SqlServerState): void {
  fs.writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * What the migrations image does with `database update <migration>` (DATABASE.migrations.updateTo),
 * or without arguments with its newest migration: the database's applied migrations become
 * the image's up to that one, or it exits 1 when the image has no migration of that name. Its
 * output as the tool would print it: what it reverted, else what it applied.
 */
export function updateTo(state: SqlServerState, database: string, migration: string): { ok: boolean; message: string } {
  const catalog = state.catalog[database];
  const target = state.databases[database];
  if (catalog === undefined || target === undefined) return { ok: false, message: `Cannot open database "${database}" requested by the login.` };
  const index = catalog.findIndex((known) => known.id === migration);
  if (index < 0) return { ok: false, message: `No migration was found with the name '${migration}'.` };
  const wanted = catalog.slice(0, index + 1).map((known) => known.id);
  const reverted = target.migrations.filter((id) => !wanted.includes(id));
  const applied = wanted.filter((id) => !target.migrations.includes(id));
  target.migrations = wanted;
  if (reverted.length > 0) return { ok: true, message: `Reverted ${reverted.sort().reverse().join(', ')}. Done.` };
  return { ok: true, message: applied.length === 0 ? 'No migrations were applied. The database is already up to date. Done.' : `Applied ${applied.join(', ')}. Done.` };
}
