import { TLS_CHECK_TIMEOUT_MS } from '../contract/choices';
import { SMOKE } from '../contract/contract';
import { checkHealth, getWithToken, login } from '../smoke/http';
import type { SmokeStep } from '../smoke/runner';
import { checkGateway, type KubectlOptions } from './gateway';
import { checkTls, describeCertificate, type TlsCheckOptions } from './tls';

/** What post-deployment validation (4.2) checks in one environment. */
export interface VerifySettings {
  /** `{base_url}` of the application. */
  readonly baseUrl: string;
  readonly username: string;
  readonly password: string;
  readonly tls: TlsCheckOptions;
  /**
   * The application's Gateway (namespace and name) and how kubectl reaches the cluster.
   * @default - no Gateway check (a host that cannot reach the cluster's API)
   */
  readonly gateway?: { readonly namespace: string; readonly name: string; readonly kubectl: KubectlOptions };
}

/**
 * 4.2: the Gateway and its HTTPRoutes with their status conditions (the contract's "ingress
 * listed and described"), the health check, the authenticated status call (login, then GET
 * /api/status with the bearer token), and the TLS handshake to the host with the server
 * name set.
 */
export function verifySteps(settings: VerifySettings): SmokeStep[] {
  const { gateway } = settings;
  return [
    ...(gateway === undefined
      ? []
      : [
          {
            name: 'gateway',
            description: `kubectl -n ${gateway.namespace} get gateway ${gateway.name}, httproute: Accepted, Programmed, ResolvedRefs`,
            timeoutMs: TLS_CHECK_TIMEOUT_MS,
            run: (signal: AbortSignal) => checkGateway(gateway.namespace, gateway.name, gateway.kubectl, signal),
          },
        ]),
    {
      name: 'health',
      description: `GET ${SMOKE.paths.health}`,
      timeoutMs: SMOKE.stepTimeoutMs.health,
      run: (signal) => checkHealth(settings.baseUrl, signal),
    },
    {
      name: 'status',
      description: `POST ${SMOKE.paths.login}, then GET ${SMOKE.paths.status} with the bearer token`,
      timeoutMs: SMOKE.stepTimeoutMs.login + SMOKE.stepTimeoutMs.declarations,
      run: async (signal) => {
        const token = await login(settings.baseUrl, settings.username, settings.password, signal);
        return getWithToken(settings.baseUrl, SMOKE.paths.status, token, signal);
      },
    },
    {
      name: 'tls',
      description: `TLS handshake with ${settings.tls.address ?? settings.tls.host}:${settings.tls.port ?? 443} as ${settings.tls.host}`,
      timeoutMs: TLS_CHECK_TIMEOUT_MS,
      run: async (signal) => describeCertificate(await checkTls(settings.tls, signal)),
    },
  ];
}
