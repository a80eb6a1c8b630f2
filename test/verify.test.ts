import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tls from 'node:tls';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadEnvironments } from '../src/environments';
import { gatewayReport } from '../src/verify/gateway';
import { checkTls } from '../src/verify/tls';
import { VERIFY } from '../src/commands/verify';
import { type ContractServer, startContractServer, TEST_CREDENTIALS } from '../e2e/contract-server';
import { FakeApiServer } from './fake-api-server';
import { ROOT, runCli, runInProcess, temporaryDirectory } from './support';
import { SMOKE_VARIABLES } from '../src/contract/naming';

// Node cannot issue X.509 certificates; the openssl binary can. Without it the TLS
// tests are skipped with this reason.
const OPENSSL = spawnSync('openssl', ['version']).status === 0;
const HOST = 'webapp.testing.platform.example.com';

let dir: string;
let certificate: string;
let tlsServer: tls.Server;
let tlsPort: number;
let server: ContractServer;
const api = new FakeApiServer();
let kubeconfig: string;

/** A Gateway and its route as Envoy Gateway reports them when all is well. */
const condition = (type: string, status = 'True', reason = type) => ({ type, status, reason, message: '' });
const healthyGateway = { metadata: { name: 'webapp' }, status: { conditions: [condition('Accepted'), condition('Programmed')] } };
const healthyRoute = {
  metadata: { name: 'webapp' },
  status: { parents: [{ parentRef: { name: 'webapp', sectionName: 'https' }, conditions: [condition('Accepted'), condition('ResolvedRefs')] }] },
};

/** The rolling Deployment of testing's webapp, its pod, and the Service's endpoint to that pod: what verify reads besides the Gateway. */
const deployment = { metadata: { name: 'webapp', namespace: 'webapp', generation: 1 }, spec: { replicas: 1, selector: { matchLabels: { app: 'webapp' } } }, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 } };
const pod = { metadata: { name: 'webapp-7d9f-abcde', namespace: 'webapp', labels: { app: 'webapp' } }, status: { phase: 'Running', conditions: [condition('Ready')] } };
const endpoints = (podName: string) => ({ metadata: { name: 'webapp-x1', namespace: 'webapp', labels: { 'kubernetes.io/service-name': 'webapp' } }, endpoints: [{ addresses: ['10.0.0.5'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: podName } }] });

beforeAll(async () => {
  server = await startContractServer();
  if (!OPENSSL) return;
  dir = temporaryDirectory('platform-gitops-tls-');
  kubeconfig = await api.start(dir);
  const made = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '30',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    '-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`,
  ], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  certificate = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  tlsServer = tls.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: certificate }, (socket) => socket.end());
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsServer.address() as AddressInfo).port;
});

