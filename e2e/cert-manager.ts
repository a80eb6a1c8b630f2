import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';
import { compareText } from '../src/base/text-order';
import type { Toolchain } from '../toolchain';
import type { KubeClient, KubeObject } from './kube-client';
import { freePort, listening } from './loopback';
import type { ClusterEgress } from './cluster-egress';
import { type Supervisor, waitFor } from './processes';

/**
 * cert-manager's own webhook and controllers (the release the platform installs, built by
 * toolchain/build.sh from its module) on loopback against the e2e API server: the webhook
 * admits or refuses every cert-manager object by the release's own validation, and the
 * controllers issue every Certificate for real (the self-signed bootstrap issuer, the local
 * CA, each application's certificate) and judge the issuers by their own rules.
 *
 * Both start from what Argo CD created from the real chart (served at the version the
 * environment asks for, rendered with the platform's values): each container's arguments in
 * its Deployment, with `$(POD_NAMESPACE)` the release's namespace, and the files of the
 * ConfigMaps it mounts (the controller's ControllerConfiguration). The chart's two admission
 * configurations stay as Argo CD applied them, calling the webhook's Service: the API server
 * reaches it through its cluster egress (e2e/cluster-egress.ts), which sends the Service's
 * ClusterIP and port to the webhook on loopback. Changed, where a loopback process differs from
 * its pod: the webhook's secure and health ports are free loopback ports and its metrics
 * server is off; its serving certificate is its own dynamic one, for the Service's names, as
 * in its pod. What cainjector does for these configurations (its Deployment is a kwok pod), the
 * harness does: it copies the CA the webhook wrote (`cert-manager-webhook-ca`) into each
 * configuration that names that Secret (`cert-manager.io/inject-ca-from-secret`).
 */

export interface CertManagerOptions {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  readonly client: KubeClient;
  /** The run folder. */
  readonly dir: string;
  readonly kubeconfig: string;
  /** The API server's way to the webhook's Service. */
  readonly egress: Pick<ClusterEgress, 'route'>;
  /** The controller Deployment Argo CD created from the chart. */
  readonly deployment: KubeObject;
  readonly log: (line: string) => void;
}

/** The chart's webhook Deployment and Service (charts/cert-manager templates/webhook-deployment.yaml, webhook-service.yaml: `<fullname>-webhook`). */
const WEBHOOK = (controller: string) => `${controller}-webhook`;

/** cainjector's annotation naming the Secret whose CA goes into a configuration's caBundle. */
const INJECT_CA_FROM_SECRET = 'cert-manager.io/inject-ca-from-secret';

/**
 * A container's arguments in a Deployment, `$(POD_NAMESPACE)` resolved, and each `--config=`
 * file of a mounted ConfigMap replaced by the run's copy (`read` gives the ConfigMap's key).
 */
export async function containerArgs(deployment: KubeObject, container: string, read: (configMap: string, key: string) => Promise<string>, work: string): Promise<string[]> {
  const where = `Deployment ${deployment.metadata.namespace}/${deployment.metadata.name}`;
  const spec = deployment.spec?.template?.spec ?? {};
  const found = (spec.containers ?? []).find((c: { name: string }) => c.name === container);
  if (!Array.isArray(found?.args)) throw new E2eError(`${where} has no ${container} container with arguments`);
  const volumes = new Map<string, any>((spec.volumes ?? []).map((v: { name: string }) => [v.name, v]));
  const args: string[] = [];
  for (const arg of (found.args as string[]).map((a) => a.replaceAll('$(POD_NAMESPACE)', deployment.metadata.namespace!))) {
    if (!arg.startsWith('--config=')) {
      args.push(arg);
      continue;
    }
    const file = arg.slice('--config='.length);
    const mount = ((found.volumeMounts ?? []) as { name: string; mountPath: string }[]).find((m) => file.startsWith(`${m.mountPath.replace(/\/$/, '')}/`));
    const configMap = mount === undefined ? undefined : volumes.get(mount.name)?.configMap?.name;
    if (mount === undefined || configMap === undefined) throw new E2eError(`${where}: ${container}'s ${arg} names no file of a mounted ConfigMap`);
    const copy = path.join(work, `${container}-${path.basename(file)}`);
    fs.writeFileSync(copy, await read(configMap, file.slice(mount.mountPath.replace(/\/$/, '').length + 1)));
    args.push(`--config=${copy}`);
  }
  return args;
}

