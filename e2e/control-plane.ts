import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { KubeClient, type KubeObject } from './kube-client';
import { freePort } from './loopback';
import type { ClusterPki, Pki } from './pki';
import { type Supervisor, waitFor } from './processes';
import { KWOK_ADMITTED_ANNOTATION, kwokStages, NODE_IP_ANNOTATION } from './kwok-stages';
import type { Toolchain } from '../toolchain';
import { projectRoot } from '../src/base/project-root';
import type { ClusterEgress } from './cluster-egress';

/** kwok's Exec, PortForward and Logs CRDs (e2e/crds/, copied from kwok v0.8.0 with their provenance). */
function readKwokCrds(): KubeObject[] {
  const dir = path.join(projectRoot(), 'e2e', 'crds');
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => parse(fs.readFileSync(path.join(dir, file), 'utf8')) as KubeObject);
}

/** Simulated nodes, one per zone, so spread constraints over zones and hosts can be met. */
export const NODE_ZONES = ['a', 'b', 'c'] as const;

/** Service ClusterIPs are allocated from here; only the API server's egress (e2e/cluster-egress.ts) sends anything to them. */
const SERVICE_CIDR = '10.96.0.0/16';

/** A running control plane: its client, kubeconfig and certificates. */
export interface ControlPlane {
  readonly client: KubeClient;
  readonly kubeconfig: string;
  readonly pki: ClusterPki;
  readonly server: string;
  /** The API server's own version, as it reports it. */
  readonly version: string;
  /** etcd's client URL. */
  readonly etcd: string;
}

/** A kubeconfig for the cluster at `server` as `user` (a client certificate: its CN the user, its O the group). */
export function writeKubeconfig(file: string, server: string, pki: Pick<ClusterPki, 'ca'>, namespace: string, user: { cert: string; key: string } = (pki as ClusterPki).admin): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority': pki.ca.cert } }],
    users: [{ name: 'user', user: { 'client-certificate': user.cert, 'client-key': user.key } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'user', namespace } }],
    'current-context': 'e2e',
  };
  fs.writeFileSync(file, stringify(config), { mode: 0o600 });
}

/**
 * etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, all on
 * 127.0.0.1 with per-run certificates, as envtest runs a control plane for controller
 * tests, plus kwok for nodes and the pod lifecycle (no kubelet, no container runtime).
 */
