import { SMOKE } from '../contract/contract';
import { type BrokerSettings, checkBroker } from './broker';
import { checkDatabase, type DatabaseSettings } from './database';
import { checkHealth, getWithToken, login } from './http';
import type { SmokeStep } from './runner';

/** What the smoke test needs to know about one deployment. */
export interface SmokeSettings {
  /** `{base_url}` of the application. */
  readonly baseUrl: string;
  readonly username: string;
  readonly password: string;
  readonly database: DatabaseSettings;
  readonly broker: BrokerSettings;
  /**
   * Milliseconds per step, by step name.
   * @default SMOKE.stepTimeoutMs
   */
  readonly timeoutsMs?: Partial<Record<keyof typeof SMOKE.stepTimeoutMs, number>>;
}

/** The checks behind the steps; tests replace some of them. */
export interface SmokeChecks {
  readonly health: typeof checkHealth;
  readonly login: typeof login;
  readonly get: typeof getWithToken;
  readonly database: typeof checkDatabase;
  readonly broker: typeof checkBroker;
}

/** The real clients: fetch, mssql, kafkajs. */
export const REAL_CHECKS: SmokeChecks = { health: checkHealth, login, get: getWithToken, database: checkDatabase, broker: checkBroker };

/** The five steps of 4.1, in order; login hands its token to the declarations step. */
export function contractSteps(settings: SmokeSettings, overrides: Partial<SmokeChecks> = {}): SmokeStep[] {
  const checks = { ...REAL_CHECKS, ...overrides };
  const timeout = (step: keyof typeof SMOKE.stepTimeoutMs) => settings.timeoutsMs?.[step] ?? SMOKE.stepTimeoutMs[step];
  let token: string | undefined;
  return [
    {
      name: 'health',
      description: `GET ${SMOKE.paths.health}`,
      timeoutMs: timeout('health'),
      run: (signal) => checks.health(settings.baseUrl, signal),
    },
    {
      name: 'login',
      description: `POST ${SMOKE.paths.login}`,
      timeoutMs: timeout('login'),
      run: async (signal) => {
        token = await checks.login(settings.baseUrl, settings.username, settings.password, signal);
        return `token received for ${settings.username}`;
      },
    },
    {
      name: 'declarations',
      description: `GET ${SMOKE.paths.declarations} with the bearer token`,
      timeoutMs: timeout('declarations'),
      run: (signal) => checks.get(settings.baseUrl, SMOKE.paths.declarations, token!, signal),
    },
    {
      name: 'database',
      description: `SQL Server login and ${SMOKE.databaseQuery}`,
      timeoutMs: timeout('database'),
      run: (signal) => checks.database(settings.database, timeout('database'), signal),
    },
    {
      name: 'broker',
      description: 'Kafka metadata request',
      timeoutMs: timeout('broker'),
      run: (signal) => checks.broker(settings.broker, timeout('broker'), signal),
    },
  ];
}
