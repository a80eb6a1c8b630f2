import { PORTS } from '../contract/contract';
import { DEFAULT_BOOTSTRAP_SERVERS, SMOKE_VARIABLES } from '../contract/naming';
import { UsageError } from '../base/errors';
import type { SmokeSettings } from './contract';
import type { DatabaseSettings } from './database';

/** An `http(s)://` origin (with an optional path prefix); a UsageError otherwise. */
export function parseBaseUrl(text: string | undefined, option = '--base-url'): string {
  if (text === undefined) throw new UsageError(`${option} <url> is required`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${option} "${text}" is not an absolute URL such as https://app.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${option} "${text}" must start with http:// or https://`);
  }
  return text.replace(/\/+$/, '');
}

/** The port in `text`, or a problem naming the variable. */
export function parsePort(text: string, name: string, problems: string[]): number | undefined {
  const port = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    problems.push(`${name} "${text}" must be a port number from 1 to 65535`);
    return undefined;
  }
  return port;
}

/** HTTP credentials from SMOKE_USERNAME and SMOKE_PASSWORD (also used by verify). */
export function credentialsFromEnv(env: NodeJS.ProcessEnv, problems: string[]): { username: string; password: string } {
  const username = env[SMOKE_VARIABLES.username] ?? '';
  const password = env[SMOKE_VARIABLES.password] ?? '';
  if (username === '') problems.push(`${SMOKE_VARIABLES.username} is not set (the login user of 4.1 step 2)`);
  if (password === '') problems.push(`${SMOKE_VARIABLES.password} is not set (the login password of 4.1 step 2)`);
  return { username, password };
}

/**
 * The database step's settings (4.1 step 4, 4.2 "database connectivity tool") from DATABASE_*;
 * `required` reads a variable that must be set, adding a problem otherwise.
 */
function databaseFromEnv(env: NodeJS.ProcessEnv, problems: string[], required: (name: string, what: string) => string): DatabaseSettings {
  const host = required(SMOKE_VARIABLES.databaseHost, 'the SQL Server host of 4.1 step 4');
  const user = required(SMOKE_VARIABLES.databaseUser, 'the SQL Server login of 4.1 step 4');
  const password = required(SMOKE_VARIABLES.databasePassword, 'the SQL Server password of 4.1 step 4');
  const port = parsePort(env[SMOKE_VARIABLES.databasePort] || String(PORTS.database), SMOKE_VARIABLES.databasePort, problems);
  const trust = env[SMOKE_VARIABLES.databaseTrustServerCertificate] || 'true';
  if (trust !== 'true' && trust !== 'false') {
    problems.push(`${SMOKE_VARIABLES.databaseTrustServerCertificate} "${trust}" must be true or false`);
  }
  const name = env[SMOKE_VARIABLES.databaseName];
  return { host, port: port ?? PORTS.database, user, password, ...(name ? { database: name } : {}), trustServerCertificate: trust === 'true' };
}

/** The variables of the database step that must all be set for it to run. */
const DATABASE_REQUIRED = [SMOKE_VARIABLES.databaseHost, SMOKE_VARIABLES.databaseUser, SMOKE_VARIABLES.databasePassword] as const;

/**
 * The database step's settings for verification, which runs it when it is given: undefined
 * when none of DATABASE_HOST, DATABASE_USER, DATABASE_PASSWORD is set; a problem for each
 * missing one when some are.
 */
export function optionalDatabaseFromEnv(env: NodeJS.ProcessEnv, problems: string[]): DatabaseSettings | undefined {
  if (DATABASE_REQUIRED.every((name) => (env[name] ?? '') === '')) return undefined;
  const required = (name: string, what: string): string => {
    const value = env[name] ?? '';
    if (value === '') problems.push(`${name} is not set (${what}; set all of ${DATABASE_REQUIRED.join(', ')} or none)`);
    return value;
  };
  return databaseFromEnv(env, problems, required);
}

/**
 * HTTP credentials for verification, which calls the authenticated status only with them:
 * undefined when neither SMOKE_USERNAME nor SMOKE_PASSWORD is set; a problem when one is.
 */
export function optionalCredentialsFromEnv(env: NodeJS.ProcessEnv, problems: string[]): { username: string; password: string } | undefined {
  if ((env[SMOKE_VARIABLES.username] ?? '') === '' && (env[SMOKE_VARIABLES.password] ?? '') === '') return undefined;
  return credentialsFromEnv(env, problems);
}

/** Every setting of the smoke test; one UsageError listing every missing or bad variable. */
export function smokeSettingsFromEnv(baseUrl: string, env: NodeJS.ProcessEnv): SmokeSettings {
  const problems: string[] = [];
  const required = (name: string, what: string): string => {
    const value = env[name] ?? '';
    if (value === '') problems.push(`${name} is not set (${what})`);
    return value;
  };
  const { username, password } = credentialsFromEnv(env, problems);
  const database = databaseFromEnv(env, problems, required);
  const bootstrapServers = (env[SMOKE_VARIABLES.bootstrapServers] || DEFAULT_BOOTSTRAP_SERVERS).split(',').map((s) => s.trim());
  for (const server of bootstrapServers) {
    if (!/^[^:\s]+:\d+$/.test(server)) problems.push(`${SMOKE_VARIABLES.bootstrapServers} entry "${server}" must look like host:port`);
  }
  const brokerUser = env[SMOKE_VARIABLES.brokerUsername] ?? '';
  const brokerPassword = env[SMOKE_VARIABLES.brokerPassword] ?? '';
  if ((brokerUser === '') !== (brokerPassword === '')) {
    problems.push(`${SMOKE_VARIABLES.brokerUsername} and ${SMOKE_VARIABLES.brokerPassword} must be set together (SCRAM-SHA-512) or not at all`);
  }
  if (problems.length > 0) throw new UsageError(`cannot run the smoke test:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  return {
    baseUrl,
    username,
    password,
    database,
    broker: {
      bootstrapServers,
      ...(brokerUser === '' ? {} : { sasl: { username: brokerUser, password: brokerPassword } }),
    },
  };
}
