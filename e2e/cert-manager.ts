import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';
import { compareText } from '../src/base/text-order';
import type { Toolchain } from '../toolchain';
import type { KubeClient, KubeObject } from './kube-client';
import { freePort, listening } from './loopback';
import type { KeyPair } from './pki';
import { type Supervisor, waitFor } from './processes';
import { type ChartRelease, renderRealChart } from './real-chart';

/**
 * cert-manager's own webhook and controllers (the release the platform installs, built by
 * toolchain/build.sh from its module) on loopback against the e2e API server: the webhook
 * admits or refuses every cert-manager object by the release's own validation, and the
 * controllers issue every Certificate for real (the self-signed bootstrap issuer, the local
 * CA, each application's certificate) and judge the issuers by their own rules.
 *
 * Both start with what the real chart (from the same module) renders for the platform's
 * values (src/infrastructure/releases.ts): each container's arguments, with `$(POD_NAMESPACE)`
 * the release's namespace, the controller's ControllerConfiguration ConfigMap, and the
 * webhook's two admission configurations. Changed, because the webhook runs on loopback
 * instead of behind its Service (the API server reaches a webhook's Service through cluster
 * networking, which the e2e cluster does not have):
 * - the configurations call `https://127.0.0.1:<port>/<path>` (`clientConfig.url`) instead
 *   of the Service, with the run's CA as their `caBundle` (the chart leaves that to
 *   cainjector, which does not run);
 * - the webhook serves a certificate of the run's CA for 127.0.0.1 (`--tls-cert-file`)
 *   instead of its dynamic one, whose names are the Service's DNS names; its secure and
 *   health ports are free loopback ports, and its metrics server is off.
 */

export interface CertManagerOptions {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  readonly client: KubeClient;
  /** The run folder. */
  readonly dir: string;
  readonly kubeconfig: string;
  /** The webhook's serving certificate, for 127.0.0.1, and the CA that signed it. */
  readonly serving: { readonly pair: KeyPair; readonly ca: string };
  /** The release's name and namespace, and the values the platform gives its chart. */
  readonly release: ChartRelease;
  readonly log: (line: string) => void;
}

/** What the real chart renders for the two programs. */
export interface RenderedCertManager {
  readonly controllerArgs: readonly string[];
  /** The controller's configuration file (its ConfigMap's `config.yaml`), when the chart renders one. */
  readonly controllerConfig: string | undefined;
  readonly webhookArgs: readonly string[];
  /** The ValidatingWebhookConfiguration and MutatingWebhookConfiguration. */
  readonly webhookConfigurations: readonly KubeObject[];
}

const TEMPLATES = ['deployment.yaml', 'controller-config.yaml', 'webhook-deployment.yaml', 'webhook-validating-webhook.yaml', 'webhook-mutating-webhook.yaml'];

/** The chart's objects for these values, with each container's arguments resolved. */
export function renderCertManager(toolchain: Toolchain, release: CertManagerOptions['release'], work: string): RenderedCertManager {
  const objects = renderRealChart(toolchain, 'cert-manager', 'cert-manager', release, work, TEMPLATES);
  const argsOf = (container: string): string[] => {
    const found = objects
      .filter((object) => object.kind === 'Deployment')
      .flatMap((deployment) => deployment.spec?.template?.spec?.containers ?? [])
      .find((c: { name: string }) => c.name === container);
    if (!Array.isArray(found?.args)) throw new E2eError(`cert-manager's chart rendered no ${container} container with arguments`);
    return (found.args as string[]).map((arg) => arg.replaceAll('$(POD_NAMESPACE)', release.namespace));
  };
  const config = objects.find((object) => object.kind === 'ConfigMap')?.data?.['config.yaml'];
  const webhookConfigurations = objects.filter((object) => object.kind === 'ValidatingWebhookConfiguration' || object.kind === 'MutatingWebhookConfiguration');
  if (webhookConfigurations.length !== 2) throw new E2eError(`cert-manager's chart rendered ${webhookConfigurations.length} webhook configurations, not its validating and mutating one`);
  return {
    controllerArgs: argsOf('cert-manager-controller'),
    controllerConfig: typeof config === 'string' ? config : undefined,
    webhookArgs: argsOf('cert-manager-webhook'),
    webhookConfigurations,
  };
}

