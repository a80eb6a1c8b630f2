import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContractServer, startContractServer, TEST_CREDENTIALS } from '../e2e/contract-server';
import { IMAGES } from '../src/contract/images';
import { committedObjects, ENVIRONMENT_ORDER, findObject, type K8sObject, projectEnvironments, renderToObjects } from './support';

function objectsOf(environment: string): K8sObject[] {
  return [...renderToObjects(projectEnvironments()[environment]!).values()].flat();
}

describe('the smoke test as a PostSync hook (4.1)', () => {
  it.each(ENVIRONMENT_ORDER)('renders a PostSync hook Job in %s, replaced before each new run', (environment) => {
    const job = findObject(objectsOf(environment), 'Job', 'webapp-smoke');
    expect(job.metadata.namespace).toBe('webapp');
    expect(job.metadata.annotations).toEqual({
      'argocd.argoproj.io/hook': 'PostSync',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    expect(job.spec.backoffLimit).toBe(0);
    // 10 + 10 + 10 + 20 + 20 seconds of steps, plus 60 s to pull and start.
    expect(job.spec.activeDeadlineSeconds).toBe(130);
  });

  // Convergence item 12: no rendered image that nothing builds or upstream does not publish.
  it('runs the contract\'s steps in order as init containers, each in an image its upstream publishes', () => {
    for (const env of ENVIRONMENT_ORDER) {
      const pod = findObject(objectsOf(env), 'Job', 'webapp-smoke').spec.template.spec;
      expect(pod.initContainers.map((c: any) => [c.name, c.image])).toEqual([
        ['http', IMAGES.busybox],
        ['database', IMAGES.sqlServer],
        ['broker', IMAGES.strimziKafka],
      ]);
      expect(pod.containers.map((c: any) => [c.name, c.image, c.command])).toEqual([['passed', IMAGES.busybox, ['echo', 'All smoke tests passed']]]);
      // Nothing from the project's registry: no pull secret needed.
      expect(pod.imagePullSecrets).toBeUndefined();
    }
  });

  it('calls the application Service inside the cluster, the database and the contract broker address from its namespace', () => {
    const steps = findObject(objectsOf('testing'), 'Job', 'webapp-smoke').spec.template.spec.initContainers;
    const plain = Object.fromEntries(steps.flatMap((c: any) => c.env.filter((e: any) => 'value' in e).map((e: any) => [e.name, e.value])));
    expect(plain).toMatchObject({
      SMOKE_BASE_URL: 'http://webapp.webapp.svc.cluster.local',
      DATABASE_HOST: 'mssql.database.svc.cluster.local',
      DATABASE_PORT: '1433',
      KAFKA_BOOTSTRAP_SERVERS: 'kafka-cluster-kafka-bootstrap.kafka.svc.cluster.local:9092',
    });
  });

  it('takes every credential from the Secret webapp-smoke by key, never as a value', () => {
    const steps = findObject(objectsOf('staging'), 'Job', 'webapp-smoke').spec.template.spec.initContainers;
    const fromSecret = steps.flatMap((c: any) => c.env.filter((e: any) => e.valueFrom !== undefined));
    expect(fromSecret.map((e: any) => e.name)).toEqual(['SMOKE_USERNAME', 'SMOKE_PASSWORD', 'DATABASE_USER', 'DATABASE_PASSWORD', 'KAFKA_USERNAME', 'KAFKA_PASSWORD']);
    for (const variable of fromSecret) {
      expect(variable.valueFrom).toEqual({ secretKeyRef: { name: 'webapp-smoke', key: variable.name } });
    }
    for (const env of ENVIRONMENT_ORDER) {
      expect(committedObjects(env).filter((o) => o.kind === 'Secret')).toEqual([]);
    }
  });

  it('runs restricted, with requests and limits on every container', () => {
    const pod = findObject(objectsOf('production'), 'Job', 'webapp-smoke').spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const container of [...pod.initContainers, ...pod.containers]) {
      expect(container.securityContext, container.name).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container.securityContext.runAsUser, container.name).toBeGreaterThan(0);
      expect(Object.keys(container.resources.requests).sort(), container.name).toEqual(['cpu', 'memory']);
      expect(Object.keys(container.resources.limits).sort(), container.name).toEqual(['cpu', 'memory']);
    }
  });

  it('is not selected by the application Service', () => {
    const objects = objectsOf('testing');
    const job = findObject(objects, 'Job', 'webapp-smoke');
    const service = findObject(objects, 'Service', 'webapp');
    const podLabels = job.spec.template.metadata.labels as Record<string, string>;
    const selected = Object.entries(service.spec.selector as Record<string, string>).every(([k, v]) => podLabels[k] === v);
    expect(selected).toBe(false);
  });

  it('may reach only DNS, the application on 8080 and the database and broker ports', () => {
    const policy = findObject(objectsOf('testing'), 'NetworkPolicy', 'webapp-smoke');
    expect(policy.spec.podSelector).toEqual({ matchLabels: { app: 'webapp-smoke' } });
    expect(policy.spec.ingress).toEqual([]);
    const ports = policy.spec.egress.map((rule: any) => rule.ports.map((p: any) => `${p.protocol}/${p.port}`));
    expect(ports).toEqual([['UDP/53', 'TCP/53'], ['TCP/8080'], ['TCP/1433'], ['TCP/9092']]);
    expect(policy.spec.egress[1].to).toEqual([{ podSelector: {} }]);
  });

  // 1433 and 9092 in any namespace would let the hook reach any pod listening there; the
  // database's and the broker's namespaces are the environment's (`kubernetes.io/metadata.name`
  // is the label Kubernetes puts on every namespace).
  it.each(ENVIRONMENT_ORDER)('in %s reaches DNS in kube-system, 1433 in the database\'s namespace and 9092 in the broker\'s only', (environment) => {
    const { database, broker, applications } = projectEnvironments()[environment]!;
    for (const application of applications) {
      const policy = findObject(committedObjects(environment), 'NetworkPolicy', `${application.name}-smoke`);
      const namespaceOf = (name: string) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } } });
      expect(policy.spec.egress[0].to, policy.metadata.name).toEqual([{ ...namespaceOf('kube-system'), podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }]);
      expect(policy.spec.egress[2], policy.metadata.name).toEqual({ to: [{ ...namespaceOf(database.namespace), podSelector: { matchLabels: { app: 'mssql' } } }], ports: [{ protocol: 'TCP', port: 1433 }] });
      expect(policy.spec.egress[3], policy.metadata.name).toEqual({
        to: [{ ...namespaceOf(broker.namespace), podSelector: { matchLabels: { 'strimzi.io/cluster': 'kafka-cluster' } } }],
        ports: [{ protocol: 'TCP', port: 9092 }],
      });
    }
  });
});

