import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { E2eError } from '../src/base/errors';
import { compareText } from '../src/base/text-order';
import type { Toolchain } from '../toolchain';
import { condition, rolloutState } from '../src/cluster/workloads';
import { ENVOY_GATEWAY, GATEWAY } from '../src/contract/upstream';
import type { ClusterEgress } from './cluster-egress';
import type { KubeClient, KubeObject } from './kube-client';
import { listening } from './loopback';
import { run, type Supervisor, waitFor } from './processes';

/**
 * Envoy Gateway's real control plane (envoyproxy/gateway, the version the platform installs,
 * built by toolchain/build.sh) on loopback against the e2e API server: it accepts the
 * GatewayClass, Gateways and HTTPRoutes by its own rules and creates each Gateway's Envoy
 * Deployment and Service, which kwok runs; a Gateway is Programmed when they are available.
 *
 * Configured as the platform's release configures it: its EnvoyGateway configuration is the
 * one the real `gateway-helm` chart (from the same module) renders from the platform's values
 * for that release (src/infrastructure/releases.ts), and its certificates are made by its own
 * `certgen`, as the chart's certgen Job does. Its topology injector webhook is served: the
 * API server reaches it through the cluster egress (`routeTopologyInjector`).
 */

/**
 * The fixed ports Envoy Gateway's control plane listens on, whatever its configuration says of
 * them (v1.9.1: xDS 18000, internal/xds/bootstrap/bootstrap.go; wasm 18002; admin 19000 and
 * metrics 19001, api/v1alpha1/envoygateway_types.go; health probe 8081 and webhook 9443,
 * internal/provider/kubernetes/kubernetes.go). Two runs on one loopback would both take them:
 * the harness refuses at its start when one is taken (`assertFixedPortsFree`, e2e/loopback.ts).
 */
export const ENVOY_GATEWAY_PORTS: Readonly<Record<number, string>> = {
  8081: "Envoy Gateway's health probe",
  [ENVOY_GATEWAY.webhookPort]: "Envoy Gateway's webhook",
  [ENVOY_GATEWAY.xdsPort]: "Envoy Gateway's xDS server",
  18002: "Envoy Gateway's wasm server",
  19000: "Envoy Gateway's admin server",
  19001: "Envoy Gateway's metrics server",
};

/** Where the control plane reads its xDS certificates when its provider is Kubernetes (internal/xds/runner/runner.go). */
const CERTIFICATE_DIR = '/certs';

export interface EnvoyGatewayOptions {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  readonly client: KubeClient;
  /** The run folder. */
  readonly dir: string;
  readonly kubeconfig: string;
  /** The API server's way to the topology injector's Service. */
  readonly egress: Pick<ClusterEgress, 'route'>;
  /** The controller Deployment Argo CD created from the chart. */
  readonly deployment: KubeObject;
  readonly log: (line: string) => void;
}

/** What the control plane's container in the chart's Deployment runs with: its arguments, literal environment and mounts. */
export interface EnvoyGatewayContainer {
  /** `server` and its flags, `--config-path` naming a file of a mounted ConfigMap. */
  readonly args: readonly string[];
  /** The variables with a literal value (ENVOY_GATEWAY_NAMESPACE is the pod's namespace). */
  readonly env: Readonly<Record<string, string>>;
  /** The ConfigMap and key `--config-path` reads, and the argument's place. */
  readonly config: { readonly configMap: string; readonly key: string; readonly index: number };
  /** Where the container mounts the `envoy-gateway` Secret (its xDS certificates). */
  readonly certificates: string;
}

