import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqlcmdInServer } from '../src/cluster/database';
import { chooseBackup } from '../src/commands/ops/emergency-restore';
import { isBackupFileOf } from '../src/constructs/database-backup';
import { DATABASE } from '../src/contract/choices';
import { readState, seedState, STAND_IN_MIGRATIONS, updateTo, writeState } from '../e2e/sql-server-state';
import { committedObjects, ROOT, temporaryDirectory } from './support';
import { DATABASE_STEP_CONTAINER } from '../src/constructs/smoke-hook';

// The e2e's SQL Server stand-in (e2e/stand-in-sqlcmd.mjs), run with the very command line the
// live operations send into the server's container (src/cluster/database.ts sqlcmdInServer)
// through /bin/sh, as kwok's exec runs it: it answers from its state and refuses as SQL
// Server and sqlcmd do.

const dir = temporaryDirectory('stand-in-sqlcmd-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const bin = path.join(dir, 'bin');
fs.mkdirSync(bin);
fs.writeFileSync(path.join(bin, 'sqlcmd'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(ROOT, 'e2e', 'stand-in-sqlcmd.mjs')}" "$@"\n`, { mode: 0o755 });
const NOW = Date.parse('2026-11-25T12:00:00Z');

function server(): string {
  const file = path.join(dir, `state-${Math.random().toString(36).slice(2)}.json`);
  writeState(file, seedState('the-password', ['webapp', 'billing'], NOW));
  return file;
}

function sqlcmd(state: string, sql: string, database: string, password = 'the-password') {
  const [shell, flag, script] = sqlcmdInServer(sql, database);
  const run = spawnSync(shell!, [flag!, script!], { encoding: 'utf8', env: { PATH: `${bin}:${process.env.PATH}`, MSSQL_SA_PASSWORD: password, SQL_SERVER_STATE: state } });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const HISTORY = `SELECT MigrationId FROM ${DATABASE.migrations.historyTable} ORDER BY MigrationId DESC`;

describe('the SQL Server stand-in, through the live operations\' sqlcmd command line', () => {
  it('reads the migration history newest first, and the tables the migrations made', () => {
    const state = server();
    expect(sqlcmd(state, HISTORY, 'webapp')).toEqual({ status: 0, stdout: '20261101090000_AddAuditLog\n20261001090000_AddOrders\n20260901090000_Initial\n', stderr: '' });
    expect(sqlcmd(state, 'SELECT TABLE_SCHEMA, TABLE_NAME FROM INFORMATION_SCHEMA.TABLES ORDER BY TABLE_SCHEMA, TABLE_NAME', 'webapp').stdout).toBe(
      'dbo|Accounts\ndbo|AuditLog\ndbo|Orders\ndbo|__EFMigrationsHistory\n',
    );
  });

  it('refuses a wrong password, a database that does not exist and a statement it does not play (exit 1, as sqlcmd -b)', () => {
    const state = server();
    const login = sqlcmd(state, HISTORY, 'webapp', 'wrong');
    expect(login.status).toBe(1);
    expect(login.stderr).toContain("Login failed for user 'sa'.");
    expect(sqlcmd(state, HISTORY, 'nothing').stderr).toContain('Cannot open database "nothing" requested by the login');
    expect(sqlcmd(state, 'DROP TABLE dbo.Orders', 'webapp').stderr).toContain('a statement it does not play');
  });

  it('lists a database\'s own backups from the history, newest first; a restore takes the file\'s newest backup, and refuses a file that does not exist', () => {
    const state = server();
    const backups = readState(state).backups;
    const listing = sqlcmd(
      state,
      "SELECT m.physical_device_name, CONVERT(varchar(19), b.backup_finish_date, 126) FROM dbo.backupset b JOIN dbo.backupmediafamily m ON m.media_set_id = b.media_set_id WHERE b.database_name = N'webapp' AND b.type = 'D' ORDER BY b.backup_finish_date DESC",
      'msdb',
    );
    const webapp = backups.filter((backup) => backup.database === 'webapp');
    expect(listing.stdout).toBe(`${webapp[1]!.file}|${webapp[1]!.finishedAt}\n${webapp[0]!.file}|${webapp[0]!.finishedAt}\n`);
    // The other database's backups are newer: a restore that took the newest of any would take billing's.
    expect(backups.filter((backup) => backup.database === 'billing').every((backup, i) => backup.finishedAt > webapp[i]!.finishedAt)).toBe(true);
    expect(backups.every((backup) => isBackupFileOf(backup.database, backup.file))).toBe(true);

    const restore = (file: string) =>
      sqlcmd(state, `ALTER DATABASE [webapp] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; RESTORE DATABASE [webapp] FROM DISK = N'${file}' WITH REPLACE; ALTER DATABASE [webapp] SET MULTI_USER`, 'master');
    expect(restore(`${DATABASE.backupPath}/webapp-nothing.bak`).stderr).toContain('Cannot open backup device');
    const verify = (file: string) => sqlcmd(state, `RESTORE VERIFYONLY FROM DISK = N'${file}' WITH CHECKSUM`, 'master');
    expect(verify(webapp[1]!.file)).toMatchObject({ status: 0, stdout: 'The backup set on file 1 is valid.\n' });
    expect(verify(`${DATABASE.backupPath}/webapp-nothing.bak`).status).toBe(1);
    expect(restore(webapp[1]!.file).status).toBe(0);
    expect(readState(state).databases['webapp']!.migrations).toEqual(STAND_IN_MIGRATIONS.slice(0, 2).map((m) => m.id));
    expect(readState(state).databases['billing']!.migrations).toEqual(STAND_IN_MIGRATIONS.map((m) => m.id));
  });
});

describe('the SQL Server stand-in, through the smoke hook\'s database step', () => {
  // The step's rendered script, its image's sqlcmd being the stand-in (as the e2e harness runs it).
  const step = committedObjects('local')
    .find((o) => o.kind === 'Job' && o.metadata.name.endsWith('-smoke'))!
    .spec.template.spec.initContainers.find((c: { name: string }) => c.name === DATABASE_STEP_CONTAINER);
  const script = String(step.command.at(-1)).replaceAll(DATABASE.sqlcmd, path.join(bin, 'sqlcmd'));
  const network = path.join(dir, 'network.json');
  fs.writeFileSync(network, JSON.stringify({ addresses: ['mssql.database.svc.cluster.local,1433'], logins: { webapp: { password: 'login-password', database: 'webapp' } } }));
  const run = (env: Record<string, string>) => {
    const result = spawnSync('/bin/sh', ['-c', script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, SQL_SERVER_STATE: server(), SQL_SERVER_NETWORK: network, DATABASE_HOST: 'mssql.database.svc.cluster.local', DATABASE_PORT: '1433', DATABASE_USER: 'webapp', DATABASE_PASSWORD: 'login-password', ...env },
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
  };

  it('answers SELECT 1 to a login the network file lists, at an address it lists', () => {
    expect(run({})).toEqual({ status: 0, output: 'smoke: database passed' });
  });

  it('refuses another password (18456) and an address nothing routes to the server (login timeout)', () => {
    expect(run({ DATABASE_PASSWORD: 'stale' }).output).toMatch(/Login failed for user 'webapp'\.\nsmoke: database failed$/);
    expect(run({ DATABASE_PORT: '1434' }).output).toMatch(/Login timeout expired \(server mssql\.database\.svc\.cluster\.local,1434\)\.\nsmoke: database failed$/);
    expect(run({ DATABASE_USER: 'sa', DATABASE_PASSWORD: 'the-password', DATABASE_HOST: 'localhost' }).status).toBe(1);
  });

  it('admits a login to its own database, not to another login\'s (916)', () => {
    const connect = (database: string) => {
      const result = spawnSync(path.join(bin, 'sqlcmd'), ['-S', 'mssql.database.svc.cluster.local,1433', '-U', 'webapp', '-C', '-b', '-d', database, '-Q', 'SELECT 1'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, SQL_SERVER_STATE: server(), SQL_SERVER_NETWORK: network, SQLCMDPASSWORD: 'login-password' },
      });
      return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
    };
    expect(connect('webapp')).toEqual({ status: 0, output: '1' });
    expect(connect('billing')).toEqual({ status: 1, output: expect.stringContaining('The server principal "webapp" is not able to access the database "billing"') });
  });
});

describe('the stand-in migrations image', () => {
  it('updates a database to a named migration, reverting the newer ones, and refuses a name it does not carry', () => {
    const state = seedState('p', ['webapp'], NOW);
    expect(updateTo(state, 'webapp', '20260901090000_Initial')).toEqual({ ok: true, message: 'Reverted 20261101090000_AddAuditLog, 20261001090000_AddOrders. Done.' });
    expect(state.databases['webapp']!.migrations).toEqual(['20260901090000_Initial']);
    expect(updateTo(state, 'webapp', '20261001090000_AddOrders').ok).toBe(true);
    expect(state.databases['webapp']!.migrations).toEqual(['20260901090000_Initial', '20261001090000_AddOrders']);
    expect(updateTo(state, 'webapp', '20990101000000_Later')).toEqual({ ok: false, message: "No migration was found with the name '20990101000000_Later'." });
  });

  it('applies every migration of the image to a database the Sync hook has not migrated, then none again', () => {
    const state = seedState('p', ['webapp'], NOW, false);
    const ids = STAND_IN_MIGRATIONS.map((migration) => migration.id);
    expect(state.databases['webapp']!.migrations).toEqual([]);
    expect(updateTo(state, 'webapp', ids.at(-1)!)).toEqual({ ok: true, message: `Applied ${ids.join(', ')}. Done.` });
    expect(state.databases['webapp']!.migrations).toEqual(ids);
    expect(updateTo(state, 'webapp', ids.at(-1)!)).toEqual({ ok: true, message: 'No migrations were applied. The database is already up to date. Done.' });
  });
});

describe('the backup a restore takes', () => {
  const backups = [
    { file: `${DATABASE.backupPath}/webapp-day3.bak`, finishedAt: '2026-11-24T02:00:00' },
    { file: `${DATABASE.backupPath}/webapp-day2.bak`, finishedAt: '2026-11-23T02:00:00' },
  ];
  it('is the newest by default, or the one named by path or file name; never one that is not listed', () => {
    expect(chooseBackup('webapp', backups, undefined)).toBe(backups[0]);
    expect(chooseBackup('webapp', backups, 'webapp-day2.bak')).toBe(backups[1]);
    expect(chooseBackup('webapp', backups, backups[1]!.file)).toBe(backups[1]);
    expect(() => chooseBackup('webapp', backups, 'billing-day3.bak')).toThrow(/--backup billing-day3.bak is not one of database webapp's backups/);
    expect(() => chooseBackup('webapp', [], undefined)).toThrow(/database webapp has no backup on the backup volume/);
  });

  it('is always the database\'s own file', () => {
    expect(isBackupFileOf('webapp', `${DATABASE.backupPath}/webapp-day3.bak`)).toBe(true);
    expect(isBackupFileOf('webapp', `${DATABASE.backupPath}/webapp-archive-day3.bak`)).toBe(false);
    expect(isBackupFileOf('web', `${DATABASE.backupPath}/webapp-day3.bak`)).toBe(false);
    expect(isBackupFileOf('webapp', `/tmp/webapp-day3.bak`)).toBe(false);
  });
});
