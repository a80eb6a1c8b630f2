import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loopbackClusterSecret, operatorSyncOperation, sidecarPlay } from '../e2e/argocd';
import { builtArgoCd, builtObject } from './argo-cd-build';
import { IN_CLUSTER } from '../src/constructs/argo-cd-sync-policy';
import { containerScript, runContainer } from '../e2e/sidecar';
import { SOPS_AGE, SOPS_PLUGIN } from '../src/contract/choices';
import { parseSshUrl } from '../e2e/git-server';
import type { KubeClient, KubeObject } from '../e2e/kube-client';
import { INFRASTRUCTURE_RELEASES } from '../src/infrastructure/releases';
import { UsageError } from '../src/base/errors';
import { runE2e } from '../e2e/harness';
import { certificatesWithoutIssuer, containerArgs, loopbackWebhookArgs, missingIssuers, withCaBundle } from '../e2e/cert-manager';
import { ClusterEgress } from '../e2e/cluster-egress';
import { loopbackFlaggerArgs } from '../e2e/flagger';
import { caBundleStale, proxyTopology, TOPOLOGY_INJECTOR, topologyInjectorDisabled } from '../e2e/envoy-gateway';
import { ROOT, committedObjects, findObject } from './support';

// Unit tests of the e2e harness's own logic; test/e2e/ runs it on the real engines.

describe('the git server', () => {
  it('reads both SSH URL forms the platform accepts', () => {
    expect(parseSshUrl('git@github.com:example/platform-gitops.git')).toEqual({ user: 'git', host: 'github.com', port: 22, path: 'example/platform-gitops.git' });
    expect(parseSshUrl('ssh://git@git.example.com:2222/team/repo.git')).toEqual({ user: 'git', host: 'git.example.com', port: 2222, path: 'team/repo.git' });
  });
});

describe('Argo CD configuration in the e2e cluster', () => {
  it('declares the in-cluster destination uncompressed, as a cluster Secret Argo CD reads (v3.6.1 util/db/cluster.go SecretToCluster)', () => {
    const secret = loopbackClusterSecret('argocd');
    expect(secret.metadata.labels).toEqual({ 'argocd.argoproj.io/secret-type': 'cluster' });
    const data = secret['stringData'] as { name: string; server: string; config: string };
    expect(data.server).toBe(IN_CLUSTER);
    expect(JSON.parse(data.config)).toMatchObject({ disableCompression: true });
  });
});

describe('the environment an e2e run names', () => {
  it('is refused as a usage error (printed with the usage) when it is not an environment, before anything starts', async () => {
    await expect(runE2e({ environment: '../../etc', projectRoot: ROOT, timeoutSeconds: 1, dryRun: false, keep: false, log: () => undefined })).rejects.toThrow(UsageError);
  });
});

