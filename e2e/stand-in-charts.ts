import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { type HelmChartRef, HELM_RELEASE_ROWS, INFRASTRUCTURE_RELEASES } from '../src/infrastructure/releases';
import { E2eError } from '../src/base/errors';
import { knownVersions, versionFacts } from '../src/contract/release-versions';
import type { OciChartRegistry } from './oci-registry';
import { run } from './processes';
import type { Toolchain } from '../toolchain';
import { STRIMZI_OPERATOR_DEPLOYMENT } from '../src/contract/upstream';
import { MONITORING_STACK_TEMPLATE } from './stand-in-monitoring-stack';
import { isRealChart } from './upstream-charts';

/**
 * What the harness installs in place of an upstream chart, which cannot be fetched
 * offline: the chart's CRDs (from schemas/crds, the same release) and a Deployment named
 * like its controller. The stand-in is a real Helm chart of the same name and version,
 * served from the chart's own repository URL (through the loopback proxy), so Argo CD
 * fetches, renders and syncs it exactly when it syncs that Application, never before.
 */
export interface StandIn {
  /**
   * CRD files of schemas/crds/ the chart installs. Where the real chart is served
   * (e2e/upstream-charts.ts), the CRDs the project keeps schemas of, which it installs among others.
   */
  readonly crds: readonly string[];
  /**
   * Name of the controller Deployment; none for a CRDs-only chart. Where the real chart is
   * served (e2e/upstream-charts.ts), the name of the controller Deployment it renders.
   */
  readonly controller?: string;
  /**
   * The toolchain component whose folder holds the release's own CRD files (`crds/`, from the
   * upstream's Go module at the pinned release): the stand-in chart installs all of them, as
   * the real chart does, instead of `crds`, which then lists the CRDs the project keeps
   * schemas of.
   * @default - the `crds` files of schemas/crds
   */
  readonly upstreamCrds?: 'prometheus-operator';
  /**
   * A Helm template of the real chart's objects that a real controller of the harness
   * reconciles, rendered by Argo CD from the release's values like the rest of the chart.
   * @default - none
   */
  readonly template?: string;
}

/**
 * One row per upstream chart of src/infrastructure/releases.ts (by chart name). Argo CD has
 * none: the e2e syncs its release manifests from the module it builds (e2e/argo-cd-manifests.ts).
 */
export const STAND_INS: Readonly<Record<string, StandIn>> = {
  // The real chart; its controllers run for real (e2e/cert-manager.ts), started when Argo CD creates the chart's controller Deployment, whose pods start only then;
  // the chart installs the release's six CRDs (the ACME ones and CertificateRequests included).
  'cert-manager': {
    crds: ['certmanager-certificate.yaml', 'certmanager-clusterissuer.yaml', 'certmanager-issuer.yaml'],
    controller: 'cert-manager',
  },
  // Envoy Gateway's CRDs-only chart (Gateway API standard channel and Envoy Gateway's own): the real one.
  'gateway-crds-helm': {
    crds: ['gatewayapi-gatewayclasses.yaml', 'gatewayapi-gateways.yaml', 'gatewayapi-httproutes.yaml', 'envoygateway-envoyproxies.yaml'],
  },
  // The real chart; its controller runs for real (e2e/envoy-gateway.ts), started when Argo CD creates the chart's controller Deployment, whose pods start only then.
  'gateway-helm': { crds: [], controller: 'envoy-gateway' },
  // The real chart; its controller runs for real (e2e/flagger.ts), started when Argo CD creates the chart's controller Deployment, whose pods start only then.
  flagger: {
    crds: ['flagger-canary.yaml', 'flagger-metrictemplate.yaml', 'flagger-alertprovider.yaml'],
    controller: 'flagger',
  },
  // The real chart (its Deployment is named by the platform's fullnameOverride).
  loadtester: { crds: [], controller: 'flagger-loadtester' },
  // Its operator runs for real (e2e/prometheus-operator.ts), started when Argo CD creates this release's controller Deployment, whose pods start only then;
  // the chart installs the operator's ten CRDs and the Prometheus and Alertmanager it reconciles.
  'kube-prometheus-stack': {
    crds: ['prometheusrule.yaml', 'podmonitor.yaml', 'servicemonitor.yaml', 'alertmanagerconfig.yaml'],
    controller: 'kube-prometheus-stack-operator',
    upstreamCrds: 'prometheus-operator',
    template: MONITORING_STACK_TEMPLATE,
  },
  'strimzi-kafka-operator': {
    crds: ['strimzi-kafka.yaml', 'strimzi-kafkanodepool.yaml', 'strimzi-kafkatopic.yaml', 'strimzi-kafkauser.yaml'],
    controller: STRIMZI_OPERATOR_DEPLOYMENT,
  },
};

