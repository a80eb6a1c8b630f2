import { PORTS } from '../src/contract/contract';

// What the migrations image does before it migrates anything: read DATABASE_CONNECTION_STRING
// and log in to SQL Server with it, as Microsoft.Data.SqlClient (EF Core's provider) does. The
// harness plays the image on loopback (e2e/live-containers.ts), so a connection string that
// names another server, port or database, or a password the login does not have, fails the
// Job with the error the client would print, and so the sync.

/**
 * The keywords of a SqlClient connection string the image reads, each with its synonyms
 * (Microsoft.Data.SqlClient `DbConnectionStringKeywords` and `DbConnectionStringSynonyms`);
 * keywords are case-insensitive.
 */
const KEYWORDS = {
  server: ['data source', 'server', 'address', 'addr', 'network address'],
  database: ['initial catalog', 'database'],
  user: ['user id', 'uid', 'user'],
  password: ['password', 'pwd'],
} as const;

/** A connection string's server, database and login, as the client reads it. */
export interface SqlConnection {
  /** The host the client connects to, without the `tcp:` prefix. */
  readonly host: string;
  /** The port after the comma, 1433 without one. */
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string;
}

/**
 * Reads a connection string: `;`-separated `keyword=value` pairs. What the client would refuse
 * (a pair without `=`, a value missing for one of KEYWORDS) is the error it would print.
 */
export function parseConnectionString(text: string): { ok: true; connection: SqlConnection } | { ok: false; message: string } {
  const values = new Map<string, string>();
  for (const pair of text.split(';')) {
    if (pair.trim() === '') continue;
    const equals = pair.indexOf('=');
    if (equals < 0) return { ok: false, message: `Format of the initialization string does not conform to specification starting at index ${text.indexOf(pair)}.` };
    values.set(pair.slice(0, equals).trim().toLowerCase(), pair.slice(equals + 1).trim());
  }
  const read = (keyword: keyof typeof KEYWORDS) => KEYWORDS[keyword].map((name) => values.get(name)).find((value) => value !== undefined);
  const server = read('server');
  if (server === undefined || server === '') return { ok: false, message: 'The ConnectionString property has not been initialized: it names no server (Server, Data Source).' };
  const [host, port] = server.replace(/^tcp:/i, '').split(',', 2).map((part) => part.trim());
  const portNumber = port === undefined ? PORTS.database : Number(port);
  if (!Number.isInteger(portNumber) || portNumber <= 0) return { ok: false, message: `A network-related or instance-specific error occurred while establishing a connection to SQL Server: port "${port}" is not a number.` };
  return {
    ok: true,
    connection: { host: host ?? '', port: portNumber, database: read('database') ?? '', user: read('user') ?? '', password: read('password') ?? '' },
  };
}

/** The network error SqlClient prints when nothing answers at the server's address. */
export function networkError(connection: SqlConnection, why: string): string {
  return `A network-related or instance-specific error occurred while establishing a connection to SQL Server. The server was not found or was not accessible. (provider: TCP Provider, error: 40 - Could not open a connection to SQL Server: ${connection.host},${connection.port}: ${why})`;
}

/** A login the setup hook creates: its name, the Secret key its password comes from, the database it owns. */
export interface SetupLogin {
  readonly login: string;
  readonly password: { readonly name: string; readonly key: string };
  readonly database: string;
}

/**
 * The logins SQL Server has, as the database chart's setup hook creates them: its Job's
 * `SERVER_SQL_<i>` statement names each login and its database (`CREATE LOGIN [<login>]`,
 * `CREATE DATABASE [<database>]`; the login is made the database's owner) and
 * `LOGIN_PASSWORD_<i>` the Secret key its password comes from (src/constructs/database-setup.ts).
 */
export function setupLogins(job: Readonly<Record<string, any>>): readonly SetupLogin[] {
  const env: Array<{ name: string; value?: string; valueFrom?: any }> = job['spec']?.template?.spec?.containers?.[0]?.env ?? [];
  const logins: SetupLogin[] = [];
  for (const variable of env) {
    const index = /^SERVER_SQL_(\d+)$/.exec(variable.name)?.[1];
    const login = /CREATE LOGIN \[([^\]]+)\]/.exec(variable.value ?? '')?.[1];
    const database = /CREATE DATABASE \[([^\]]+)\]/.exec(variable.value ?? '')?.[1];
    const ref = env.find((other) => other.name === `LOGIN_PASSWORD_${index}`)?.valueFrom?.secretKeyRef;
    if (index !== undefined && login !== undefined && database !== undefined && ref?.name && ref?.key) logins.push({ login, database, password: { name: ref.name, key: ref.key } });
  }
  return logins;
}