describe('cert-manager\'s webhook on loopback (e2e/cert-manager.ts)', () => {
  const chartArgs = [
    '--v=2',
    '--secure-port=10250',
    '--dynamic-serving-ca-secret-namespace=cert-manager',
    '--dynamic-serving-ca-secret-name=cert-manager-webhook-ca',
    '--dynamic-serving-dns-names=cert-manager-webhook',
    '--dynamic-serving-dns-names=cert-manager-webhook.cert-manager.svc',
  ];

  it("keeps the chart's arguments, its dynamic serving certificate included, but the ports and the metrics server", () => {
    expect(loopbackWebhookArgs(chartArgs, { securePort: 40001, healthzPort: 40002 })).toEqual([
      '--v=2',
      '--dynamic-serving-ca-secret-namespace=cert-manager',
      '--dynamic-serving-ca-secret-name=cert-manager-webhook-ca',
      '--dynamic-serving-dns-names=cert-manager-webhook',
      '--dynamic-serving-dns-names=cert-manager-webhook.cert-manager.svc',
      '--secure-port=40001',
      '--healthz-port=40002',
      '--metrics-listen-address=0',
    ]);
  });

  it("writes the CA into every webhook of a configuration as cainjector does, every other field the chart's", () => {
    const chart: KubeObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'cert-manager-webhook', annotations: { 'cert-manager.io/inject-ca-from-secret': 'cert-manager/cert-manager-webhook-ca' } },
      webhooks: [{ name: 'webhook.cert-manager.io', failurePolicy: 'Fail', clientConfig: { service: { name: 'cert-manager-webhook', namespace: 'cert-manager', path: '/validate' } } }],
    };
    expect(withCaBundle(chart, 'Q0E=')).toEqual({
      webhooks: [{ name: 'webhook.cert-manager.io', failurePolicy: 'Fail', clientConfig: { service: { name: 'cert-manager-webhook', namespace: 'cert-manager', path: '/validate' }, caBundle: 'Q0E=' } }],
    });
  });

  it("reads a container's arguments from its Deployment, its namespace resolved and its --config file copied from the mounted ConfigMap", async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-cert-manager-'));
    try {
      const deployment = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'cert-manager', namespace: 'cm' },
        spec: {
          template: {
            spec: {
              volumes: [{ name: 'config', configMap: { name: 'cert-manager' } }],
              containers: [{ name: 'cert-manager-controller', args: ['--leader-election-namespace=$(POD_NAMESPACE)', '--config=/var/cert-manager/config/config.yaml'], volumeMounts: [{ name: 'config', mountPath: '/var/cert-manager/config' }] }],
            },
          },
        },
      } as unknown as KubeObject;
      const reads: string[] = [];
      const args = await containerArgs(deployment, 'cert-manager-controller', async (configMap, key) => (reads.push(`${configMap}/${key}`), 'kind: ControllerConfiguration\n'), work);
      expect(reads).toEqual(['cert-manager/config.yaml']);
      expect(args).toEqual(['--leader-election-namespace=cm', `--config=${path.join(work, 'cert-manager-controller-config.yaml')}`]);
      expect(fs.readFileSync(path.join(work, 'cert-manager-controller-config.yaml'), 'utf8')).toBe('kind: ControllerConfiguration\n');
      await expect(containerArgs(deployment, 'cert-manager-webhook', async () => '', work)).rejects.toThrow('Deployment cm/cert-manager has no cert-manager-webhook container with arguments');
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});