/** The webhook's arguments on loopback: the chart's, with its ports free loopback ports and its metrics server off. */
export function loopbackWebhookArgs(chartArgs: readonly string[], loopback: { securePort: number; healthzPort: number }): string[] {
  const replaced = /^--(secure-port|healthz-port|metrics-listen-address)=/;
  return [...chartArgs.filter((arg) => !replaced.test(arg)), `--secure-port=${loopback.securePort}`, `--healthz-port=${loopback.healthzPort}`, '--metrics-listen-address=0'];
}

/** What cainjector writes into a webhook configuration: the CA as every webhook's caBundle. */
export function withCaBundle(configuration: KubeObject, caBundle: string): { webhooks: unknown[] } {
  return { webhooks: ((configuration.webhooks ?? []) as { clientConfig?: Record<string, unknown> }[]).map((webhook) => ({ ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } })) };
}

/**
 * Start the webhook with its Deployment's arguments, route its Service to it, write its CA
 * into the chart's admission configurations as cainjector would, then start the controllers.
 */
export async function startCertManager(options: CertManagerOptions): Promise<void> {
  const { toolchain, supervisor, client, dir, kubeconfig, egress, deployment, log } = options;
  const namespace = deployment.metadata.namespace!;
  const work = path.join(dir, 'cert-manager');
  fs.mkdirSync(work, { recursive: true });
  const alive = () => supervisor.assertRunning();
  const found = <T>(what: string, probe: () => Promise<T | undefined>) => waitFor(what, 60_000, probe, alive);
  const read = async (configMap: string, key: string): Promise<string> => {
    const object = await found(`ConfigMap ${namespace}/${configMap}`, () => client.get('v1', 'ConfigMap', configMap, namespace));
    const value = object.data?.[key];
    if (typeof value !== 'string') throw new E2eError(`ConfigMap ${namespace}/${configMap} has no key ${key}`);
    return value;
  };

  const webhookName = WEBHOOK(deployment.metadata.name);
  const webhookDeployment = await found(`Deployment ${namespace}/${webhookName}`, () => client.get('apps/v1', 'Deployment', webhookName, namespace));
  const [securePort, healthzPort] = [await freePort(), await freePort()];
  const chartArgs = await containerArgs(webhookDeployment, 'cert-manager-webhook', read, work);
  const webhookArgs = loopbackWebhookArgs(chartArgs, { securePort, healthzPort });
  supervisor.start({ name: 'cert-manager-webhook', command: toolchain.bin('cert-manager', 'cert-manager-webhook'), args: [`--kubeconfig=${kubeconfig}`, ...webhookArgs], cwd: work });
  await waitFor('cert-manager-webhook to listen', 60_000, () => listening(securePort), alive);

  // The Service the chart's configurations call: its ClusterIP and port, sent to the loopback webhook.
  const service = await found(`Service ${namespace}/${webhookName} with a ClusterIP`, async () => {
    const object = await client.get('v1', 'Service', webhookName, namespace);
    return object?.spec?.clusterIP ? object : undefined;
  });
  // The ports that send to the webhook's secure port (its `--secure-port`, the container port of that number, by number or name).
  const chartPort = Number(chartArgs.find((arg) => arg.startsWith('--secure-port='))?.slice('--secure-port='.length) ?? Number.NaN);
  const container = (webhookDeployment.spec?.template?.spec?.containers ?? []).find((c: { name: string }) => c.name === 'cert-manager-webhook');
  const names = ((container?.ports ?? []) as { name?: string; containerPort: number }[]).filter((p) => p.containerPort === chartPort).map((p) => p.name);
  const secure = ((service.spec.ports ?? []) as { port: number; targetPort?: number | string }[]).filter((p) => p.targetPort === chartPort || names.includes(String(p.targetPort)));
  if (secure.length === 0) throw new E2eError(`Service ${namespace}/${webhookName} has no port that sends to the webhook's secure port ${chartPort}`);
  for (const port of secure) egress.route(service.spec.clusterIP, port.port, securePort);

  // cainjector's part: the CA the webhook made for its serving certificates, into each configuration that names its Secret.
  const caName = webhookArgs.find((arg) => arg.startsWith('--dynamic-serving-ca-secret-name='))?.slice('--dynamic-serving-ca-secret-name='.length);
  if (caName === undefined) throw new E2eError(`Deployment ${namespace}/${webhookName}: the webhook has no --dynamic-serving-ca-secret-name, the CA cainjector would copy`);
  const caSecret = `${namespace}/${caName}`;
  const secret = await found(`Secret ${caSecret} (the webhook's CA)`, async () => {
    const object = await client.get('v1', 'Secret', caName, namespace);
    return typeof object?.data?.['ca.crt'] === 'string' ? object : undefined;
  });
  const caBundle = String(secret.data['ca.crt']);
  const configurations = await found(`the chart's admission configurations naming ${caSecret}`, async () => {
    const listed = [
      ...(await client.list('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration')),
      ...(await client.list('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration')),
    ].filter((object) => object.metadata.annotations?.[INJECT_CA_FROM_SECRET] === caSecret);
    return listed.length === 2 ? listed : undefined;
  });
  for (const configuration of configurations) await client.mergePatch(configuration, withCaBundle(configuration, caBundle));
  log(`cert-manager ${toolchain.versions['cert-manager']} webhook started (${webhookArgs.join(' ')}); Service ${namespace}/${webhookName} (${service.spec.clusterIP}) routed to it, its CA written into ${configurations.map((c) => `${c.kind} ${c.metadata.name}`).join(' and ')}`);

  const controllerArgs = await containerArgs(deployment, 'cert-manager-controller', read, work);
  supervisor.start({ name: 'cert-manager', command: toolchain.bin('cert-manager', 'cert-manager-controller'), args: [`--kubeconfig=${kubeconfig}`, ...controllerArgs], cwd: work });
  log(`cert-manager ${toolchain.versions['cert-manager']} controllers started (${controllerArgs.join(' ')}: the arguments of the Deployment Argo CD created from its chart)`);
}

