#!/usr/bin/env node
// The e2e's stand-in of sqlcmd inside the SQL Server container (no SQL Server runs on
// loopback): kwok maps `kubectl exec mssql-0` to a local process whose PATH finds this
// program as `sqlcmd` (e2e/live-containers.ts). It answers the statements the live
// operations send (src/cluster/database.ts) from the server's state, a JSON file
// ($SQL_SERVER_STATE, e2e/sql-server-state.ts), and refuses as SQL Server and sqlcmd do:
// a wrong password ("Login failed", 18456), a database that does not exist (4060), a
// backup file that does not exist (3201), a statement it does not know; an address other than
// localhost that $SQL_SERVER_NETWORK does not list (the login times out). Like SQL Server,
// RESTORE ... WITH REPLACE takes a backup of another database: choosing the right file is
// the caller's job. RESTORE VERIFYONLY checks that the file exists. Exit codes as sqlcmd -b:
// 0, or 1 on an error.
import * as fs from 'node:fs';

const statePath = process.env.SQL_SERVER_STATE;
const fail = (message) => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};
if (statePath === undefined) fail('stand-in sqlcmd: SQL_SERVER_STATE is not set');

// sqlcmd's options: each flag with its value, -C and -b alone.
const options = {};
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const flag = args[i];
  if (flag === '-C' || flag === '-b' || flag === '-W') options[flag] = true;
  else if (/^-[SUPhsdQl]$/.test(flag)) options[flag] = args[++i];
  else fail(`Sqlcmd: '${flag}': Unknown Option. Enter '-?' for help.`);
}
const loginTimeout = () => fail(`Sqlcmd: Error: Microsoft ODBC Driver 18 for SQL Server : Login timeout expired (server ${options['-S']}).`);
if (!fs.existsSync(statePath)) loginTimeout();
const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
// Inside the server's pod (kubectl exec) the server is localhost; a client elsewhere (the smoke
// hook's database step) reaches it only at an address of $SQL_SERVER_NETWORK, where the logins
// the setup hook made are listed with their passwords.
const network = process.env.SQL_SERVER_NETWORK === undefined ? { addresses: [], logins: {} } : JSON.parse(fs.readFileSync(process.env.SQL_SERVER_NETWORK, 'utf8'));
const server = String(options['-S'] ?? '').replace(/^tcp:/i, '').toLowerCase();
if (server !== 'localhost' && !network.addresses.includes(server)) loginTimeout();
// The password as sqlcmd takes it: -P, else the SQLCMDPASSWORD variable.
const password = options['-P'] ?? process.env.SQLCMDPASSWORD;
const known = options['-U'] === 'sa' ? state.password : network.logins[options['-U']]?.password;
if (known === undefined || password !== known) fail(`Msg 18456, Level 14, State 1, Server mssql-0, Line 1\nLogin failed for user '${options['-U']}'.`);
const database = options['-d'] ?? 'master';
const system = ['master', 'msdb'];
if (!system.includes(database) && state.databases[database] === undefined) {
  fail(`Msg 4060, Level 11, State 1, Server mssql-0, Line 1\nCannot open database "${database}" requested by the login. The login failed.`);
}
// A login the setup hook made is a user of its own database only (master and msdb admit every login as guest).
const own = options['-U'] === 'sa' ? undefined : network.logins[options['-U']]?.database;
if (own !== undefined && !system.includes(database) && database !== own) {
  fail(`Msg 916, Level 14, State 2, Server mssql-0, Line 1\nThe server principal "${options['-U']}" is not able to access the database "${database}" under the current security context.`);
}
const separator = options['-s'] ?? ' ';
const print = (rows) => {
  // -h -1: no header; SET NOCOUNT ON: no row count.
  for (const row of rows) process.stdout.write(`${row.join(separator)}\n`);
};
const tablesOf = (name) => {
  const catalog = state.catalog[name] ?? [];
  const applied = state.databases[name].migrations;
  return ['dbo.__EFMigrationsHistory', ...catalog.filter((m) => applied.includes(m.id)).flatMap((m) => m.tables)].sort();
};