describe("the API server's cluster egress (e2e/cluster-egress.ts)", () => {
  it('sends a routed Service address to its loopback port, a loopback address to itself, and refuses anything else at once', async () => {
    const server = net.createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const backend = (server.address() as net.AddressInfo).port;
    const egress = new ClusterEgress();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-egress-'));
    try {
      egress.route('10.96.0.12', 443, backend);
      await egress.listen(path.join(dir, 'egress.sock'));
      const connect = (target: string) =>
        new Promise<string>((resolve) => {
          const socket = net.connect(egress.socket, () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
          let text = '';
          socket.on('data', (chunk) => (text += chunk.toString()));
          socket.on('close', () => resolve(text));
        });
      expect(await connect('10.96.0.12:443')).toBe('HTTP/1.1 200 Connection established\r\n\r\nhello');
      expect(await connect(`127.0.0.1:${backend}`)).toBe('HTTP/1.1 200 Connection established\r\n\r\nhello');
      expect(await connect('10.96.0.13:443')).toBe('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
      expect([...egress.refused]).toEqual(['10.96.0.13:443']);
      const file = path.join(dir, 'egress-selector.yaml');
      egress.writeConfiguration(file);
      expect(parse(fs.readFileSync(file, 'utf8'))).toEqual({
        apiVersion: 'apiserver.k8s.io/v1beta1',
        kind: 'EgressSelectorConfiguration',
        egressSelections: [{ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: path.join(dir, 'egress.sock') } } } }],
      });
    } finally {
      await egress.close();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the sops plugin played as its rendered sidecar (e2e/argocd.ts, e2e/sidecar.ts)', () => {
  // This machine's folders: the sidecar's own (/home/argocd/..., /var/run/argocd) are not here.
  const folders = new Set(['/', '/home', '/tmp', '/var', '/var/run', '/usr', '/usr/local', '/usr/local/bin']);
  const exists = (folder: string) => folders.has(folder);
  const disk = (keys: string[] = [SOPS_AGE.secretKey], secrets = true) => ({
    secrets: new Map(secrets ? [[SOPS_AGE.secretName, { folder: '/run/e2e/age/sops-age', keys }]] : []),
    configMaps: new Map([['argocd-cmp-cm', { folder: '/run/e2e/argocd-cmp-cm', keys: [`${SOPS_PLUGIN.name}.yaml`] }]]),
    sockets: '/run/e2e/plugins',
    varFiles: '/run/e2e/var-files',
  });

  // The repository server's Deployment of local's kustomization, as kustomize builds it.
  const repoServer = () => builtObject(builtArgoCd('local'), 'Deployment', 'argocd-repo-server');

  it('runs the sidecar\'s command as its user, read-only, with only its environment and its mounts', () => {
    const play = sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(), '/run/e2e/sops', exists);
    expect(play.command).toEqual(['/var/run/argocd/argocd-cmp-server']);
    expect(play).toMatchObject({ user: 999, group: 0, readOnlyRoot: true, noNewPrivileges: true, dropAllCapabilities: true });
    expect(play.env).toEqual({ PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/', [SOPS_AGE.keyFileVariable]: `${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey}` });
    expect(play.mounts).toEqual([
      // The image's own folders, which this machine does not have, stand on a tmpfs each.
      { kind: 'shadow', target: '/home' },
      { kind: 'shadow', target: '/usr/local/bin' },
      { kind: 'shadow', target: '/var/run' },
      { kind: 'bind', source: '/run/e2e/var-files', target: '/var/run/argocd', file: false, readOnly: false },
      { kind: 'bind', source: '/run/e2e/plugins', target: '/home/argocd/cmp-server/plugins', file: false, readOnly: false },
      // A ConfigMap's key: read-only, though the chart's mount does not say so (the kubelet's rule).
      { kind: 'bind', source: `/run/e2e/argocd-cmp-cm/${SOPS_PLUGIN.name}.yaml`, target: '/home/argocd/cmp-server/config/plugin.yaml', file: true, readOnly: true },
      { kind: 'bind', source: '/run/e2e/age/sops-age', target: SOPS_AGE.mountPath, file: false, readOnly: true },
      { kind: 'bind', source: '/run/e2e/sops', target: '/usr/local/bin/sops', file: true, readOnly: true },
      { kind: 'emptyDir', target: '/tmp' },
    ]);
  });

  it('writes a script that mounts, makes the root read-only, then drops to the user with nothing else', () => {
    const script = containerScript(sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(), "/run/e2e/it's/sops", exists)).trimEnd().split('\n');
    expect(script[0]).toBe('set -eu');
    expect(script).toContain("mount --bind '/run/e2e/it'\\''s/sops' '/usr/local/bin/sops'");
    expect(script).toContain(`mount -o remount,bind,ro '${SOPS_AGE.mountPath}'`);
    expect(script.at(-3)).toBe('mount -o remount,bind,ro /');
    // Then every other file system, but the kernel's and the sidecar's writable mounts (its
    // emptyDirs; the key and plugin.yaml are a Secret's and a ConfigMap's, read-only).
    expect(script.at(-2)).toBe(
      "findmnt -lno TARGET | while IFS= read -r target; do case $target in /|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*|'/var/run/argocd'|'/home/argocd/cmp-server/plugins'|'/tmp') ;; *) mount -o remount,bind,ro \"$target\" ;; esac; done",
    );
    expect(script).toContain('mount -t tmpfs -o mode=1777,size=64m tmpfs /dev/shm');
    expect(script.at(-1)).toBe(
      `exec setpriv --reuid=999 --regid=0 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs env -i 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' 'HOME=/' '${SOPS_AGE.keyFileVariable}=${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey}' '/var/run/argocd/argocd-cmp-server'`,
    );
    // Every bind before the emptyDir over /tmp, where the run keeps the sources.
    expect(script.findIndex((line) => line.startsWith('mount -t tmpfs -o mode=1777'))).toBeGreaterThan(script.findLastIndex((line) => line.startsWith('mount --bind')));
  });

  it('kills a step that runs past its time with every process it started, and says so without its environment (as root)', async () => {
    const marker = '31.4159';
    const play = { command: ['sh', '-c', `echo started; sleep ${marker} & sleep ${marker}`], env: { PATH: '/usr/bin:/bin', PASSWORD: 'never-printed' }, user: 65534, group: 65534, readOnlyRoot: true, noNewPrivileges: true, dropAllCapabilities: true, mounts: [] };
    const result = await runContainer(play, 1500);
    expect(result).toEqual({ exitCode: 1, output: 'started\n(killed: it ran past 1500 ms)' });
    expect(spawnSync('pgrep', ['-f', `sleep ${marker}`]).status).toBe(1);
  });

  it('refuses a variable naming a key the mounted Secret does not hold, a Secret the bootstrap does not create, and a plugin without a sidecar', () => {
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(['age.agekey']), '/s', exists)).toThrow(
      `container ${SOPS_PLUGIN.name}: ${SOPS_AGE.keyFileVariable}=${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey} names key ${SOPS_AGE.secretKey} of Secret ${SOPS_AGE.secretName}, which holds age.agekey`,
    );
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk([], false), '/s', exists)).toThrow(`sidecar ${SOPS_PLUGIN.name} mounts Secret ${SOPS_AGE.secretName}, which the bootstrap does not create`);
    expect(() => sidecarPlay('no-such-plugin', repoServer(), disk(), '/s', exists)).toThrow(/argocd-repo-server Deployment has no sidecar named no-such-plugin/);
  });

  it('refuses a mount it would have to stand in for under / itself, and a source the stand-in folders would hide', () => {
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(), '/s', (folder) => folder === '/' || folder === '/tmp')).toThrow(/needs a folder this machine does not have directly under \//);
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), { ...disk(), sockets: '/home/e2e/plugins' }, '/s', exists)).toThrow(
      'container sops: the source of its mount at /home/argocd/cmp-server/plugins, /home/e2e/plugins, lies under /home, which the harness hides to stand in for the image\'s own folder',
    );
  });
});