/**
 * A stand-in "upgrade": one release's stand-in is also served at the next version (its pinned
 * version with the patch incremented), which git never pins, so the live operations can move
 * the release there by hand and roll it back (`ops rollback --level package`). The next version
 * is the same chart (its Deployment's image tag names the version) plus a ConfigMap only it
 * installs, so what a rollback leaves or prunes is visible. Flagger's load tester: one
 * Deployment, no CRDs, nothing waits for it.
 */
export const STAND_IN_UPGRADE_RELEASE = INFRASTRUCTURE_RELEASES.flaggerLoadTester;

/** The name of the ConfigMap only the next version installs, after Helm's release name. */
const UPGRADE_CONFIG_MAP = (release: string): string => `${release}-stand-in-upgrade`;

/** What the live operations read of the stand-in upgrade (the harness gives it as E2E_STAND_IN_UPGRADE). */
export interface StandInUpgrade {
  /** The release, also its Argo CD Application's name. */
  readonly release: string;
  /** The chart version git pins. */
  readonly pinned: string;
  /** The next version, served beside it. */
  readonly next: string;
  /** The ConfigMap only the next version installs, in the release's namespace. */
  readonly configMap: string;
}

/** The stand-in upgrade of STAND_IN_UPGRADE_RELEASE. */
export function standInUpgrade(): StandInUpgrade {
  const { name, chart } = STAND_IN_UPGRADE_RELEASE;
  const next = chart.version.replace(/(\d+)$/, (patch) => String(Number(patch) + 1));
  if (next === chart.version) throw new E2eError(`${name}: chart version ${chart.version} has no patch number to increment for its stand-in upgrade`);
  return { release: name, pinned: chart.version, next, configMap: UPGRADE_CONFIG_MAP(name) };
}

/** The next version's own object: Helm's `.Release.Name` is the release's name, which the Application sets. */
function upgradeTemplate(chart: HelmChartRef): string {
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: UPGRADE_CONFIG_MAP('{{ .Release.Name }}'), namespace: '{{ .Release.Namespace }}' },
    data: { version: chart.version, note: 'only the stand-in upgrade installs this' },
  };
  return `# Stand-in upgrade of ${chart.chart}: ${chart.version} only (platform-gitops e2e).\n${stringify(configMap)}`;
}

export function standInFor(chart: string): StandIn {
  const standIn = STAND_INS[chart];
  if (!standIn) throw new E2eError(`chart ${chart} has no stand-in in e2e/stand-in-charts.ts: add its CRDs and controller there`);
  return standIn;
}

/** The controller image the release table gives the release of `chart` at its version, if it names one. */
function controllerImageOf(chart: HelmChartRef): string | undefined {
  const release = HELM_RELEASE_ROWS.find((row) => row.chart.repoURL === chart.repoURL && row.chart.chart === chart.chart);
  return release === undefined ? undefined : versionFacts(release.name, chart.version)?.controllerImage;
}

/** The restricted pod profile, so a stand-in runs in any namespace the platform labels. */
const RESTRICTED = {
  pod: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
  container: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
};

/** The stand-in's controller Deployment, for a release's name and namespace (Helm's `.Release.Name`, `.Release.Namespace`). */
function controllerDeployment(chart: HelmChartRef, standIn: StandIn & { controller: string }, release: { name: string; namespace: string }) {
  const labels = { 'app.kubernetes.io/name': standIn.controller, 'app.kubernetes.io/instance': release.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: standIn.controller, namespace: release.namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          securityContext: RESTRICTED.pod,
          containers: [
            {
              name: 'controller',
              // Never pulled: kwok runs no containers. The controller image the release table says
              // this version ships (ops check --component <release> compares it), else a name
              // that says what it stands in for.
              image: controllerImageOf(chart) ?? `e2e-stand-in.invalid/${chart.chart}:${chart.version}`,
              securityContext: RESTRICTED.container,
              resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
            },
          ],
        },
      },
    },
  };
}

