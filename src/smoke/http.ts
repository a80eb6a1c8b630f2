import { SMOKE } from '../contract/contract';

/**
 * The application's HTTP contract (4, 5) as the smoke test and the post-deployment
 * validation call it: an error status is a failure (7, first row).
 */

/** `{base_url}` + a contract path; a base URL with a path prefix keeps it. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

async function expectSuccess(method: string, url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, { ...init, method, redirect: 'manual' });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${method} ${new URL(url).pathname} returned HTTP ${response.status}`);
  }
  return response;
}

class BodyTooLarge extends Error {}

/** The body as text, read up to SMOKE.maxBodyBytes: a longer one is cancelled and refused. */
async function boundedText(response: Response, what: string): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > SMOKE.maxBodyBytes) {
      await reader.cancel();
      throw new BodyTooLarge(`${what} returned a body of more than ${SMOKE.maxBodyBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** GET /health without a token (5.6). */
export async function checkHealth(baseUrl: string, signal: AbortSignal): Promise<string> {
  const response = await expectSuccess('GET', endpoint(baseUrl, SMOKE.paths.health), { signal });
  await response.body?.cancel();
  return `HTTP ${response.status}`;
}

/** POST /api/auth/login with JSON username and password; resolves with `token` (2.5). */
export async function login(baseUrl: string, username: string, password: string, signal: AbortSignal): Promise<string> {
  const response = await expectSuccess('POST', endpoint(baseUrl, SMOKE.paths.login), {
    signal,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  let body: unknown;
  try {
    body = JSON.parse(await boundedText(response, `POST ${SMOKE.paths.login}`));
  } catch (error) {
    if (error instanceof BodyTooLarge) throw error;
    throw new Error(`POST ${SMOKE.paths.login} returned HTTP ${response.status} with a body that is not JSON`);
  }
  const token = (body as { token?: unknown } | null)?.token;
  if (typeof token !== 'string' || token === '') {
    throw new Error(`POST ${SMOKE.paths.login} returned no "token" string in its JSON body`);
  }
  return token;
}

/** GET a protected path with `Authorization: Bearer <token>` (5.2). */
export async function getWithToken(baseUrl: string, path: string, token: string, signal: AbortSignal): Promise<string> {
  const response = await expectSuccess('GET', endpoint(baseUrl, path), {
    signal,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
  });
  await response.body?.cancel();
  return `HTTP ${response.status}`;
}