afterAll(async () => {
  await server.close();
  await api.close();
  if (OPENSSL) {
    await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

beforeEach(() => {
  server.fault = 'none';
  server.requests.length = 0;
});

const credentials = { SMOKE_USERNAME: TEST_CREDENTIALS.username, SMOKE_PASSWORD: TEST_CREDENTIALS.password };

function verify(env: string, extra: readonly string[] = [], cluster: { gateway?: object; routes?: object[]; endpointPod?: string } = {}, variables: NodeJS.ProcessEnv = credentials) {
  const inNamespace = (object: any) => ({ ...object, metadata: { namespace: 'webapp', ...object.metadata } });
  api.objects = {
    Gateway: [inNamespace(cluster.gateway ?? healthyGateway)],
    HTTPRoute: (cluster.routes ?? [healthyRoute]).map(inNamespace),
    Deployment: [deployment],
    Pod: [pod],
    EndpointSlice: [endpoints(cluster.endpointPod ?? pod.metadata.name)],
  };
  api.requests.length = 0;
  return runInProcess(
    VERIFY,
    ['--env', env, '--base-url', server.baseUrl, '--address', '127.0.0.1', '--port', String(tlsPort), ...extra],
    ROOT,
    { ...NO_SETTINGS, ...variables, KUBECONFIG: kubeconfig },
  );
}

/** The variables verification reads, unset: a test gives those it means. */
const NO_SETTINGS = Object.fromEntries(Object.values(SMOKE_VARIABLES).map((name) => [name, '']));

// 4.2 "ingress listed and described" becomes the Gateway and its HTTPRoutes with their
// status conditions (Gateway API: a Gateway is Accepted and Programmed, a route Accepted
// and ResolvedRefs for each parent it attaches to).
describe('the Gateway check of verify (4.2)', () => {
  it('passes a Gateway Accepted and Programmed whose route is Accepted with resolved backends', () => {
    expect(gatewayReport(healthyGateway, [healthyRoute])).toEqual({
      lines: ['Gateway webapp Accepted=True Programmed=True', 'HTTPRoute webapp on webapp/https Accepted=True ResolvedRefs=True'],
      problems: [],
    });
  });

  it('names each condition that does not hold, with its reason, and a Gateway no route attaches to', () => {
    const gateway = { ...healthyGateway, status: { conditions: [condition('Accepted'), condition('Programmed', 'False', 'AddressNotAssigned')] } };
    const route = {
      metadata: { name: 'webapp' },
      status: { parents: [{ parentRef: { name: 'webapp', sectionName: 'https' }, conditions: [condition('Accepted'), condition('ResolvedRefs', 'False', 'BackendNotFound')] }] },
    };
    expect(gatewayReport(gateway, [route]).problems).toEqual([
      'Gateway webapp: Programmed is False (AddressNotAssigned)',
      'HTTPRoute webapp on webapp/https: ResolvedRefs is False (BackendNotFound)',
    ]);
    expect(gatewayReport(healthyGateway, []).problems).toEqual(['no HTTPRoute reports Gateway webapp as its parent']);
  });
});

describe.skipIf(!OPENSSL)('npm run verify (4.2) against local servers', () => {
  it('passes health, the authenticated status call and the TLS handshake, printing subject and expiry', async () => {
    const result = await verify('testing', ['--ca', path.join(dir, 'cert.pem')]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('ResolvedRefs: Gateway webapp Accepted=True Programmed=True; HTTPRoute webapp on webapp/https Accepted=True ResolvedRefs=True');
    expect(result.stdout).toMatch(/^PASS gateway: /m);
    expect(api.requests).toContain('GET /apis/gateway.networking.k8s.io/v1/namespaces/webapp/gateways/webapp');
    expect(result.stdout).toContain('PASS endpoints: Service webapp/webapp');
    expect(result.stdout).toContain('1 ready endpoints, all of webapp');
    expect(result.stdout).toContain('PASS health');
    expect(result.stdout).toContain('PASS status');
    expect(result.stdout).toMatch(new RegExp(`PASS tls: .*subject CN=${HOST.replace(/\./g, '\\.')}, .*expires \\d{4}-\\d\\d-\\d\\dT.*\\((29|30) days\\)`));
    expect(server.requests).toEqual(['GET /health', 'POST /api/auth/login', 'GET /api/status']);
  });

  it('fails the gateway check when the Gateway is not programmed, and still runs the others', async () => {
    const gateway = { ...healthyGateway, status: { conditions: [condition('Accepted'), condition('Programmed', 'False', 'NoResources')] } };
    const result = await verify('testing', ['--ca', path.join(dir, 'cert.pem')], { gateway });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('Programmed is False (NoResources)');
    expect(result.stdout).toContain('PASS health');
    expect(result.stdout).toContain('failed: gateway');
  });

  it('fails the endpoint check when the Service sends traffic to a pod of no serving workload', async () => {
    const result = await verify('testing', ['--ca', path.join(dir, 'cert.pem')], { endpointPod: 'stray-pod' });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('FAIL endpoints');
    expect(result.stdout).toContain('endpoint stray-pod is not a pod of webapp');
    expect(result.stdout).toContain('PASS gateway');
  });

  it('skips the cluster checks with --skip-cluster, reading no kubeconfig', async () => {
    const result = await runInProcess(
      VERIFY,
      ['--env', 'testing', '--base-url', server.baseUrl, '--address', '127.0.0.1', '--port', String(tlsPort), '--ca', path.join(dir, 'cert.pem'), '--skip-cluster'],
      ROOT,
      { ...credentials, KUBECONFIG: path.join(dir, 'no-such-kubeconfig') },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).not.toContain('gateway');
  });

  it('names the kubeconfig it cannot read', async () => {
    const result = await runInProcess(VERIFY, ['--env', 'testing', '--base-url', server.baseUrl, '--port', String(tlsPort)], ROOT, { ...credentials, KUBECONFIG: path.join(dir, 'no-such-kubeconfig') });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`the kubeconfig (KUBECONFIG=${path.join(dir, 'no-such-kubeconfig')}) cannot be read`);
  });

  it('sends the server name, so the server sees the environment host', async () => {
    const names: string[] = [];
    const listener = (socket: tls.TLSSocket) => names.push(String(socket.servername));
    tlsServer.on('secureConnection', listener);
    try {
      await verify('testing', ['--ca', path.join(dir, 'cert.pem')]);
    } finally {
      tlsServer.off('secureConnection', listener);
    }
    expect(names).toEqual([HOST]);
  });

  it('fails the status check, and still runs the TLS check, when /api/status refuses the token', async () => {
    server.fault = 'status-403';
    const result = await verify('testing', ['--ca', path.join(dir, 'cert.pem')]);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('FAIL status');
    expect(result.stdout).toContain('GET /api/status returned HTTP 403');
    expect(result.stdout).toContain('PASS tls');
    expect(result.stdout).toContain('Verification of webapp in testing failed: status');
  });

  it('fails the TLS check when the certificate is not trusted, unless untrusted chains are allowed', async () => {
    const refused = await verify('testing');
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(/FAIL tls: .*is not trusted: .*SELF_SIGNED/);
    const allowed = await verify('testing', ['--allow-untrusted']);
    expect(allowed.status).toBe(0);
    expect(allowed.stdout).toMatch(/PASS tls: .*untrusted \(DEPTH_ZERO_SELF_SIGNED_CERT\), allowed by --allow-untrusted/);
  });

  it('fails the TLS check when the certificate does not name the environment host', async () => {
    const result = await verify('staging', ['--ca', path.join(dir, 'cert.pem')]);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(`FAIL tls: `);
    expect(result.stdout).toContain(`does not name webapp.staging.platform.example.com`);
  });

  it('fails the TLS check on an expired certificate', async () => {
    const later = new Date(Date.now() + 60 * 24 * 60 * 60 * 1000);
    await expect(
      checkTls({ host: HOST, address: '127.0.0.1', port: tlsPort, ca: certificate }, new AbortController().signal, later),
    ).rejects.toThrow(/expired on \d{4}-/);
  });
});

describe.skipIf(!OPENSSL)('npm run verify without smoke credentials, and its database check (4.2)', () => {
  it('verifies health only without SMOKE_USERNAME and SMOKE_PASSWORD, saying what it skipped', async () => {
    const result = await verify('testing', ['--ca', path.join(dir, 'cert.pem')], {}, {});
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('SKIP status: SMOKE_USERNAME and SMOKE_PASSWORD are not set (health only, no authenticated status call)');
    expect(result.stdout).toContain('SKIP database: DATABASE_HOST, DATABASE_USER and DATABASE_PASSWORD are not set (no database connectivity check)');
    expect(result.stdout).toContain('PASS health');
    expect(result.stdout).not.toContain('PASS status');
    expect(server.requests).toEqual(['GET /health']);
  });

  it("runs the smoke test's database check when DATABASE_* are given, failing it on a server that does not answer", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const database = { DATABASE_HOST: '127.0.0.1', DATABASE_PORT: String(closed), DATABASE_USER: 'sa', DATABASE_PASSWORD: 'x' };
    const result = await verify('testing', ['--ca', path.join(dir, 'cert.pem')], {}, { ...credentials, ...database });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^FAIL database: /m);
    expect(result.stdout).toContain('PASS status');
    expect(result.stdout).toContain('Verification of webapp in testing failed: database');
  });

  it('refuses some of the database variables without the others, naming the missing ones', async () => {
    const result = await verify('testing', [], {}, { DATABASE_HOST: '127.0.0.1' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('DATABASE_USER is not set');
    expect(result.stderr).toContain('DATABASE_PASSWORD is not set');
  });
});

describe('npm run verify refusals', () => {
  it('refuses an unknown environment, naming the ones that exist', async () => {
    const result = await runInProcess(VERIFY, ['--env', 'qa'], ROOT, credentials);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--env "qa" is not an environment; choose one of local, testing, staging, production');
  });

  it('refuses an application the environment does not have, naming the ones it has', async () => {
    const environment = loadEnvironments().find((env) => env.name === 'testing')!;
    const names = environment.applications.map((app) => app.name).join(', ');
    const unknown = await runInProcess(VERIFY, ['--env', 'testing', '--app', 'nosuch'], ROOT, credentials);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain(`--app "nosuch" is not an application of testing; choose one of ${names}`);
  });

  // The one spawn of the entry point: argv, the usage error, exit 2, no stack trace.
  it('refuses half the credentials and a bad port, listing both', async () => {
    const result = runCli('verify', ['--env', 'testing', '--port', '70000'], { env: { SMOKE_USERNAME: 'someone', SMOKE_PASSWORD: '' } });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('SMOKE_PASSWORD is not set');
    expect(result.stderr).toContain('--port "70000" must be a port number from 1 to 65535');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
