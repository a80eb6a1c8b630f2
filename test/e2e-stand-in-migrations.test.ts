import { describe, expect, it } from 'vitest';
import { DATABASE_SETUP_NAME } from '../src/constructs/database-setup';
import { DATABASE } from '../src/contract/choices';
import { PORTS } from '../src/contract/contract';
import { databaseLoginSecret } from '../src/contract/naming';
import { connectionString } from '../src/secrets/catalog';
import { listensOn, serviceHostNames, serviceOfHost } from '../e2e/cluster-dns';
import { networkError, parseConnectionString, setupLogins } from '../e2e/stand-in-migrations';
import { committedObjects, projectEnvironments } from './support';

// The stand-in of the migrations image's SQL client (e2e/stand-in-migrations.ts): it must read
// the connection strings the platform writes as SqlClient does, and find the logins the
// setup hook the platform renders creates.

const local = projectEnvironments().local!;

describe('the stand-in migrations image reads a connection string', () => {
  it('as the platform writes it for each application of local', () => {
    for (const app of local.applications) {
      const parsed = parseConnectionString(connectionString(local, app, 'p@ss=word'));
      expect(parsed, app.name).toEqual({
        ok: true,
        connection: { host: `${DATABASE.serverName}.${local.database.namespace}.svc.cluster.local`, port: PORTS.database, database: app.database.name, user: app.name, password: 'p@ss=word' },
      });
    }
  });

  it('with SqlClient\'s synonyms, any case, and 1433 without a port', () => {
    expect(parseConnectionString('data source=mssql.database;INITIAL CATALOG=shop;uid=shop;pwd=x;')).toEqual({
      ok: true,
      connection: { host: 'mssql.database', port: 1433, database: 'shop', user: 'shop', password: 'x' },
    });
  });

  it('refuses what the client refuses: a pair without "=", no server, a port that is no number', () => {
    expect(parseConnectionString('Server=a;Database')).toEqual({ ok: false, message: 'Format of the initialization string does not conform to specification starting at index 9.' });
    expect(parseConnectionString('Database=a;User ID=b')).toMatchObject({ ok: false, message: expect.stringContaining('names no server') });
    expect(parseConnectionString('Server=tcp:a,14x3')).toMatchObject({ ok: false, message: expect.stringContaining('port "14x3" is not a number') });
  });
});

describe('a host as the cluster\'s DNS resolves it from a pod', () => {
  it('is a Service of the pod\'s namespace, of a named namespace, or nothing of the cluster', () => {
    expect(serviceOfHost('mssql', 'webapp')).toEqual({ name: 'mssql', namespace: 'webapp' });
    expect(serviceOfHost('mssql.database', 'webapp')).toEqual({ name: 'mssql', namespace: 'database' });
    expect(serviceOfHost('mssql.database.svc', 'webapp')).toEqual({ name: 'mssql', namespace: 'database' });
    expect(serviceOfHost('MSSQL.database.svc.cluster.local.', 'webapp')).toEqual({ name: 'mssql', namespace: 'database' });
    expect(serviceOfHost('mssql.database.svc.example.org', 'webapp')).toBeUndefined();
    expect(serviceOfHost('db.example.org', 'webapp')).toBeUndefined();
  });

  it('is resolved back from every name the cluster gives a Service, and a port by number or name', () => {
    expect(serviceHostNames('mssql', 'database', 'webapp')).toEqual(['mssql.database', 'mssql.database.svc', 'mssql.database.svc.cluster.local']);
    expect(serviceHostNames('mssql', 'database', 'database')).toContain('mssql');
    for (const host of serviceHostNames('mssql', 'database', 'database')) expect(serviceOfHost(host, 'database'), host).toEqual({ name: 'mssql', namespace: 'database' });
    expect(listensOn([{ name: 'tds', containerPort: 1433 }], 1433)).toBe(true);
    expect(listensOn([{ name: 'tds', containerPort: 1433 }], 'tds')).toBe(true);
    expect(listensOn([{ name: 'tds', containerPort: 1433 }], 1434)).toBe(false);
    expect(listensOn(undefined, 1433)).toBe(false);
  });

  it('that nothing answers at fails as SqlClient\'s network error, naming the address and why', () => {
    expect(networkError({ host: 'h', port: 1433, database: '', user: '', password: '' }, 'no Service')).toMatch(/^A network-related or instance-specific error .*error: 40 - Could not open a connection to SQL Server: h,1433: no Service\)$/);
  });
});

describe('the logins of the setup hook', () => {
  it('are every application\'s of local, with its database and the password Secret the platform renders', () => {
    const job = committedObjects('local').find((object) => object.kind === 'Job' && object.metadata.namespace === local.database.namespace && object.metadata.name === DATABASE_SETUP_NAME);
    expect(job).toBeDefined();
    expect(setupLogins(job!)).toEqual(local.applications.map((app) => ({ login: app.name, database: app.database.name, password: { name: databaseLoginSecret(app.name), key: 'password' } })));
  });

  it('are none for a Job that creates none', () => {
    expect(setupLogins({ spec: { template: { spec: { containers: [{ env: [{ name: 'SERVER_SQL_0', value: 'SELECT 1' }] }] } } } })).toEqual([]);
    expect(setupLogins({})).toEqual([]);
  });
});