const query = (options['-Q'] ?? '').replace(/^SET NOCOUNT ON;\s*/, '').trim();
let match;
if (/^SELECT 1( AS \w+)?$/.test(query)) {
  print([['1']]);
} else if (/^SELECT MigrationId FROM __EFMigrationsHistory ORDER BY MigrationId DESC$/.test(query)) {
  if (system.includes(database)) fail("Msg 208, Level 16, State 1, Server mssql-0, Line 1\nInvalid object name '__EFMigrationsHistory'.");
  print([...state.databases[database].migrations].sort().reverse().map((id) => [id]));
} else if (/^SELECT TABLE_SCHEMA, TABLE_NAME FROM INFORMATION_SCHEMA\.TABLES ORDER BY TABLE_SCHEMA, TABLE_NAME$/.test(query)) {
  print(system.includes(database) ? [] : tablesOf(database).map((table) => table.split('.')));
} else if ((match = /^SELECT m\.physical_device_name, CONVERT\(varchar\(19\), b\.backup_finish_date, 126\) FROM dbo\.backupset b JOIN dbo\.backupmediafamily m ON m\.media_set_id = b\.media_set_id WHERE b\.database_name = N'([^']+)' AND b\.type = 'D' ORDER BY b\.backup_finish_date DESC$/.exec(query))) {
  if (database !== 'msdb') fail("Msg 208, Level 16, State 1, Server mssql-0, Line 1\nInvalid object name 'dbo.backupset'.");
  const backups = state.backups.filter((backup) => backup.database === match[1]).sort((a, b) => (a.finishedAt < b.finishedAt ? 1 : -1));
  print(backups.map((backup) => [backup.file, backup.finishedAt]));
} else if ((match = /^RESTORE VERIFYONLY FROM DISK = N'([^']+)' WITH CHECKSUM$/.exec(query))) {
  if (!state.backups.some((backup) => backup.file === match[1])) fail(`Msg 3201, Level 16, State 2, Server mssql-0, Line 1\nCannot open backup device '${match[1]}'. Operating system error 2(The system cannot find the file specified.).\nMsg 3013, Level 16, State 1, Server mssql-0, Line 1\nVERIFY DATABASE is terminating abnormally.`);
  process.stdout.write('The backup set on file 1 is valid.\n');
} else if ((match = /^ALTER DATABASE \[([^\]]+)\] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; RESTORE DATABASE \[([^\]]+)\] FROM DISK = N'([^']+)' WITH REPLACE; ALTER DATABASE \[([^\]]+)\] SET MULTI_USER$/.exec(query))) {
  const [, single, target, file, multi] = match;
  if (single !== target || multi !== target) fail('stand-in sqlcmd: the restore names three databases');
  if (state.databases[target] === undefined) fail(`Msg 5011, Level 14, State 5, Server mssql-0, Line 1\nUser does not have permission to alter database '${target}', the database does not exist, or the database is not in a state that allows access checks.`);
  // The newest backup written to the file is what it holds (the daily job overwrites its slot).
  const held = state.backups.filter((backup) => backup.file === file).sort((a, b) => (a.finishedAt < b.finishedAt ? 1 : -1))[0];
  if (held === undefined) fail(`Msg 3201, Level 16, State 2, Server mssql-0, Line 1\nCannot open backup device '${file}'. Operating system error 2(The system cannot find the file specified.).\nMsg 3013, Level 16, State 1, Server mssql-0, Line 1\nRESTORE DATABASE is terminating abnormally.`);
  state.databases[target] = { migrations: [...held.migrations] };
  state.restores = [...(state.restores ?? []), { database: target, file }];
  fs.writeFileSync(statePath, `${JSON.stringify(state, null, 2)}\n`);
  process.stdout.write(`RESTORE DATABASE successfully processed ${held.migrations.length * 100 + 300} pages.\n`);
} else {
  fail(`stand-in sqlcmd: a statement it does not play: ${query}`);
}
