import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';
import type { Toolchain } from '../toolchain';
import { condition, rolloutState } from '../src/cluster/workloads';
import { ENVOY_GATEWAY, GATEWAY } from '../src/contract/upstream';
import type { KubeClient, KubeObject } from './kube-client';
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
 * `certgen`, as the chart's certgen Job does.
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
 * Make the control plane's certificates (its `certgen`, which writes the `envoy-gateway` and
 * `envoy` Secrets into its namespace), then start it. Its xDS certificates are read from
 * /certs: it runs in a private mount namespace where the run's copy of the `envoy-gateway`
 * Secret is mounted there, so nothing is written outside the run folder (an empty /certs
 * directory is created once as the mount point when the machine has none).
 */
export async function startEnvoyGateway(options: EnvoyGatewayOptions): Promise<void> {
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