/** The webhook's arguments on loopback: the chart's, with the serving certificate and ports changed. */
export function loopbackWebhookArgs(chartArgs: readonly string[], loopback: { securePort: number; healthzPort: number; cert: string; key: string }): string[] {
  const replaced = /^--(secure-port|healthz-port|metrics-listen-address|dynamic-serving-[a-z-]+|tls-cert-file|tls-private-key-file)=/;
  return [
    ...chartArgs.filter((arg) => !replaced.test(arg)),
    `--secure-port=${loopback.securePort}`,
    `--healthz-port=${loopback.healthzPort}`,
    '--metrics-listen-address=0',
    `--tls-cert-file=${loopback.cert}`,
    `--tls-private-key-file=${loopback.key}`,
  ];
}

/** A webhook configuration of the chart, calling the webhook on loopback instead of its Service. */
export function loopbackWebhookConfiguration(configuration: KubeObject, securePort: number, caBundle: string): KubeObject {
  const { ['cert-manager.io/inject-ca-from-secret']: _injected, ...annotations } = configuration.metadata.annotations ?? {};
  return {
    ...configuration,
    metadata: { ...configuration.metadata, annotations },
    webhooks: (configuration.webhooks as any[]).map((webhook) => {
      const service = webhook.clientConfig?.service;
      if (service?.path === undefined) throw new E2eError(`${configuration.kind} ${configuration.metadata.name}: webhook ${webhook.name} calls no Service path`);
      return { ...webhook, clientConfig: { url: `https://127.0.0.1:${securePort}${service.path}`, caBundle } };
    }),
  };
}

/**
 * Start the webhook, register its admission configurations once it answers, then start the
 * controllers, with the run's kubeconfig.
 */