export async function startControlPlane(options: {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  readonly dir: string;
  /** Where the run's certificates are made. */
  readonly pki: Pki;
  /** Namespace of the kubeconfig's context (Argo CD reads its own namespace from it). */
  readonly namespace: string;
  /** Where the API server sends what it sends into the cluster network (webhooks behind Services, kubelets). */
  readonly egress: ClusterEgress;
  readonly log: (line: string) => void;
}): Promise<ControlPlane> {
  const { toolchain, supervisor, dir, log } = options;
  const alive = (): void => supervisor.assertRunning();
  const pki = options.pki.cluster();

  const etcd = await startEtcd({ toolchain, supervisor, dir });
  await options.egress.listen(path.join(dir, 'cluster-egress.sock'));
  const egressSelector = path.join(dir, 'egress-selector.yaml');
  options.egress.writeConfiguration(egressSelector);
  const { client, server } = await startApiServer({ toolchain, supervisor, dir, pki, etcd, name: 'kube-apiserver', etcdPrefix: '/registry', egressSelector });
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, server, pki, options.namespace);
  const version = await client.version();
  log(`kube-apiserver ${version} ready at ${server}`);

  // Both controllers talk to the API server as the administrator, serve nothing, run alone.
  const clientFlags = [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    '--secure-port=0',
    '--leader-elect=false',
  ];
  supervisor.start({
    name: 'kube-controller-manager',
    command: toolchain.bin('kubernetes', 'kube-controller-manager'),
    args: [
      ...clientFlags,
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--root-ca-file=${pki.ca.cert}`,
      '--use-service-account-credentials=true',
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--v=1',
    ],
  });
  supervisor.start({
    name: 'kube-scheduler',
    command: toolchain.bin('kubernetes', 'kube-scheduler'),
    args: [...clientFlags, '--v=1'],
  });

  // kwok's kubelet API: the API server sends a pod's exec and port-forward there, and kwok
  // maps them (and a pod's logs) to local processes and files as its Exec, PortForward and Logs objects say (e2e/live-containers.ts).
  for (const crd of readKwokCrds()) await client.apply(crd);
  const kubeletPort = await freePort();
  const kubelet = options.pki.leaf('kwok-kubelet', pki.ca, '/CN=e2e-kwok-kubelet', 'server', ['localhost'], ['127.0.0.1']);
  const kwokConfig = path.join(dir, 'kwok.yaml');
  fs.writeFileSync(kwokConfig, kwokStages(kubeletPort));
  supervisor.start({
    name: 'kwok',
    command: toolchain.bin('kwok', 'kwok'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--config=${kwokConfig}`,
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      `--server-address=127.0.0.1:${kubeletPort}`,
      `--tls-cert-file=${kubelet.cert}`,
      `--tls-private-key-file=${kubelet.key}`,
      '--enable-crds=Exec,PortForward,Logs',
      '--node-lease-duration-seconds=40',
    ],
  });

  for (const zone of NODE_ZONES) await client.apply(nodeObject(zone));
  await waitFor('the simulated nodes to be Ready', 60_000, async () => {
    const nodes = await client.list('v1', 'Node');
    const ready = nodes.filter((n) => (n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'));
    return ready.length === NODE_ZONES.length ? true : undefined;
  }, alive);
  await waitFor('the default ServiceAccount', 60_000, async () => ((await client.get('v1', 'ServiceAccount', 'default', 'default')) ? true : undefined), alive);
  log(`nodes ${NODE_ZONES.map((z) => `e2e-node-${z}`).join(', ')} Ready (kwok ${toolchain.versions.kwok}); pods start once the kubelet's checks pass (${KWOK_ADMITTED_ANNOTATION})`);
  return { client, kubeconfig, pki, server, version, etcd };
}

/** etcd on loopback, a throwaway store (no fsync, as envtest runs it); its client URL. */
export async function startEtcd(options: { readonly toolchain: Toolchain; readonly supervisor: Supervisor; readonly dir: string }): Promise<string> {
  const { toolchain, supervisor, dir } = options;
  const etcdClient = await freePort();
  const etcdPeer = await freePort();
  supervisor.start({
    name: 'etcd',
    command: toolchain.bin('etcd', 'etcd'),
    args: [
      '--name=e2e',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=e2e=http://127.0.0.1:${etcdPeer}`,
      '--listen-metrics-urls=',
      // A throwaway cluster: no fsync, as envtest does.
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
  });

  return `http://127.0.0.1:${etcdClient}`;
}

/**
 * A kube-apiserver on its own port and etcd prefix: an empty cluster sharing the run's
 * etcd and certificates (no controllers, no nodes), where every environment can be
 * server-side dry-run without meeting the objects the converged environment left behind.
 */
export async function startApiServer(options: {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  readonly dir: string;
  readonly pki: ClusterPki;
  readonly etcd: string;
  readonly name: string;
  readonly etcdPrefix: string;
  /** @default 0 */
  readonly niceness?: number;
  /** How long it may take to become ready. @default 60_000 */
  readonly readyTimeoutMs?: number;
  /** Runs between the readiness checks, beside the check that every process runs; throws to stop waiting. @default none */
  readonly check?: () => void;
  /** Its EgressSelectorConfiguration file (e2e/cluster-egress.ts). @default none: it dials the cluster network directly */
  readonly egressSelector?: string;
}): Promise<{ client: KubeClient; server: string }> {
  const { pki } = options;
  const port = await freePort();
  const server = `https://127.0.0.1:${port}`;
  options.supervisor.start({
    name: options.name,
    command: options.toolchain.bin('kubernetes', 'kube-apiserver'),
    ...(options.niceness === undefined ? {} : { niceness: options.niceness }),
    args: [
      `--etcd-servers=${options.etcd}`,
      `--etcd-prefix=${options.etcdPrefix}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${port}`,
      `--tls-cert-file=${pki.apiserver.cert}`,
      `--tls-private-key-file=${pki.apiserver.key}`,
      `--client-ca-file=${pki.ca.cert}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--authorization-mode=RBAC',
      '--allow-privileged=true',
      // 127.0.0.1 may not be an endpoint of the `kubernetes` Service; nothing dials it.
      '--endpoint-reconciler-type=none',
      // A node's kubelet is kwok on loopback: its InternalDNS address is localhost (its
      // InternalIP is TEST-NET, for Envoy Gateway's NodePort addresses), and kwok's serving
      // certificate is not checked (no --kubelet-certificate-authority), as on kind.
      '--kubelet-preferred-address-types=InternalDNS',
      `--kubelet-client-certificate=${pki.admin.cert}`,
      `--kubelet-client-key=${pki.admin.key}`,
      `--cert-dir=${path.join(options.dir, `${options.name}-certs`)}`,
      '--profiling=false',
      // No gzip of responses (k8s.io/apiserver WithCompression, beta and on by default): every
      // client is on loopback, where compressing a large list only costs both ends CPU. The
      // OpenAPI document is compressed by its own handler for a client that asks (Argo CD's
      // is told not to: e2e/argocd.ts loopbackClusterSecret). A deviation docs/e2e.md lists.
      '--feature-gates=APIResponseCompression=false',
      ...(options.egressSelector === undefined ? [] : [`--egress-selector-config-file=${options.egressSelector}`]),
      '--v=1',
    ],
  });
  const client = new KubeClient(server, { ca: pki.ca.cert, cert: pki.admin.cert, key: pki.admin.key });
  await waitFor(`${options.name} /readyz`, options.readyTimeoutMs ?? 60_000, async () => ((await client.ready()) ? true : undefined), () => {
    options.check?.();
    options.supervisor.assertRunning();
  });
  return { client, server };
}

function nodeObject(zone: string): KubeObject {
  const name = `e2e-node-${zone}`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0', [NODE_IP_ANNOTATION]: `192.0.2.${NODE_ZONES.indexOf(zone as (typeof NODE_ZONES)[number]) + 1}` },
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': name,
        'topology.kubernetes.io/zone': `zone-${zone}`,
        'topology.kubernetes.io/region': 'e2e',
        type: 'kwok',
      },
    },
    spec: {},
    status: {
      allocatable: { cpu: '32', memory: '128Gi', pods: '250', 'ephemeral-storage': '500Gi' },
      capacity: { cpu: '32', memory: '128Gi', pods: '250', 'ephemeral-storage': '500Gi' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: 'kwok', kubeProxyVersion: 'kwok' },
    },
  };
}