describe("Flagger's controller on loopback (e2e/flagger.ts)", () => {
  const chartArgs = ['-log-level=info', '-mesh-provider=gatewayapi:v1', '-metrics-server=http://kube-prometheus-stack-prometheus.monitoring:9090', '-enable-config-tracking=true', '-slack-user=flagger'];

  it("keeps every argument of the chart's and adds the run's kubeconfig and a free port", () => {
    expect(loopbackFlaggerArgs(chartArgs, '/run/kubeconfig', 40003)).toEqual([...chartArgs, '-kubeconfig=/run/kubeconfig', '-port=40003']);
  });

  it('refuses a chart that sets what the loopback process must set itself, rather than passing both', () => {
    expect(() => loopbackFlaggerArgs([...chartArgs, '-port=8080'], '/k', 1)).toThrow(/chart now renders -port/);
    expect(() => loopbackFlaggerArgs([...chartArgs, '-kubeconfig', '/x'], '/k', 1)).toThrow(/chart now renders -kubeconfig/);
  });
});

describe("the harness's operator sync", () => {
  it("carries the Application's sync options and retry, as the API server's sync does (argocd applies server-side)", () => {
    const argocd = findObject(committedObjects('local'), 'Application', INFRASTRUCTURE_RELEASES.argoCd.name);
    const operation = operatorSyncOperation(argocd) as { sync: { syncOptions?: string[] }; retry?: unknown };
    expect(argocd.spec.syncPolicy.syncOptions).toContain('ServerSideApply=true');
    expect(operation.sync.syncOptions).toEqual(argocd.spec.syncPolicy.syncOptions);
    expect(operation.retry).toEqual(argocd.spec.syncPolicy.retry);
    expect(operatorSyncOperation(undefined)).toEqual({ initiatedBy: { username: 'e2e-operator' }, sync: { syncStrategy: { hook: {} } } });
  });
});