// The HTTP step (4.1 steps 1-3) as rendered, run by /bin/sh with this machine's GNU wget
// (the script uses only options busybox's wget shares) against the local contract server.
describe('the smoke hook\'s HTTP step against a contract server (4.1)', () => {
  let server: ContractServer;
  beforeAll(async () => {
    server = await startContractServer();
  });
  afterAll(async () => server.close());
  const script = (): string => findObject(objectsOf('testing'), 'Job', 'webapp-smoke').spec.template.spec.initContainers[0].command[2];
  // Asynchronous: the contract server answers from this process.
  const shell = (text: string, password: string = TEST_CREDENTIALS.password) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('/bin/sh', ['-c', text], {
        env: { PATH: process.env.PATH, SMOKE_BASE_URL: server.baseUrl, SMOKE_USERNAME: TEST_CREDENTIALS.username, SMOKE_PASSWORD: password },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  const WGET = spawnSync('wget', ['--version']).status === 0;

  it.skipIf(!WGET)('calls health, logs in with the credentials and lists declarations with the token', async () => {
    server.fault = 'none';
    server.requests.length = 0;
    const result = await shell(script());
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(server.requests).toEqual(['GET /health', 'POST /api/auth/login', 'GET /api/declarations']);
  });

  it.skipIf(!WGET)('stops at the first failing step and names it', async () => {
    for (const [fault, step, requests] of [
      ['health-503', 'health', ['GET /health']],
      ['login-401', 'login', ['GET /health', 'POST /api/auth/login']],
      ['login-no-token', 'login', ['GET /health', 'POST /api/auth/login']],
      ['declarations-500', 'declarations', ['GET /health', 'POST /api/auth/login', 'GET /api/declarations']],
    ] as const) {
      server.fault = fault;
      server.requests.length = 0;
      const result = await shell(script());
      expect(result.status, fault).not.toBe(0);
      expect(result.stderr, fault).toContain(`smoke: ${step}`);
      expect(server.requests, fault).toEqual(requests);
    }
    server.fault = 'none';
  });

  it('builds the login body as JSON for credentials with quotes and backslashes', async () => {
    const lines = script().split('\n');
    const upToBody = lines.filter((line) => !line.startsWith('wget') && !line.startsWith('token=') && !line.startsWith('[') && !line.startsWith('echo'));
    const password = 'a "quoted" \\ pass\\word';
    const result = await shell([...upToBody, 'printf %s "$body"'].join('\n'), password);
    expect(JSON.parse(result.stdout)).toEqual({ username: TEST_CREDENTIALS.username, password });
  });
});
