import * as sql from 'mssql';
import { PORTS, SMOKE } from '../contract/contract';

/** How the database step reaches SQL Server (4.1 step 4, 7 "database unreachable"). */
export interface DatabaseSettings {
  readonly host: string;
  /** @default 1433 */
  readonly port?: number;
  readonly user: string;
  readonly password: string;
  /** @default - the login's default database */
  readonly database?: string;
  /**
   * Accept the server's certificate without a trusted chain: SQL Server in a cluster
   * usually presents its own self-signed certificate. The connection is still encrypted.
   * @default true
   */
  readonly trustServerCertificate?: boolean;
}

/** A real SQL Server login with the maintained client (`mssql`, on tedious), then `SELECT 1`. */
export async function checkDatabase(settings: DatabaseSettings, timeoutMs: number, signal: AbortSignal): Promise<string> {
  const port = settings.port ?? PORTS.database;
  const pool = new sql.ConnectionPool({
    server: settings.host,
    port,
    user: settings.user,
    password: settings.password,
    ...(settings.database === undefined ? {} : { database: settings.database }),
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    pool: { min: 0, max: 1 },
    options: { encrypt: true, trustServerCertificate: settings.trustServerCertificate ?? true },
  });
  // A connection error would otherwise surface as an unhandled 'error' event.
  pool.on('error', () => {});
  const close = () => void pool.close().catch(() => {});
  signal.addEventListener('abort', close, { once: true });
  try {
    await pool.connect();
    const result = await pool.request().query(SMOKE.databaseQuery);
    if (result.recordset?.[0]?.ok !== 1) throw new Error(`"${SMOKE.databaseQuery}" did not return 1`);
    return `logged in to ${settings.host}:${port} as ${settings.user}, ${SMOKE.databaseQuery} returned 1`;
  } finally {
    signal.removeEventListener('abort', close);
    await pool.close().catch(() => {});
  }
}