export async function startCertManager(options: CertManagerOptions): Promise<void> {
  const { toolchain, supervisor, client, dir, kubeconfig, serving, release, log } = options;
  const work = path.join(dir, 'cert-manager');
  fs.mkdirSync(work, { recursive: true });
  const rendered = renderCertManager(toolchain, release, work);

  const [securePort, healthzPort] = [await freePort(), await freePort()];
  const webhookArgs = loopbackWebhookArgs(rendered.webhookArgs, { securePort, healthzPort, cert: serving.pair.cert, key: serving.pair.key });
  supervisor.start({ name: 'cert-manager-webhook', command: toolchain.bin('cert-manager', 'cert-manager-webhook'), args: [`--kubeconfig=${kubeconfig}`, ...webhookArgs], cwd: work });
  await waitFor('cert-manager-webhook to listen', 60_000, () => listening(securePort), () => supervisor.assertRunning());
  const caBundle = fs.readFileSync(serving.ca).toString('base64');
  for (const configuration of rendered.webhookConfigurations) await client.apply(loopbackWebhookConfiguration(configuration, securePort, caBundle));
  log(`cert-manager ${toolchain.versions['cert-manager']} webhook started (${webhookArgs.join(' ')}; its chart's admission configurations registered for https://127.0.0.1:${securePort})`);

  const configFile = path.join(work, 'config.yaml');
  const controllerArgs = rendered.controllerArgs.map((arg) => {
    if (!arg.startsWith('--config=')) return arg;
    if (rendered.controllerConfig === undefined) throw new E2eError(`cert-manager's chart passes ${arg} but renders no configuration ConfigMap`);
    fs.writeFileSync(configFile, rendered.controllerConfig);
    return `--config=${configFile}`;
  });
  supervisor.start({ name: 'cert-manager', command: toolchain.bin('cert-manager', 'cert-manager-controller'), args: [`--kubeconfig=${kubeconfig}`, ...controllerArgs], cwd: work });
  log(`cert-manager ${toolchain.versions['cert-manager']} controllers started (${controllerArgs.join(' ')}, as its chart renders them from the platform's values)`);
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

/** cert-manager's own group, which an `issuerRef` without one means (pkg/api/util/issuers.go `IssuerGroup`). */
const CERT_MANAGER_GROUP = 'cert-manager.io';

/** A condition of a cert-manager object by type. */
function conditionOf(object: KubeObject, type: string): { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined {
  return ((object.status?.conditions ?? []) as { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }[]).find((c) => c.type === type);
}

/**
 * The Certificates cert-manager waits on without end because the issuer their requests name
 * does not exist as that kind and no object of the environment's rendered charts is that issuer
 * (`rendered`): `Certificate <namespace>/<name>` to why, read from each CertificateRequest
 * (`requests`).
 * cert-manager v1.21.2 calls none of this failed. Its webhook admits any `Issuer` or
 * `ClusterIssuer` name (internal/apis/certmanager/validation/certificate.go `validateIssuerRef`
 * checks the kind, not that the issuer exists). Its request controllers find no issuer and
 * leave the request Ready=False, reason `Pending`, "Referenced \"<Kind>\" not found: <the
 * lister's NotFound>" (pkg/controller/certificaterequests/sync.go, util/reporter.go `Pending`,
 * which fires only a Normal event), to be judged again when an issuer of that name appears
 * (controller.go, `handleGenericIssuer`). The Certificate keeps `Issuing` True ("Issuing
 * certificate as Secret does not exist"), which Argo CD reads as Progressing
 * (resource_customizations/cert-manager.io/Certificate/health.lua at v3.6.1, and the
 * platform's CERTIFICATE_HEALTH_LUA), until the run's timeout. Only an issuer a later wave
 * renders can mend it: one no rendered chart holds never comes.
 */
export function missingIssuers(requests: readonly KubeObject[], rendered: readonly KubeObject[]): Map<string, string> {
  const renders = (kind: string, name: string, namespace: string | undefined) =>
    rendered.some((o) => o.apiVersion === `${CERT_MANAGER_GROUP}/v1` && o.kind === kind && o.metadata.name === name && (kind === 'ClusterIssuer' || o.metadata.namespace === namespace));
  const waiting = new Map<string, string>();
  for (const request of requests) {
    const ref = request.spec?.issuerRef as { name?: string; kind?: string; group?: string } | undefined;
    const kind = ref?.kind || 'Issuer';
    if (ref?.name === undefined || (ref.group || CERT_MANAGER_GROUP) !== CERT_MANAGER_GROUP) continue;
    const ready = conditionOf(request, 'Ready');
    if (ready?.status !== 'False' || ready.reason !== 'Pending' || !String(ready.message ?? '').startsWith(`Referenced "${kind}" not found`)) continue;
    const namespace = request.metadata.namespace;
    if (renders(kind, ref.name, namespace)) continue;
    const certificate = request.metadata.annotations?.['cert-manager.io/certificate-name'] ?? request.metadata.ownerReferences?.find((owner: { kind?: string }) => owner.kind === 'Certificate')?.name;
    if (certificate === undefined) continue;
    const scope = kind === 'ClusterIssuer' ? '' : ` in ${namespace}`;
    waiting.set(
      `Certificate ${namespace}/${certificate}`,
      `cert-manager left CertificateRequest ${namespace}/${request.metadata.name} Ready=False (Pending, since ${ready.lastTransitionTime ?? '?'}): ${ready.message}; no rendered chart makes the ${kind} ${JSON.stringify(ref.name)}${scope}`,
    );
  }
  return waiting;
}

/**
 * `missingIssuers` of the cluster's CertificateRequests, for the convergence watch (its
 * `endless`): asked only while an Application that holds a Certificate is not Healthy. Not
 * by the Certificate's own health: Argo CD 3.x keeps resource health out of the
 * Application's `status.resources` (`controller.resource.health.persist` false by default,
 * v3.6.1 docs/operator-manual/upgrading/2.14-3.0.md).
 */
export function certificatesWithoutIssuer(
  client: KubeClient,
  rendered: readonly KubeObject[],
  log: (line: string) => void = () => undefined,
): (apps: readonly KubeObject[]) => Promise<Map<string, string>> {
  /** Each request's unready state logged, so a run shows what cert-manager said before anything is called final. */
  const logged = new Set<string>();
  return async (apps) => {
    const waiting = apps.some(
      (app) => app.status?.health?.status !== 'Healthy' && ((app.status?.resources ?? []) as { group?: string; kind?: string }[]).some((r) => r.group === CERT_MANAGER_GROUP && r.kind === 'Certificate'),
    );
    if (!waiting) return new Map();
    // A list that fails (the API server busy) judges nothing this round.
    const requests = await client.list(`${CERT_MANAGER_GROUP}/v1`, 'CertificateRequest').catch(() => []);
    for (const request of requests) {
      const ready = conditionOf(request, 'Ready');
      if (ready === undefined || ready.status === 'True') continue;
      const line = `cert-manager: CertificateRequest ${request.metadata.namespace}/${request.metadata.name} Ready=${ready.status} (${ready.reason ?? 'no reason'}): ${ready.message ?? ''}`;
      if (logged.has(line)) continue;
      logged.add(line);
      log(line);
    }
    return missingIssuers(requests, rendered);
  };
}