describe("a Certificate whose issuer no chart renders (e2e/cert-manager.ts)", () => {
  // A request as cert-manager v1.21.2 leaves it when its issuer does not exist
  // (pkg/controller/certificaterequests/sync.go: Pending, "Referenced %q not found: <NotFound>").
  const request = (issuerRef: object, message: string, reason = 'Pending'): KubeObject => ({
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'webapp-1', namespace: 'webapp', annotations: { 'cert-manager.io/certificate-name': 'webapp' } },
    spec: { issuerRef },
    status: { conditions: [{ type: 'Ready', status: 'False', reason, message, lastTransitionTime: '2026-12-02T05:00:00Z' }] },
  });
  const clusterIssuer = (name: string): KubeObject => ({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name } });
  const notFound = (kind: string, resource: string, name: string) => `Referenced "${kind}" not found: ${resource}.cert-manager.io "${name}" not found`;

  it('names the Certificate whose request refers to an Issuer no rendered chart makes, though a ClusterIssuer of that name is rendered', () => {
    const found = missingIssuers([request({ group: 'cert-manager.io', kind: 'Issuer', name: 'local-ca' }, notFound('Issuer', 'issuer', 'local-ca'))], [clusterIssuer('local-ca')]);
    expect(found).toEqual(
      new Map([
        [
          'Certificate webapp/webapp',
          `cert-manager left CertificateRequest webapp/webapp-1 Ready=False (Pending, since 2026-12-02T05:00:00Z): ${notFound('Issuer', 'issuer', 'local-ca')}; no rendered chart makes the Issuer "local-ca" in webapp`,
        ],
      ]),
    );
    // An issuerRef without a kind means an Issuer (pkg/api/util/issuers.go IssuerKind).
    expect(missingIssuers([request({ name: 'local-ca' }, notFound('Issuer', 'issuer', 'local-ca'))], [clusterIssuer('local-ca')]).size).toBe(1);
  });

  it('asks the cluster while an Application holding a Certificate is not Healthy, whatever its resources\' health says (Argo CD 3.x does not keep it there)', async () => {
    const requests = [request({ kind: 'Issuer', name: 'local-ca' }, notFound('Issuer', 'issuer', 'local-ca'))];
    let lists = 0;
    const client = { list: async () => (lists++, requests) } as unknown as KubeClient;
    const judge = certificatesWithoutIssuer(client, [clusterIssuer('local-ca')]);
    const application = (health: string): KubeObject => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'webapp' },
      status: { health: { status: health }, resources: [{ group: 'cert-manager.io', version: 'v1', kind: 'Certificate', namespace: 'webapp', name: 'webapp' }] },
    });
    expect([...(await judge([application('Progressing')])).keys()]).toEqual(['Certificate webapp/webapp']);
    expect((await judge([application('Healthy')])).size).toBe(0);
    expect(lists).toBe(1);
  });

  it('names a ClusterIssuer no chart renders, and leaves alone an issuer a chart renders (a later wave may make it), another group\'s issuer and a request that is not waiting on its issuer', () => {
    const missing = request({ kind: 'ClusterIssuer', name: 'no-such-ca' }, notFound('ClusterIssuer', 'clusterissuer', 'no-such-ca'));
    expect([...missingIssuers([missing], [clusterIssuer('local-ca')]).values()]).toEqual([expect.stringMatching(/no rendered chart makes the ClusterIssuer "no-such-ca"$/)]);
    expect(missingIssuers([missing], [clusterIssuer('no-such-ca')]).size).toBe(0);
    const namespaced = request({ kind: 'Issuer', name: 'team-ca' }, notFound('Issuer', 'issuer', 'team-ca'));
    expect(missingIssuers([namespaced], [{ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'team-ca', namespace: 'webapp' } }]).size).toBe(0);
    expect(missingIssuers([namespaced], [{ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'team-ca', namespace: 'billing' } }]).size).toBe(1);
    expect(missingIssuers([request({ group: 'awspca.cert-manager.io', kind: 'AWSPCAClusterIssuer', name: 'pca' }, 'Waiting on issuer')], []).size).toBe(0);
    expect(missingIssuers([request({ kind: 'ClusterIssuer', name: 'local-ca' }, 'Certificate request has been approved by cert-manager.io', 'Issued')], []).size).toBe(0);
  });
});