function controllerTemplate(chart: HelmChartRef, standIn: StandIn & { controller: string }): string {
  const deployment = controllerDeployment(chart, standIn, { name: '{{ .Release.Name }}', namespace: '{{ .Release.Namespace }}' });
  return `# Stand-in for ${chart.chart} ${chart.version} (platform-gitops e2e).\n${stringify(deployment)}`;
}

/**
 * A chart repository URL as Argo CD reads it: `https://...` is a Helm repository (an
 * index.yaml), a URL without a scheme (`docker.io/envoyproxy`) an OCI registry path.
 */
export function isOciRepository(repoURL: string): boolean {
  return !/^[a-z]+:\/\//.test(repoURL);
}

/** Docker Hub's registry answers as registry-1.docker.io (the docker and oras clients' mapping). */
const REGISTRY_ALIASES: Readonly<Record<string, readonly string[]>> = { 'docker.io': ['registry-1.docker.io'] };

/**
 * One stand-in chart (or the real one, where the toolchain has it), packaged; returns the
 * package file. `upgrade`: the stand-in upgrade's next version, with its own object.
 */
function packageStandIn(options: { helm: string; crdDir: string; work: string; toolchain: Pick<Toolchain, 'upstreamChart' | 'crds'> }, chart: HelmChartRef, target: string, upgrade = false): string {
  const standIn = standInFor(chart.chart);
  if (isRealChart(chart.chart)) {
    // The stand-in upgrade of a real chart: the pinned version's chart at the next version,
    // with the object only that version installs.
    const pinned = upgrade ? standInUpgrade().pinned : chart.version;
    let source = options.toolchain.upstreamChart(chart.chart, pinned);
    const version = /^version: "?([^"\s]+)"?$/m.exec(fs.readFileSync(path.join(source, 'Chart.yaml'), 'utf8'))?.[1];
    if (version !== pinned) throw new E2eError(`the toolchain's ${chart.chart} chart is ${version}, the platform pins ${pinned}: rebuild toolchain/build.sh upstream-charts`);
    if (upgrade) {
      const copy = path.join(options.work, 'upgrade', chart.chart);
      fs.cpSync(source, copy, { recursive: true });
      fs.writeFileSync(path.join(copy, 'Chart.yaml'), fs.readFileSync(path.join(copy, 'Chart.yaml'), 'utf8').replace(/^version: .*$/m, `version: ${chart.version}`));
      fs.writeFileSync(path.join(copy, 'templates', 'platform-gitops-e2e-upgrade.yaml'), upgradeTemplate(chart));
      source = copy;
    }
    fs.mkdirSync(target, { recursive: true });
    run(options.helm, ['package', source, '--destination', target]);
    return path.join(target, `${chart.chart}-${chart.version}.tgz`);
  }
  const source = path.join(options.work, `${chart.chart}-${chart.version}`);
  fs.mkdirSync(path.join(source, 'templates'), { recursive: true });
  fs.writeFileSync(
    path.join(source, 'Chart.yaml'),
    stringify({ apiVersion: 'v2', name: chart.chart, version: chart.version, description: `platform-gitops e2e stand-in for ${chart.chart}${upgrade ? ' (its stand-in upgrade)' : ''}` }),
  );
  if (upgrade) fs.writeFileSync(path.join(source, 'templates', 'upgrade.yaml'), upgradeTemplate(chart));
  const upstream = standIn.upstreamCrds === undefined ? undefined : options.toolchain.crds(standIn.upstreamCrds);
  const crds =
    upstream === undefined
      ? standIn.crds.map((file) => path.join(options.crdDir, file))
      : fs.readdirSync(upstream).filter((file) => file.endsWith('.yaml')).sort().map((file) => path.join(upstream, file));
  if (crds.length > 0) {
    fs.mkdirSync(path.join(source, 'crds'));
    for (const file of crds) fs.copyFileSync(file, path.join(source, 'crds', path.basename(file)));
  }
  const controller = standIn.controller;
  if (controller !== undefined) fs.writeFileSync(path.join(source, 'templates', 'controller.yaml'), controllerTemplate(chart, { ...standIn, controller }));
  if (standIn.template !== undefined) fs.writeFileSync(path.join(source, 'templates', 'reconciled.yaml'), standIn.template);
  fs.mkdirSync(target, { recursive: true });
  run(options.helm, ['package', source, '--destination', target]);
  return path.join(target, `${chart.chart}-${chart.version}.tgz`);
}

