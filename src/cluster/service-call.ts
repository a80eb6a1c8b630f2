import { RefusedError, unreachableReason } from '../base/errors';
import { endpoint } from '../smoke/http';

/** How long one call to a server a verb talks to (Alertmanager, Flagger's load tester) may take. Not in the contract. */
const SERVICE_CALL_TIMEOUT_MS = 10_000;

/** What a server answered: its status and body. */
export interface ServiceAnswer {
  readonly status: number;
  readonly text: string;
}

/**
 * One request to a server a verb talks to, at `route` below `baseUrl`, with a JSON body when
 * one is given, bounded by SERVICE_CALL_TIMEOUT_MS. A server that does not answer is refused,
 * naming it; a status other than `expected` (by default any 2xx) is refused with its body.
 */
export async function callService(
  server: string,
  baseUrl: string,
  request: { readonly method: string; readonly route: string; readonly body?: unknown; readonly expected?: readonly number[] },
): Promise<ServiceAnswer> {
  const { method, body } = request;
  const url = endpoint(baseUrl, request.route);
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(SERVICE_CALL_TIMEOUT_MS),
    });
  } catch (error) {
    throw new RefusedError(`cannot reach ${server}: ${method} ${url}: ${unreachableReason(error)}`);
  }
  const text = (await response.text()).trim();
  const accepted = request.expected === undefined ? response.ok : request.expected.includes(response.status);
  if (!accepted) throw new RefusedError(`${server} refused ${method} ${url}: HTTP ${response.status}: ${text || response.statusText}`);
  return { status: response.status, text };
}
