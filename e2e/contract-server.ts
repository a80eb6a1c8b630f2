// The application's HTTP contract on loopback: the unit tests call it, and the e2e runs one per
// pod of an application as the container behind kwok's port-forward (e2e/live-containers.ts).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Credentials and token the local contract server accepts. */
export const TEST_CREDENTIALS = { username: 'smoke-user', password: 's3cret-for-tests' } as const;
export const TEST_TOKEN = 'token-123';

/** A way to break one endpoint of the local server. */
export type Fault = 'none' | 'health-503' | 'login-401' | 'login-no-token' | 'declarations-500' | 'status-403' | 'health-hangs';

export interface ContractServer {
  readonly baseUrl: string;
  /** `METHOD /path` of every request received, in order. */
  readonly requests: string[];
  fault: Fault;
  close(): Promise<void>;
}

/**
 * The application's HTTP contract (4, 5) on 127.0.0.1: /health, /ready, POST
 * /api/auth/login (JSON username/password -> token), and /api/status and
 * /api/declarations behind `Authorization: Bearer <token>`. The login accepts `credentials`
 * (TEST_CREDENTIALS unless given).
 */
export async function startContractServer(credentials: { readonly username: string; readonly password: string } = TEST_CREDENTIALS): Promise<ContractServer> {
  const requests: string[] = [];
  const state = { fault: 'none' as Fault };
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((request, response) => {
    const route = `${request.method} ${request.url}`;
    requests.push(route);
    const send = (status: number, body?: unknown) => {
      response.writeHead(status, { 'Content-Type': 'application/json' });
      response.end(body === undefined ? '' : JSON.stringify(body));
    };
    const authorized = request.headers.authorization === `Bearer ${TEST_TOKEN}`;
    let raw = '';
    request.on('data', (chunk) => (raw += chunk));
    request.on('end', () => {
      switch (route) {
        case 'GET /health':
          if (state.fault === 'health-hangs') return; // never answers
          return send(state.fault === 'health-503' ? 503 : 200, { status: 'ok' });
        case 'GET /ready':
          return send(200, { status: 'ready' });
        case 'POST /api/auth/login': {
          if (state.fault === 'login-401') return send(401, { error: 'invalid credentials' });
          let body: any;
          try {
            body = JSON.parse(raw);
          } catch {
            return send(400, { error: 'body must be JSON' });
          }
          if (request.headers['content-type'] !== 'application/json') return send(415);
          if (body.username !== credentials.username || body.password !== credentials.password) {
            return send(401, { error: 'invalid credentials' });
          }
          return send(200, state.fault === 'login-no-token' ? { user: body.username } : { token: TEST_TOKEN });
        }
        case 'GET /api/declarations':
          if (!authorized) return send(401);
          return send(state.fault === 'declarations-500' ? 500 : 200, []);
        case 'GET /api/status':
          if (!authorized) return send(401);
          return send(state.fault === 'status-403' ? 403 : 200, { status: 'running' });
        default:
          return send(404);
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    get fault() {
      return state.fault;
    },
    set fault(value: Fault) {
      state.fault = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A localhost port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

