import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Environment, loadEnvironments } from '../src/environments';
import { defaultAgeKeyFile, initEnvironment } from '../src/secrets/init';
import { sopsTools } from '../src/secrets/sops';
import { keyId } from '../src/secrets/catalog';
import { ALERT_ROUTING } from '../src/contract/choices';
import { E2eError } from '../src/base/errors';
import { startGitServer, type GitServer } from './git-server';
import { run } from './processes';
import { OciChartRegistry } from './oci-registry';
import { buildStandInCharts, serveCharts, standInUpgrade } from './stand-in-charts';
import { startChartRegistry } from './chart-registry';
import { applicationChart } from '../src/artifact/application-chart';
import { chartReference, helmBinary, parseRegistry, publishChart, type Published } from '../src/artifact/publish';
import { followedRegistry } from '../src/charts/gitops-applications';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';
import type { StartedPlane } from './run-plane';

/**
 * What the git server serves and the key the repository server decrypts with:
 * - a key given (`--age-key`) or found at the default place is used as it is, on the
 *   checkout as committed, so a wrong key fails as it would in a cluster;
 * - `local` without any key: its values are all generated (docs/secrets.md), so the
 *   harness makes a throwaway key and re-encrypts local's Secrets in a clone of the
 *   checkout that it serves instead (the checkout is never touched), as
 *   `npm run secrets -- init local --rotate-key` would on a new machine;
 * - another environment without a key: served as committed; its Applications with
 *   Secrets fail to decrypt, and the report says so.
 */
function prepareSource(options: { projectRoot: string; environment: string; ageKeyFile?: string; dir: string; chatWebhookUrl: string; log: (line: string) => void }): { source: string; ageKey: string } {
  const { projectRoot, environment, log } = options;
  const keyFile = options.ageKeyFile ?? defaultAgeKeyFile(environment);
  if (fs.existsSync(keyFile)) return { source: projectRoot, ageKey: fs.readFileSync(keyFile, 'utf8') };
  if (options.ageKeyFile !== undefined) throw new E2eError(`--age-key ${keyFile} does not exist`);
  if (environment !== 'local') {
    log(`no age key at ${keyFile}: ${environment}'s Secrets cannot be decrypted (npm run secrets -- init ${environment})`);
    return { source: projectRoot, ageKey: '' };
  }
  const clone = path.join(options.dir, 'source');
  run('git', ['clone', '--quiet', '--no-local', projectRoot, clone]);
  const throwaway = path.join(options.dir, 'throwaway-local.key');
  const env = loadEnvironments().find((e) => e.name === environment)!;
  // The team chat's address is the run's webhook sink, which the notifications reach on loopback.
  const chat = keyId(ALERT_ROUTING.teamChat.secret.name, ALERT_ROUTING.teamChat.secret.key);
  const report = initEnvironment({
    root: clone,
    environment: env,
    keyFile: throwaway,
    rotateKey: true,
    tools: sopsTools(projectRoot),
    assignments: [{ option: '--set', text: `${chat}=${options.chatWebhookUrl}` }],
  });
  run('git', ['-C', clone, '-c', 'user.name=platform-gitops e2e', '-c', 'user.email=e2e@localhost', 'commit', '--quiet', '--allow-empty', '-am', 'e2e: local Secrets for a throwaway key']);
  log(`no age key at ${keyFile}: serving a clone with local's Secrets re-encrypted for a throwaway key (${report.written.length} files), the team chat at ${options.chatWebhookUrl}`);
  return { source: clone, ageKey: fs.readFileSync(throwaway, 'utf8') };
}

/** What the cluster reaches through the loopback proxy: the repository, the Helm repositories, the followed chart registry. */
export interface Served {
  /** The checkout the git server serves (the project, or a clone of it with local's Secrets re-encrypted). */
  readonly source: string;
  /** The age key the repository server decrypts with (empty when none). */
  readonly ageKey: string;
  readonly git: GitServer;
  /** The hosts of the stand-in Helm repositories. */
  readonly hosts: string[];
  readonly environmentValues: Environment;
  /** The registry an environment that follows its published charts reads, and what the run published to it. */
  readonly publishing: { host: string; published: Published[]; loopback: string } | undefined;
  /** The loopback proxy's port, Argo CD's way to every host above. */
  readonly proxyPort: number;
}