/** The control plane's container of the Deployment Argo CD created from the real chart. */
export function envoyGatewayContainerOf(deployment: KubeObject): EnvoyGatewayContainer {
  const where = `Deployment ${deployment.metadata.namespace}/${deployment.metadata.name}`;
  const spec = deployment.spec?.template?.spec ?? {};
  const container = (spec.containers ?? []).find((c: { name: string }) => c.name === 'envoy-gateway');
  const args: unknown = container?.args;
  if (!Array.isArray(args) || args[0] !== 'server' || container.command !== undefined) throw new E2eError(`${where} has no envoy-gateway container running \`server\` with its flags`);
  const volumes = new Map<string, any>((spec.volumes ?? []).map((v: { name: string }) => [v.name, v]));
  const mounts = (container.volumeMounts ?? []) as { name: string; mountPath: string }[];
  const index = args.findIndex((arg: string) => arg.startsWith('--config-path='));
  const file = index === -1 ? undefined : String(args[index]).slice('--config-path='.length);
  const mount = file === undefined ? undefined : mounts.find((m) => file.startsWith(`${m.mountPath.replace(/\/$/, '')}/`) && volumes.get(m.name)?.configMap?.name !== undefined);
  if (file === undefined || mount === undefined) throw new E2eError(`${where}: envoy-gateway's --config-path names no file of a mounted ConfigMap`);
  const certificates = mounts.find((m) => volumes.get(m.name)?.secret?.secretName === 'envoy-gateway')?.mountPath;
  if (certificates !== CERTIFICATE_DIR) throw new E2eError(`${where}: envoy-gateway mounts its Secret envoy-gateway at ${certificates ?? 'no path'}, not at ${CERTIFICATE_DIR}, where the control plane reads its xDS certificates`);
  const env = Object.fromEntries(((container.env ?? []) as { name: string; value?: string }[]).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
  return { args, env, config: { configMap: volumes.get(mount.name).configMap.name, key: file.slice(mount.mountPath.replace(/\/$/, '').length + 1), index }, certificates };
}

/**
 * Envoy Gateway's topology injector (v1.9.1), a mutating webhook on the `pods/binding` CREATE of
 * its namespace: the control plane serves it at `/inject-pod-topology` on its fixed webhook port
 * (internal/provider/kubernetes/kubernetes.go `webhookTLSPort` 9443, all interfaces, TLS from
 * /certs `tls.crt` and `tls.key`: the `envoy-gateway` Secret certgen makes, for the
 * `envoy-gateway` Service's names, internal/crypto/certgen.go `kubeServiceNames`), unless its
 * EnvoyGateway configuration says `provider.kubernetes.proxyTopologyInjector.disable: true`.
 * The chart registers it (templates/envoy-proxy-topology-injector-webhook.yaml:
 * `envoy-gateway-topology-injector.<namespace>`, failure policy Ignore, Service `envoy-gateway`
 * port 9443), certgen writes its caBundle (internal/cmd/certgen.go). For the binding of an Envoy
 * proxy pod (`proxyLabels` and an owning Gateway or GatewayClass label) to a node labelled
 * `topology.kubernetes.io/zone`, it adds that zone, quoted by Go's `%q`, as the binding's
 * annotation of the same name (internal/provider/kubernetes/topology_injector.go); the API
 * server copies a binding's annotations onto the pod (k8s.io/kubernetes v1.36.3
 * pkg/registry/core/pod/storage/storage.go `setPodNodeAndMetadata`). The proxy's container reads
 * it as ENVOY_SERVICE_ZONE (internal/infrastructure/kubernetes/proxy/resource.go), its Envoy's
 * locality zone (internal/xds/bootstrap/bootstrap.yaml.tpl), which zone-aware routing reads.
 */
export const TOPOLOGY_INJECTOR = {
  configurationPrefix: 'envoy-gateway-topology-injector',
  path: '/inject-pod-topology',
  zoneKey: 'topology.kubernetes.io/zone',
  proxyLabels: { 'app.kubernetes.io/component': 'proxy', 'app.kubernetes.io/managed-by': 'envoy-gateway', 'app.kubernetes.io/name': 'envoy' },
} as const;

/** Whether the control plane's EnvoyGateway configuration (the ConfigMap's YAML) turns the topology injector off: then it serves no webhook. */
export function topologyInjectorDisabled(config: string): boolean {
  return (parse(config) as any)?.provider?.kubernetes?.proxyTopologyInjector?.disable === true;
}

/** A Service's ClusterIP and port that the cluster egress sends to a loopback port. */
export interface EgressRoute {
  /** `<namespace>/<name>` of the Service. */
  readonly service: string;
  readonly address: string;
  readonly port: number;
  readonly localPort: number;
}

/**
 * Where the cluster egress sends the API server's calls of the topology injector's webhook
 * configuration: each webhook's Service (ClusterIP and the port it calls) to the control plane's
 * webhook port on loopback. The Service's port must send to that port (its target port by
 * number, or by the name of the envoy-gateway container's port in `deployment`): a Service
 * missing, without a ClusterIP or sending elsewhere is refused, naming it.
 */
export function topologyInjectorRoutes(configuration: KubeObject, services: readonly KubeObject[], deployment: KubeObject): EgressRoute[] {
  const container = (deployment.spec?.template?.spec?.containers ?? []).find((c: { name: string }) => c.name === 'envoy-gateway');
  const named = new Map<string, number>(((container?.ports ?? []) as { name?: string; containerPort: number }[]).filter((p) => p.name !== undefined).map((p) => [p.name!, p.containerPort]));
  const routes: EgressRoute[] = [];
  for (const webhook of (configuration.webhooks ?? []) as { name: string; clientConfig?: { service?: { name: string; namespace: string; port?: number } } }[]) {
    const ref = webhook.clientConfig?.service;
    if (ref === undefined) throw new E2eError(`MutatingWebhookConfiguration ${configuration.metadata.name}: webhook ${webhook.name} calls no Service, where the control plane serves it`);
    const id = `${ref.namespace}/${ref.name}`;
    const port = ref.port ?? 443;
    const service = services.find((s) => s.metadata.namespace === ref.namespace && s.metadata.name === ref.name);
    const address = service?.spec?.clusterIP;
    if (typeof address !== 'string' || address === '' || address === 'None') throw new E2eError(`MutatingWebhookConfiguration ${configuration.metadata.name}: webhook ${webhook.name} calls Service ${id}, which has no ClusterIP`);
    const servicePort = ((service!.spec.ports ?? []) as { port: number; targetPort?: number | string }[]).find((p) => p.port === port);
    const target = servicePort === undefined ? undefined : typeof servicePort.targetPort === 'string' ? named.get(servicePort.targetPort) : (servicePort.targetPort ?? servicePort.port);
    if (target !== ENVOY_GATEWAY.webhookPort) {
      throw new E2eError(`MutatingWebhookConfiguration ${configuration.metadata.name}: webhook ${webhook.name} calls Service ${id} port ${port}, which ${servicePort === undefined ? 'it does not have' : `sends to ${String(servicePort.targetPort)}`}, not to Envoy Gateway's webhook port ${ENVOY_GATEWAY.webhookPort}`);
    }
    routes.push({ service: id, address, port, localPort: ENVOY_GATEWAY.webhookPort });
  }
  return routes;
}

/**
 * Route the topology injector's Service through the cluster egress to the control plane's
 * webhook port, and wait until it listens there (one webhook port per loopback: the run's own
 * network namespace, or the fixed ports' check at the start, `ENVOY_GATEWAY_PORTS`).
 */
async function serveTopologyInjector(options: EnvoyGatewayOptions, config: string): Promise<void> {
  const { supervisor, client, egress, deployment, log } = options;
  const namespace = deployment.metadata.namespace!;
  const name = `${TOPOLOGY_INJECTOR.configurationPrefix}.${namespace}`;
  if (topologyInjectorDisabled(config)) {
    log(`Envoy Gateway's topology injector is off (proxyTopologyInjector.disable in its configuration): MutatingWebhookConfiguration ${name} is not routed`);
    return;
  }
  const alive = () => supervisor.assertRunning();
  const configuration = await client.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', name);
  if (configuration === undefined) {
    log(`Envoy Gateway's topology injector: the chart installed no MutatingWebhookConfiguration ${name} (topologyInjector.enabled false), nothing routed`);
    return;
  }
  const refs = ((configuration.webhooks ?? []) as { clientConfig?: { service?: { name: string; namespace: string } } }[]).flatMap((w) => (w.clientConfig?.service === undefined ? [] : [w.clientConfig.service]));
  const services: KubeObject[] = [];
  for (const ref of refs) {
    services.push(
      await waitFor(`Service ${ref.namespace}/${ref.name} with a ClusterIP`, 60_000, async () => {
        const object = await client.get('v1', 'Service', ref.name, ref.namespace);
        return object?.spec?.clusterIP ? object : undefined;
      }, alive),
    );
  }
  const routes = topologyInjectorRoutes(configuration, services, deployment);
  for (const route of routes) egress.route(route.address, route.port, route.localPort);
  await waitFor("Envoy Gateway's topology injector webhook to listen", 60_000, () => listening(ENVOY_GATEWAY.webhookPort), alive);
  log(`Envoy Gateway's topology injector served (${TOPOLOGY_INJECTOR.path} on port ${ENVOY_GATEWAY.webhookPort}): ${routes.map((r) => `Service ${r.service} (${r.address}:${r.port})`).join(', ')} routed to it, as MutatingWebhookConfiguration ${name} calls it`);
}

/** An Envoy proxy pod of a Gateway: its node, the node's zone and the zone annotation the topology injector put on its binding. */
export interface ProxyTopology {
  /** `<namespace>/<name>`. */
  readonly pod: string;
  readonly node: string;
  /** The node's `topology.kubernetes.io/zone` label; absent without one. */
  readonly nodeZone?: string;
  /** The pod's `topology.kubernetes.io/zone` annotation; absent when the injector did not run. */
  readonly zone?: string;
}

/** Every bound Envoy proxy pod (the injector's `proxyLabels`), with its node's zone and its own zone annotation, ordered by pod. */
export async function proxyTopology(client: Pick<KubeClient, 'list' | 'get'>): Promise<ProxyTopology[]> {
  const pods = (await client.list('v1', 'Pod')).filter(
    (pod) => Object.entries(TOPOLOGY_INJECTOR.proxyLabels).every(([key, value]) => pod.metadata.labels?.[key] === value) && typeof pod.spec?.nodeName === 'string' && pod.spec.nodeName !== '',
  );
  const result: ProxyTopology[] = [];
  for (const pod of pods) {
    const node = String(pod.spec.nodeName);
    const nodeZone = (await client.get('v1', 'Node', node))?.metadata.labels?.[TOPOLOGY_INJECTOR.zoneKey];
    const zone = pod.metadata.annotations?.[TOPOLOGY_INJECTOR.zoneKey];
    result.push({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, node, ...(nodeZone === undefined ? {} : { nodeZone }), ...(zone === undefined ? {} : { zone }) });
  }
  return result.sort((a, b) => compareText(a.pod, b.pod));
}

/**
 * Make the control plane's certificates (its `certgen`, which writes the `envoy-gateway` and
 * `envoy` Secrets into its namespace), then start it. Its xDS certificates are read from
 * /certs: it runs in a private mount namespace where the run's copy of the `envoy-gateway`
 * Secret is mounted there, so nothing is written outside the run folder (an empty /certs
 * directory is created once as the mount point when the machine has none).
 */
export async function startEnvoyGateway(options: EnvoyGatewayOptions): Promise<StartedEnvoyGateway> {
  const { toolchain, supervisor, client, dir, kubeconfig, deployment, log } = options;
  const namespace = deployment.metadata.namespace!;
  const work = path.join(dir, 'envoy-gateway');
  fs.mkdirSync(work, { recursive: true });
  const binary = toolchain.bin('envoy-gateway', 'envoy-gateway');
  const container = envoyGatewayContainerOf(deployment);
  const env = { ...container.env, KUBECONFIG: kubeconfig, ENVOY_GATEWAY_NAMESPACE: namespace };

  // The configuration its pod mounts: the ConfigMap Argo CD applied with the Deployment.
  const configMap = await waitFor(`ConfigMap ${namespace}/${container.config.configMap}`, 60_000, () => client.get('v1', 'ConfigMap', container.config.configMap, namespace), () => supervisor.assertRunning());
  const config = (configMap as KubeObject).data?.[container.config.key];
  if (typeof config !== 'string') throw new E2eError(`ConfigMap ${namespace}/${container.config.configMap} has no key ${container.config.key}, which envoy-gateway's --config-path reads`);
  const configFile = path.join(work, 'envoy-gateway.yaml');
  fs.writeFileSync(configFile, config);
  const args = container.args.map((arg, index) => (index === container.config.index ? `--config-path=${configFile}` : arg));

  // What the chart's certgen Job runs (`envoy-gateway certgen`): the Secrets, and the CA of the
  // topology injector's webhook configuration, which the chart installs before the Deployment.
  run(binary, ['certgen'], { env, cwd: work });
  const secret = await client.get('v1', 'Secret', 'envoy-gateway', namespace);
  if (!secret) throw new E2eError(`envoy-gateway certgen made no Secret envoy-gateway in ${namespace}`);
  const certificates = path.join(work, 'certs');
  fs.mkdirSync(certificates, { recursive: true, mode: 0o700 });
  for (const file of ['ca.crt', 'tls.crt', 'tls.key']) {
    const data = (secret as any).data?.[file];
    if (typeof data !== 'string') throw new E2eError(`Secret ${namespace}/envoy-gateway has no ${file}`);
    fs.writeFileSync(path.join(certificates, file), Buffer.from(data, 'base64'), { mode: 0o600 });
  }
  fs.mkdirSync(CERTIFICATE_DIR, { recursive: true });

  supervisor.start({
    name: 'envoy-gateway',
    command: 'unshare',
    args: [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      `mount --bind "$0" ${CERTIFICATE_DIR} && exec "$@"`,
      certificates,
      binary,
      ...args,
    ],
    env,
    cwd: work,
  });
  log(`Envoy Gateway ${toolchain.versions['envoy-gateway']} control plane started (${args.join(' ')}: the arguments and configuration of the Deployment and ConfigMap Argo CD created from its chart; certificates by its certgen)`);
  await serveTopologyInjector(options, config);
  const name = `${TOPOLOGY_INJECTOR.configurationPrefix}.${namespace}`;
  type Read = (apiVersion: string, kind: string, object: string, within?: string) => Promise<KubeObject | undefined>;
  const stale = async (read: Read) =>
    caBundleStale(await read('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', name), await read('v1', 'Secret', 'envoy-gateway', namespace));
  // Each pass reads the client's watch cache (a list of a watched kind asks the server
  // nothing); the server is asked only to confirm before certgen runs.
  const cached: Read = async (apiVersion, kind, object, within) => (await client.list(apiVersion, kind, within)).find((o) => o.metadata.name === object);
  const served: Read = (apiVersion, kind, object, within) => client.get(apiVersion, kind, object, within);
  return {
    certgenAgain: async () => {
      if (topologyInjectorDisabled(config) || !(await stale(cached)) || !(await stale(served))) return false;
      run(binary, ['certgen'], { env, cwd: work });
      log(`Envoy Gateway's certgen run again: MutatingWebhookConfiguration ${name}, made anew by Argo CD's sync of the release, lacked the CA of Secret ${namespace}/envoy-gateway (the chart's certgen Job, which kwok completes, would write it)`);
      return true;
    },
  };
}

/** The control plane once started. */
export interface StartedEnvoyGateway {
  /** Run certgen again when the topology injector's configuration lacks the CA (`caBundleStale`); true when it ran. */
  certgenAgain(): Promise<boolean>;
}

/**
 * Whether the topology injector's configuration lacks the CA of the `envoy-gateway` Secret: it
 * is a Helm hook, which Argo CD deletes and makes anew on each sync of the release (a hook that
 * names no deletion policy, as the chart's do, gets BeforeHookCreation: argo-cd gitops-engine
 * v3.6.1 pkg/sync/hook/delete_policy.go), without the caBundle; in a cluster the chart's certgen
 * Job, a hook of the same sync, writes it again (internal/cmd/certgen.go
 * `patchTopologyInjectorWebhook`, which keeps existing Secrets without `--overwrite`), but kwok
 * completes that Job without running it, so the harness runs certgen as the Job would.
 * Without the configuration or the Secret: false (nothing to patch, or certgen has not run).
 */
export function caBundleStale(configuration: KubeObject | undefined, secret: KubeObject | undefined): boolean {
  const ca = secret?.data?.['ca.crt'];
  if (configuration === undefined || typeof ca !== 'string') return false;
  return ((configuration.webhooks ?? []) as { clientConfig?: { caBundle?: string } }[]).some((webhook) => webhook.clientConfig?.caBundle !== ca);
}

/** How long a Gateway may stay unprogrammed with its Envoy Service and Deployment ready before it is judged again. */
export const STUCK_GATEWAY_SECONDS = 10;

/** Reasons of a Gateway's Programmed=False that Envoy Gateway derives from its Envoy Service and Deployment (v1.9.1 internal/gatewayapi/status/gateway.go). */
const INFRASTRUCTURE_REASONS = new Set(['AddressNotAssigned', 'NoResources']);

/** The annotation the harness touches an Envoy Service with, to have Envoy Gateway judge its Gateway again. */
export const REJUDGE_ANNOTATION = 'e2e.platform-gitops.dev/rejudged-at';

/**
 * Envoy Gateway v1.9.1 sometimes leaves a Gateway Programmed=False (`AddressNotAssigned`,
 * "Envoy replicas unavailable") after its Envoy Service and Deployment became ready:
 * envoyproxy/gateway#9432 (open), with #8953 and #9567 of the same kind, where a restart of
 * the control plane or any update of the Envoy Service or Deployment recovers it. Seen on the
 * e2e cluster: the Envoy Deployment became Available within the second its Gateway was judged,
 * and the Gateway stayed unprogrammed for minutes until its Service was annotated, when it was
 * Programmed at once. This does what an operator does there: once per such condition, after
 * `STUCK_GATEWAY_SECONDS`, it annotates the Gateway's Envoy Service, and Envoy Gateway judges
 * the Gateway again by its own rules. Ready is the Service there and the Deployment's rollout
 * complete (`rolloutState`, as `kubectl rollout status` tests it). A Gateway whose Envoy
 * Service or Deployment is not ready, or unprogrammed for another reason, is left alone.
 */
export class StuckGateways {
  /** `<namespace>/<name>` of each Gateway touched, to the lastTransitionTime of the condition it was touched for. */
  private readonly touched = new Map<string, string>();

  constructor(
    private readonly client: KubeClient,
    /** Envoy Gateway's namespace, where each Gateway's Envoy Service and Deployment live. */
    private readonly namespace: string,
    private readonly log: (line: string) => void,
  ) {}

  async poll(now = Date.now()): Promise<void> {
    const stuck = (await this.client.list('gateway.networking.k8s.io/v1', 'Gateway')).flatMap((gateway) => {
      const programmed = condition(gateway, 'Programmed');
      const since = programmed?.lastTransitionTime ?? '';
      if (programmed?.status !== 'False' || !INFRASTRUCTURE_REASONS.has(programmed.reason ?? '')) return [];
      if (now - Date.parse(since) < STUCK_GATEWAY_SECONDS * 1000) return [];
      const key = `${gateway.metadata.namespace}/${gateway.metadata.name}`;
      return this.touched.get(key) === since ? [] : [{ gateway, key, since, reason: programmed.reason }];
    });
    if (stuck.length === 0) return;
    const owned = (objects: readonly KubeObject[], gateway: KubeObject) =>
      objects.filter(
        (object) =>
          object.metadata.labels?.[GATEWAY.owningGatewayNameLabel] === gateway.metadata.name && object.metadata.labels?.[GATEWAY.owningGatewayNamespaceLabel] === gateway.metadata.namespace,
      );
    const services = await this.client.list('v1', 'Service', this.namespace);
    const deployments = await this.client.list('apps/v1', 'Deployment', this.namespace);
    for (const { gateway, key, since, reason } of stuck) {
      const [service] = owned(services, gateway);
      const ready = owned(deployments, gateway).some((deployment) => rolloutState(deployment).done);
      if (service === undefined || !ready) continue;
      this.touched.set(key, since);
      this.log(
        `Envoy Gateway left Gateway ${key} Programmed=False (${reason}) since ${since} with its Envoy Service and Deployment ready (envoyproxy/gateway#9432): Service ${this.namespace}/${service.metadata.name} annotated, to be judged again`,
      );
      await this.client.mergePatch(service, { metadata: { annotations: { [REJUDGE_ANNOTATION]: new Date(now).toISOString() } } });
    }
  }
}