describe("Envoy Gateway's topology injector as the report sees it (e2e/envoy-gateway.ts proxyTopology)", () => {
  it("reads each bound Envoy proxy pod's zone annotation beside its node's zone, and no other pod", async () => {
    const node = (name: string, zone?: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, ...(zone === undefined ? {} : { labels: { [TOPOLOGY_INJECTOR.zoneKey]: zone } }) } });
    const pod = (name: string, labels: Record<string, string>, nodeName?: string, zone?: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'envoy-gateway-system', labels, ...(zone === undefined ? {} : { annotations: { [TOPOLOGY_INJECTOR.zoneKey]: zone } }) },
      spec: nodeName === undefined ? {} : { nodeName },
    });
    const proxy = { ...TOPOLOGY_INJECTOR.proxyLabels, 'gateway.envoyproxy.io/owning-gateway-name': 'platform' };
    const objects = [
      node('node-a', 'zone-a'),
      node('node-b'),
      pod('envoy-2', proxy, 'node-b'),
      pod('envoy-1', proxy, 'node-a', '"zone-a"'),
      pod('envoy-pending', proxy),
      pod('envoy-gateway-0', { 'control-plane': 'envoy-gateway' }, 'node-a'),
    ];
    const client = {
      list: async (_apiVersion: string, kind: string) => objects.filter((o) => o.kind === kind),
      get: async (_apiVersion: string, kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name),
    };
    expect(await proxyTopology(client)).toEqual([
      { pod: 'envoy-gateway-system/envoy-1', node: 'node-a', nodeZone: 'zone-a', zone: '"zone-a"' },
      { pod: 'envoy-gateway-system/envoy-2', node: 'node-b' },
    ]);
  });

  it("calls for certgen again when Argo CD made its configuration anew, without the Secret's CA", () => {
    const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'envoy-gateway', namespace: 'envoy-gateway-system' }, data: { 'ca.crt': 'Q0E=' } };
    const configuration = (caBundle?: string): KubeObject => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: `${TOPOLOGY_INJECTOR.configurationPrefix}.envoy-gateway-system` },
      webhooks: [{ name: 'topology.webhook.gateway.envoyproxy.io', clientConfig: { service: { name: 'envoy-gateway', namespace: 'envoy-gateway-system', port: 9443 }, ...(caBundle === undefined ? {} : { caBundle }) } }],
    });
    expect(caBundleStale(configuration(), secret)).toBe(true);
    expect(caBundleStale(configuration('b3RoZXI='), secret)).toBe(true);
    expect(caBundleStale(configuration('Q0E='), secret)).toBe(false);
    expect(caBundleStale(undefined, secret)).toBe(false);
    expect(caBundleStale(configuration(), undefined)).toBe(false);
  });

  it('is off when the EnvoyGateway configuration disables it, on otherwise', () => {
    expect(topologyInjectorDisabled('kind: EnvoyGateway\nprovider:\n  type: Kubernetes\n  kubernetes:\n    proxyTopologyInjector:\n      disable: true\n')).toBe(true);
    expect(topologyInjectorDisabled('kind: EnvoyGateway\nprovider:\n  type: Kubernetes\n')).toBe(false);
  });
});