/**
 * Serve what Argo CD reads: the team chat's webhook sink, the git server, the stand-in Helm
 * repositories, the chart registry of an environment that follows its published charts, and
 * the loopback proxy in front of them.
 */
export async function serveSources(context: RunContext, scope: RunScope, cluster: StartedPlane): Promise<Served> {
  const { options, log, environment, projectRoot, toolchain, phaseEnded } = context;
  const { dir, supervisor, proxy, chat } = scope;
  const { platform, pki, plane } = cluster;
  await chat.start();
  const chatWebhookUrl = `${chat.url}/${ALERT_ROUTING.teamChat.receiver}`;
  const { source, ageKey } = prepareSource({ projectRoot, environment, ageKeyFile: options.ageKeyFile, dir, chatWebhookUrl, log });
  log(`git server: ${platform.repository.url}, branch ${platform.repository.targetRevision} at the HEAD of ${source}, over SSH with a per-run deploy key`);
  const git = await startGitServer({ source, url: platform.repository.url, branch: platform.repository.targetRevision, dir: path.join(dir, 'git'), supervisor });
  proxy.route(git.repository.host, git.repository.port, git.port);

  const chartRoot = path.join(dir, 'charts');
  const registry = new OciChartRegistry();
  const hosts = buildStandInCharts({
    helm: toolchain.bin('helm', 'helm'),
    crdDir: path.join(projectRoot, 'schemas', 'crds'),
    root: chartRoot,
    work: path.join(dir, 'chart-sources'),
    registry,
    toolchain,
  });
  const chartTls = pki.leaf('chart-server', plane.pki.ca, '/CN=e2e-chart-server', 'server', hosts);
  const chartServer = await serveCharts(chartRoot, registry, chartTls);
  scope.servingCharts(chartServer);
  for (const host of hosts) proxy.route(host, 443, chartServer.port);
  /**
   * An environment that follows its published charts: the real registry, at the public
   * address the values name (through the loopback proxy), and the environment's charts
   * published to it as CI does once a release is merged (1.1 step 3), from the served commit.
   */
  const publishCharts = async (): Promise<{ host: string; published: Published[]; loopback: string } | undefined> => {
    const followed = followedRegistry(environmentValues);
    if (followed === undefined) return undefined;
    const registry = parseRegistry(followed);
    const [host, port] = registry.host.split(':') as [string, string | undefined];
    const tls = pki.leaf('chart-registry', plane.pki.ca, '/CN=e2e-chart-registry', 'server', [host], ['127.0.0.1']);
    const started = await startChartRegistry({ toolchain, supervisor, dir: path.join(dir, 'chart-registry'), tls, ca: plane.pki.ca.cert });
    proxy.route(host, Number(port ?? 443), started.port);
    const loopback = `${started.loopback}${registry.url.slice(`oci://${registry.host}`.length)}`;
    const settings = { helm: helmBinary(projectRoot), registry: parseRegistry(loopback), plainHttp: false, caFile: plane.pki.ca.cert };
    const published = environmentValues.applications.map((application) => publishChart(settings, environment, applicationChart(source, environment, application.name)));
    log(`chart registry (distribution ${toolchain.versions.distribution}) for ${registry.url}: published ${published.map((p) => `${p.application} ${p.version}`).join(', ')}`);
    // Reported as Argo CD reads them: at the registry the values name.
    return { host, published: published.map((chart) => ({ ...chart, reference: chartReference(registry, environment, chart.application) })), loopback };
  };
  const environmentValues = loadEnvironments().find((e) => e.name === environment)!;
  const publishing = await publishCharts();
  const proxyPort = await proxy.listen();
  phaseEnded('git, charts and registry served');
  log(`stand-in Helm repositories for ${hosts.join(', ')} (each chart's CRDs and controller Deployment, installed when Argo CD syncs it)`);
  const upgrade = standInUpgrade();
  log(`stand-in upgrade: ${upgrade.release}'s chart also at ${upgrade.next} (git pins ${upgrade.pinned}), with the ConfigMap ${upgrade.configMap}`);
  return { source, ageKey, git, hosts, environmentValues, publishing, proxyPort };
}
