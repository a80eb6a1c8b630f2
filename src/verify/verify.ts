import { TLS_CHECK_TIMEOUT_MS } from '../contract/choices';
import { SMOKE } from '../contract/contract';
import { checkHealth, getWithToken, login } from '../smoke/http';
import { checkDatabase, type DatabaseSettings } from '../smoke/database';
import type { SmokeStep } from '../smoke/runner';
import type { ClusterConnection } from '../cluster/connection';
import type { LiveWorkload } from '../strategies/strategy-values';
import { checkEndpoints } from './endpoints';
import { checkGateway } from './gateway';
import { checkTls, describeCertificate, type TlsCheckOptions } from './tls';

/** What post-deployment validation (4.2) checks in one environment. */
export interface VerifySettings {
  /** `{base_url}` of the application. */
  readonly baseUrl: string;
  /**
   * The login of the authenticated status call.
   * @default - no status call: health only (verification without smoke credentials)
   */
  readonly credentials?: { readonly username: string; readonly password: string };
  /**
   * The database connectivity check (4.2 "database connectivity tool"): the smoke test's
   * SQL Server login and query (src/smoke/database.ts).
   * @default - no database check
   */
  readonly database?: DatabaseSettings;
  readonly tls: TlsCheckOptions;
  /**
   * The cluster and the application's objects in it: the Gateway and its routes, the
   * Service and the workloads that should back it.
   * @default - no cluster checks (a host that cannot reach the cluster's API)
   */
  readonly cluster?: {
    readonly connection: ClusterConnection;
    readonly namespace: string;
    /** The application's Gateway, named after it. */
    readonly gateway: string;
    /** The application's Service. */
    readonly service: string;
    /** Its strategy's workloads, the serving ones marked. */
    readonly workloads: readonly LiveWorkload[];
  };
  /**
   * Call the health and status endpoints and make the TLS handshake.
   * @default true
   */
  readonly http?: boolean;
}

/**
 * 4.2: the Gateway and its HTTPRoutes with their status conditions (the contract's "ingress
 * listed and described"), the health check, the authenticated status call (login, then GET
 * /api/status with the bearer token), and the TLS handshake to the host with the server
 * name set.
 */
export function verifySteps(settings: VerifySettings): SmokeStep[] {
  const { cluster } = settings;
  return [
    ...(cluster === undefined
      ? []
      : [
          {
            name: 'gateway',
            description: `Gateway ${cluster.namespace}/${cluster.gateway} and its HTTPRoutes: Accepted, Programmed, ResolvedRefs`,
            timeoutMs: TLS_CHECK_TIMEOUT_MS,
            run: () => checkGateway(cluster.connection, cluster.namespace, cluster.gateway),
          },
          {
            name: 'endpoints',
            description: `Service ${cluster.namespace}/${cluster.service}: ready endpoints, each a pod of the serving workload`,
            timeoutMs: TLS_CHECK_TIMEOUT_MS,
            run: () => checkEndpoints(cluster.connection, cluster.namespace, cluster.service, cluster.workloads),
          },
        ]),
    ...(settings.http === false ? [] : httpSteps(settings)),
    ...(settings.database === undefined ? [] : [databaseStep(settings.database)]),
  ];
}

/** 4.2 "database connectivity tool": the smoke test's database step (a SQL Server login, then its query). */
function databaseStep(database: DatabaseSettings): SmokeStep {
  return {
    name: 'database',
    description: `SQL Server login and ${SMOKE.databaseQuery}`,
    timeoutMs: SMOKE.stepTimeoutMs.database,
    run: (signal) => checkDatabase(database, SMOKE.stepTimeoutMs.database, signal),
  };
}

/** The health check, the authenticated status call and the TLS handshake. */
function httpSteps(settings: VerifySettings): SmokeStep[] {
  const { credentials } = settings;
  return [
    {
      name: 'health',
      description: `GET ${SMOKE.paths.health}`,
      timeoutMs: SMOKE.stepTimeoutMs.health,
      run: (signal) => checkHealth(settings.baseUrl, signal),
    },
    ...(credentials === undefined
      ? []
      : [
          {
            name: 'status',
            description: `POST ${SMOKE.paths.login}, then GET ${SMOKE.paths.status} with the bearer token`,
            timeoutMs: SMOKE.stepTimeoutMs.login + SMOKE.stepTimeoutMs.declarations,
            run: async (signal: AbortSignal) => {
              const token = await login(settings.baseUrl, credentials.username, credentials.password, signal);
              return getWithToken(settings.baseUrl, SMOKE.paths.status, token, signal);
            },
          },
        ]),
    {
      name: 'tls',
      description: `TLS handshake with ${settings.tls.address ?? settings.tls.host}:${settings.tls.port ?? 443} as ${settings.tls.host}`,
      timeoutMs: TLS_CHECK_TIMEOUT_MS,
      run: async (signal) => describeCertificate(await checkTls(settings.tls, signal)),
    },
  ];
}
