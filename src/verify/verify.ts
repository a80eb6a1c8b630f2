import { SMOKE, TLS_CHECK_TIMEOUT_MS } from '../constants';
import { checkHealth, getWithToken, login } from '../smoke/http';
import type { SmokeStep } from '../smoke/runner';
import { checkTls, describeCertificate, type TlsCheckOptions } from './tls';

/** What post-deployment validation (4.2) checks in one environment. */
export interface VerifySettings {
  /** `{base_url}` of the application. */
  readonly baseUrl: string;
  readonly username: string;
  readonly password: string;
  readonly tls: TlsCheckOptions;
}

/**
 * 4.2: the health check, the authenticated status call (login, then GET /api/status with
 * the bearer token), and the TLS handshake to the host with the server name set.
 */
export function verifySteps(settings: VerifySettings): SmokeStep[] {
  return [
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