/** The versions served of a chart: its own, and for the stand-in upgrade's release also the next one. */
function servedVersions(chart: HelmChartRef): { chart: HelmChartRef; upgrade: boolean }[] {
  const upgraded = STAND_IN_UPGRADE_RELEASE.chart;
  const same = chart.repoURL === upgraded.repoURL && chart.chart === upgraded.chart && chart.version === upgraded.version;
  return [{ chart, upgrade: false }, ...(same ? [{ chart: { ...chart, version: standInUpgrade().next }, upgrade: true }] : [])];
}

/** The upstream charts of src/infrastructure/releases.ts, by repository URL. */
export function chartsByRepository(): Map<string, HelmChartRef[]> {
  const byRepository = new Map<string, HelmChartRef[]>();
  // Every version the table knows, so an environment's values may name any of them (npm run upgrade).
  for (const { name, chart } of HELM_RELEASE_ROWS) {
    const versions = knownVersions(name).map((version) => ({ ...chart, version }));
    byRepository.set(chart.repoURL, [...(byRepository.get(chart.repoURL) ?? []), ...(versions.length > 0 ? versions : [chart])]);
  }
  return byRepository;
}

/**
 * The stand-in charts, packaged: Helm repositories under `<root>/<host>/<path>/` with an
 * index.yaml each, OCI charts in `registry`. Returns every host name to serve.
 */
export function buildStandInCharts(options: { helm: string; crdDir: string; root: string; work: string; registry: OciChartRegistry; toolchain: Pick<Toolchain, 'upstreamChart' | 'crds'> }): string[] {
  const hosts = new Set<string>();
  for (const [repoURL, charts] of chartsByRepository()) {
    if (isOciRepository(repoURL)) {
      const [host, ...rest] = repoURL.replace(/\/$/, '').split('/');
      for (const name of [host!, ...(REGISTRY_ALIASES[host!] ?? [])]) hosts.add(name);
      for (const { chart, upgrade } of charts.flatMap(servedVersions)) {
        const tgz = packageStandIn(options, chart, path.join(options.work, 'oci'), upgrade);
        options.registry.add([...rest, chart.chart].join('/'), { name: chart.chart, version: chart.version }, tgz);
      }
      continue;
    }
    const url = new URL(repoURL);
    if (url.protocol !== 'https:') throw new E2eError(`chart repository ${repoURL}: only https:// and OCI repositories have a stand-in`);
    hosts.add(url.hostname);
    const target = path.join(options.root, url.hostname, url.pathname);
    for (const { chart, upgrade } of charts.flatMap(servedVersions)) packageStandIn(options, chart, target, upgrade);
    run(options.helm, ['repo', 'index', target, '--url', repoURL.replace(/\/$/, '')]);
  }
  return [...hosts].sort();
}

/** An HTTPS server for the stand-in repositories: the OCI registry's API, else files by Host header and path. */
export async function serveCharts(root: string, registry: OciChartRegistry, tls: { cert: string; key: string }): Promise<{ port: number; close: () => Promise<void> }> {
  const server = https.createServer({ cert: fs.readFileSync(tls.cert), key: fs.readFileSync(tls.key) }, (req, res) => {
    if (registry.handle(req, res)) return;
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const file = path.join(root, host, decodeURIComponent(new URL(req.url ?? '/', 'https://x').pathname));
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.endsWith('.yaml') ? 'application/x-yaml' : 'application/gzip' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
