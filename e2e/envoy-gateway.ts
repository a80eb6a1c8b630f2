import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';
import type { Toolchain } from '../toolchain';
import type { KubeClient } from './kube-client';
import { run, type Supervisor } from './processes';
import { type ChartRelease, renderRealChart } from './real-chart';

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

/** Where the control plane reads its xDS certificates when its provider is Kubernetes (internal/xds/runner/runner.go). */
const CERTIFICATE_DIR = '/certs';

export interface EnvoyGatewayOptions {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  readonly client: KubeClient;
  /** The run folder. */
  readonly dir: string;
  readonly kubeconfig: string;
  /** The release's name and namespace, and the values the platform gives its chart. */
  readonly release: ChartRelease;
  readonly log: (line: string) => void;
}

/** The EnvoyGateway configuration the real chart renders for these values (its ConfigMap `envoy-gateway-config`). */
export function renderEnvoyGatewayConfig(toolchain: Toolchain, release: EnvoyGatewayOptions['release'], work: string): string {
  const configMap = renderRealChart(toolchain, 'envoy-gateway', 'gateway-helm', release, work, ['envoy-gateway-config.yaml'])
    .find((object) => object.kind === 'ConfigMap');
  const config = configMap?.data?.['envoy-gateway.yaml'];
  if (typeof config !== 'string') throw new E2eError('Envoy Gateway\'s chart rendered no envoy-gateway-config ConfigMap');
  return config;
}

/**
 * Make the control plane's certificates (its `certgen`, which writes the `envoy-gateway` and
 * `envoy` Secrets into its namespace), then start it. Its xDS certificates are read from
 * /certs: it runs in a private mount namespace where the run's copy of the `envoy-gateway`
 * Secret is mounted there, so nothing is written outside the run folder (an empty /certs
 * directory is created once as the mount point when the machine has none).
 */
export async function startEnvoyGateway(options: EnvoyGatewayOptions): Promise<void> {
  const { toolchain, supervisor, client, dir, kubeconfig, release, log } = options;
  const work = path.join(dir, 'envoy-gateway');
  fs.mkdirSync(work, { recursive: true });
  const binary = toolchain.bin('envoy-gateway', 'envoy-gateway');
  const env = { KUBECONFIG: kubeconfig, ENVOY_GATEWAY_NAMESPACE: release.namespace };

  const configFile = path.join(work, 'envoy-gateway.yaml');
  fs.writeFileSync(configFile, renderEnvoyGatewayConfig(toolchain, release, work));

  // The chart's certgen Job runs `envoy-gateway certgen`; the topology injector's webhook
  // configuration is the chart's, which the stand-in chart does not hold, so it is not patched.
  run(binary, ['certgen', '--disable-topology-injector'], { env, cwd: work });
  const secret = await client.get('v1', 'Secret', 'envoy-gateway', release.namespace);
  if (!secret) throw new E2eError(`envoy-gateway certgen made no Secret envoy-gateway in ${release.namespace}`);
  const certificates = path.join(work, 'certs');
  fs.mkdirSync(certificates, { recursive: true, mode: 0o700 });
  for (const file of ['ca.crt', 'tls.crt', 'tls.key']) {
    const data = (secret as any).data?.[file];
    if (typeof data !== 'string') throw new E2eError(`Secret ${release.namespace}/envoy-gateway has no ${file}`);
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
      'server',
      '--config-path',
      configFile,
    ],
    env,
    cwd: work,
  });
  log(`Envoy Gateway ${toolchain.versions['envoy-gateway']} control plane started (configuration rendered by its chart from the platform's values; certificates by its certgen)`);
}