/** A Certificate of the cluster at the end of a run, and what its Secret holds. */
export interface IssuedCertificate {
  readonly namespace: string;
  readonly name: string;
  /** Its Ready condition's status ('True', 'False') or 'Unknown'. */
  readonly ready: string;
  /** The issuer and subject alternative names of its Secret's `tls.crt` (X.509), absent without one. */
  readonly issuer?: string;
  readonly subjectAltName?: string;
}

/**
 * Every Certificate with its readiness and the certificate its Secret holds (the report's
 * `certificates`); `expected` is how many a converged run synced (`KubeClient.listSynced`).
 */
export async function issuedCertificates(client: KubeClient, expected = 0): Promise<IssuedCertificate[]> {
  const certificates = await client.listSynced('cert-manager.io/v1', 'Certificate', expected);
  const result: IssuedCertificate[] = [];
  for (const certificate of certificates) {
    const namespace = certificate.metadata.namespace!;
    const ready = (certificate.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready')?.status ?? 'Unknown';
    const secret = await client.get('v1', 'Secret', certificate.spec?.secretName, namespace);
    const pem = (secret as any)?.data?.['tls.crt'];
    const x509 = typeof pem === 'string' && pem !== '' ? new X509Certificate(Buffer.from(pem, 'base64')) : undefined;
    result.push({
      namespace,
      name: certificate.metadata.name,
      ready,
      ...(x509 === undefined ? {} : { issuer: x509.issuer, subjectAltName: x509.subjectAltName ?? '' }),
    });
  }
  return result.sort((a, b) => compareText(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`));
}
