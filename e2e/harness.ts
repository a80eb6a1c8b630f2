import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bootstrapManifests } from '../pulumi/bootstrap-manifests';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { defaultAgeKeyFile, initEnvironment } from '../src/secrets/init';
import { sopsTools } from '../src/secrets/sops';
import { keyId } from '../src/secrets/catalog';
import { ALERT_ROUTING } from '../src/contract/choices';
import { argoCdRedisSecret, argoCdServerSecret, loopbackClusterSecret, chartRepositorySecrets, startArgoCd, syncAsOperator, withProxy } from './argocd';
import { argoCdManifestsRepository, argoCdModuleDir, buildArgoCdKustomization } from './argo-cd-manifests';
import { type ApplicationState, converged } from '../src/cluster/application-state';
import { chartRevision, helmSource } from '../src/cluster/helm-source';
import type { LiveObject } from '../src/cluster/connection';
import { CONVERGENCE_KINDS, formatTable, watchConvergence } from './convergence';
import { startApiServer, startControlPlane, writeKubeconfig } from './control-plane';
import { type DryRunResult, dryRunEnvironment, installCrds, readCrds, readObjects } from './dry-run';
import { E2eError, UsageError } from '../src/base/errors';
import { RENDERED_DIR } from '../src/contract/layout';
import { startGitServer } from './git-server';
import type { KubeClient, KubeObject } from './kube-client';
import { LoopbackProxy } from './loopback-proxy';
import { Pki } from './pki';
import { Supervisor, run, sleep } from './processes';
import { StandInControllers, STAND_IN_PROVISIONER } from './stand-in-controllers';
import { OciChartRegistry } from './oci-registry';
import { buildStandInCharts, chartsByRepository, serveCharts, standInFor, standInUpgrade } from './stand-in-charts';
import { INFRASTRUCTURE_RELEASES, type InfrastructureRelease, RELEASE_ROWS, isHelmRelease, releaseKustomizationPath, releaseNamespace } from '../src/infrastructure/releases';
import { CLUSTER_COMPONENTS, ensureToolchain } from '../toolchain';
import { type IssuedCertificate, issuedCertificates, startCertManager } from './cert-manager';
import { ENVOY_GATEWAY_PORTS, startEnvoyGateway, StuckGateways } from './envoy-gateway';
import { assertFixedPortsFree } from './loopback';
import { NetworkPolicyJudge } from './network-policy';
import { startFlagger } from './flagger';
import { type GeneratedMonitoring, generatedMonitoring, startPrometheusOperator } from './prometheus-operator';
import { type ExecResult, execAgainstCluster } from './exec';
import { LiveContainers, type MigrationRun, type SmokeRun } from './live-containers';
import { RecordingServer } from './webhook-sink';
import { startChartRegistry } from './chart-registry';
import { applicationChart } from '../src/artifact/application-chart';
import { chartReference, helmBinary, parseRegistry, publishChart, type Published } from '../src/artifact/publish';
import { followedRegistry } from '../src/charts/gitops-applications';


/**
 * The kinds the stand-in controllers and the live containers read each pass, kept from
 * watches (KubeClient.watchKinds): a pass reads them from memory and starts at a change of
 * one of them, instead of listing every one of them each second.
 */
const STAND_IN_KINDS = [
  'v1/Secret',
  'v1/ConfigMap',
  'v1/Pod',
  'v1/Service',
  'v1/PersistentVolumeClaim',
  'apps/v1/Deployment',
  'storage.k8s.io/v1/StorageClass',
  'gateway.networking.k8s.io/v1/Gateway',
  'kafka.strimzi.io/v1/Kafka',
  'kafka.strimzi.io/v1/KafkaNodePool',
  'kafka.strimzi.io/v1/KafkaTopic',
  'kafka.strimzi.io/v1/KafkaUser',
] as const;

/** Every kind the harness keeps from a watch: the stand-ins' and the convergence watch's. */
const WATCHED_KINDS = [...STAND_IN_KINDS, ...CONVERGENCE_KINDS] as const;

/** The signals a run stops on, cleanly: everything it started stopped, its folder removed. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The least time between two passes of the stand-in controllers (a burst of changes is one pass). */
const MIN_PASS_GAP_MS = 200;
/** The group the bootstrap grants the live operations' roles to, in the e2e; `--exec` runs as a member. */
const OPERATORS_GROUP = 'platform-gitops-operators';

/** What `npm run e2e` was asked to do. */
export interface E2eOptions {
  /** The environment to bootstrap and converge. */
  readonly environment: string;
  /** The checkout whose committed dist/ and secrets/ are served. */
  readonly projectRoot: string;
  /**
   * How long the Applications may take to converge.
   * @default 600 s
   */
  readonly timeoutSeconds?: number;
  /**
   * End the run, not converged, once every Application that has not converged has kept the
   * same state this many seconds and all the others have converged (e2e/convergence.ts,
   * `settled`): for a run expected not to converge, which a stuck Application would
   * otherwise keep waiting to its timeout. A run that finds an unmendable Application then
   * stops only once the others have converged, stopped or kept their state that long
   * (`stillChanging`).
   * @default - wait to the timeout
   */
  readonly settleSeconds?: number;
  /**
   * Also server-side dry-run every object of every environment.
   * @default true
   */
  readonly dryRun?: boolean;
  /** Keep the run folder (logs, certificates, kubeconfig) instead of removing it. */
  readonly keep?: boolean;
  /** The age key file to give the repository server (SOPS_AGE_KEY_FILE). */
  readonly ageKeyFile?: string;
  /**
   * A bash command run once every Application has converged, with KUBECONFIG set to the
   * cluster's (`npm run e2e -- --exec 'npm run ops -- status --env local'`); the run fails
   * when it fails.
   * @default - none
   */
  readonly exec?: string;
  /**
   * Seconds the command may run.
   * @default 1800
   */
  readonly execTimeoutSeconds?: number;
  readonly log?: (line: string) => void;
}

/** The `--report` JSON. */
export interface E2eReport {
  readonly environment: string;
  readonly kubernetes: string;
  readonly argocd: string;
  readonly applications: readonly { name: string; sync: string; health: string; message: string }[];
  /** What ran behind each upstream release: its real controller (with the version run) or a stand-in. */
  readonly controllers: readonly { release: string; chart: string; version: string; runs: 'real' | 'real chart' | 'stand-in' }[];
  readonly dryRun: readonly DryRunResult[];
  /** The `--exec` command and how it ended; absent when none was given or the Applications did not converge. */
  readonly exec?: ExecResult;
  /**
   * The texts Argo CD's notifications controller posted to the team chat (the run's webhook
   * sink, when local's Secrets were re-encrypted for a throwaway key), in order.
   */
  readonly notifications: readonly string[];
  /**
   * Why the run stopped before its timeout: an Application no later wave or retry could mend
   * (e2e/convergence.ts, `unmendable`). Absent when the run waited for convergence to the end.
   */
  readonly stopped?: string;
  /**
   * Why the run ended before its timeout with nothing unmendable: `--settle` (e2e/convergence.ts,
   * `settled`). Absent without `--settle` or when the run did not end that way.
   */
  readonly settled?: string;
  /**
   * For an environment that follows its published charts: each application's chart the run
   * published to its registry, and the version its Application was synced at when the run ended.
   */
  readonly publishedCharts?: readonly { application: string; reference: string; published: string; synced: string }[];
  /** Every Certificate when the run ended, with the certificate cert-manager issued into its Secret. */
  readonly certificates: readonly IssuedCertificate[];
  /** What prometheus-operator generated when the run ended: rule files and Alertmanager configurations. */
  readonly monitoring: GeneratedMonitoring;
  /** Every run of the migrations image (the Sync hooks', the live operations' Jobs), played on loopback with its pod's connection string, in order. */
  readonly migrations: readonly MigrationRun[];
  /** Every smoke hook's HTTP step, its script run on loopback against the application pod its Service sends to, in the order they ended. */
  readonly smoke: readonly SmokeRun[];
  /**
   * The same observations once every Application had converged, before the `--exec` command
   * changed anything: what the committed project converged to, in a run that then operates on it.
   * Absent when no command ran.
   */
  readonly converged?: ObservedState;
  readonly durationSeconds: number;
  /**
   * When each phase of the run ended, in seconds from its start, in order: the toolchain
   * check, the control plane, the servers (git, charts, registry), Argo CD, the bootstrap,
   * each Application first converged (Healthy for one only an operator syncs), the
   * operator's sync, the `--exec` command; and the dry-run, which runs beside them, where it
   * ended. What did not happen is absent. `npm run bench -- --only e2e` prints them.
   */
  readonly phases: readonly {
    readonly phase: string;
    readonly seconds: number;
    /** When a phase that ran beside the others (the dry-run) started, in seconds from the start; absent for one that followed the phase before it. */
    readonly since?: number;
  }[];
  /** True when every Application is Synced and Healthy and every dry-run passed. */
  readonly passed: boolean;
}

/** What the run observed in the cluster at one moment (the report's fields of the same names). */
export type ObservedState = Pick<E2eReport, 'notifications' | 'certificates' | 'monitoring' | 'migrations' | 'smoke'>;

/** One line per release: what ran behind it. */
function formatControllers(controllers: E2eReport['controllers']): string {
  const width = Math.max(...controllers.map((c) => c.release.length));
  return ['RELEASE'.padEnd(width) + '  RUNS        VERSION', ...controllers.map((c) => `${c.release.padEnd(width)}  ${c.runs.padEnd(10)}  ${c.version}`)].join('\n');
}

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

/** Applications the environment renders (name to sync wave), besides the root. */
function expectedApplications(objects: readonly KubeObject[], rootName: string): Map<string, number> {
  const expected = new Map<string, number>([[rootName, 0]]);
  for (const object of objects) {
    if (object.kind === 'Application') {
      expected.set(object.metadata.name, Number(object.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0));
    }
  }
  return expected;
}

/** StorageClasses the environment's claims name: the cluster provides them, the harness stands in. */
function storageClasses(objects: readonly KubeObject[]): KubeObject[] {
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'storageClassName' && typeof v === 'string') names.add(v);
        else visit(v);
      }
    }
  };
  objects.forEach(visit);
  return [...names].sort().map((name) => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: STAND_IN_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  }));
}

/**
 * Bring up a control plane and Argo CD on loopback, bootstrap `environment` the way
 * the Pulumi program does, and watch every Application converge; then server-side
 * dry-run every environment. Everything started is stopped and the run folder removed
 * (unless `keep`), also on failure.
 */
export async function runE2e(options: E2eOptions): Promise<E2eReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const startedAt = Date.now();
  const { environment, projectRoot } = options;
  if (!(ENVIRONMENT_ORDER as readonly string[]).includes(environment)) {
    // A usage error: the command prints it with its usage (an E2eError is taken as already printed).
    throw new UsageError(`--env ${JSON.stringify(environment)} must be one of ${ENVIRONMENT_ORDER.join(', ')}`);
  }
  const distDir = path.join(projectRoot, RENDERED_DIR);
  if (!fs.existsSync(path.join(distDir, environment))) throw new E2eError(`${path.join(distDir, environment)} does not exist: run npm run synth and commit dist/`);
  const rendered = readObjects(path.join(distDir, environment)).map((entry) => entry.object);

  const phases: { phase: string; seconds: number; since?: number }[] = [];
  const secondsSinceStart = () => Math.round((Date.now() - startedAt) / 100) / 10;
  const phaseEnded = (phase: string, since?: number) => phases.push({ phase, seconds: secondsSinceStart(), ...(since === undefined ? {} : { since }) });
  const toolchain = ensureToolchain(CLUSTER_COMPONENTS, projectRoot);
  phaseEnded('toolchain checked');
  // Before anything starts: a port another run holds fails now, not once Envoy Gateway's turn comes.
  try {
    await assertFixedPortsFree(ENVOY_GATEWAY_PORTS);
  } catch (error) {
    if (error instanceof E2eError) log(`e2e ${environment}: ${error.message}`);
    throw error;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-e2e-'));
  fs.chmodSync(dir, 0o711);
  const supervisor = new Supervisor(path.join(dir, 'logs'), dir);
  const proxy = new LoopbackProxy();
  let charts: { close: () => Promise<void> } | undefined;
  let stopControllers = false;
  let controllersDone: Promise<void> = Promise.resolve();
  let liveContainers: LiveContainers | undefined;
  let watchingClient: KubeClient | undefined;
  /** Set once the run ends: the dry-run beside it stops at its next step. */
  let ending = false;
  let dryRunSettled: Promise<unknown> = Promise.resolve();
  const chat = new RecordingServer();
  const cleanup = async (): Promise<void> => {
    ending = true;
    stopControllers = true;
    await controllersDone.catch(() => undefined);
    watchingClient?.close();
    await liveContainers?.close();
    // The notifications controller posts to the chat until it stops.
    await supervisor.stopAll();
    await dryRunSettled;
    await chat.close();
    await proxy.close();
    await charts?.close();
    if (options.keep) log(`run folder kept: ${dir} (logs in ${supervisor.logDir})`);
    else fs.rmSync(dir, { recursive: true, force: true });
  };
  let cleaning: Promise<void> | undefined;
  const cleanupOnce = (): Promise<void> => (cleaning ??= cleanup());
  // Handled until the cleanup has ended: a signal during it (a second Ctrl-C, a timeout's
  // SIGTERM while a stop hangs) exits at once, and the exit kills every process still running
  // (Supervisor); without a handler it would end this process and leave them running.
  const onSignal = (): void => {
    if (cleaning !== undefined) process.exit(130);
    void cleanupOnce().finally(() => process.exit(130));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);

  try {
    const platform = loadPlatform();
    const namespace = platform.controller.namespace;
    const pki = new Pki(path.join(dir, 'pki'));
    log(`e2e ${environment}: control plane (Kubernetes ${toolchain.versions.kubernetes}, etcd ${toolchain.versions.etcd}, kwok ${toolchain.versions.kwok})`);
    const plane = await startControlPlane({ toolchain, supervisor, dir, pki, namespace, log });
    phaseEnded('control plane started');
    const { client } = plane;
    client.watchKinds(WATCHED_KINDS);
    watchingClient = client;

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
    charts = chartServer;
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

    const manifests = bootstrapManifests(environment, { repositorySshPrivateKey: git.deployKey, sopsAgeKey: ageKey }, { operators: OPERATORS_GROUP });

    // 1. What the Pulumi bootstrap applies (ArgoCdInstallation): the environment's committed
    // kustomization of Argo CD, built against the pinned tag's manifests from the module the
    // toolchain builds Argo CD from (e2e/argo-cd-manifests.ts), CRDs first. The processes below
    // read its ConfigMaps (health checks, notifications); the `argocd` Application, which only
    // an operator syncs, syncs the same folder later.
    await client.apply(manifests.namespace as KubeObject);
    const argoCdManifests = argoCdManifestsRepository(argoCdModuleDir(projectRoot), path.join(dir, 'argo-cd-manifests'));
    const argoCdObjects = buildArgoCdKustomization(
      toolchain.bin('kustomize', 'kustomize'),
      path.join(source, releaseKustomizationPath(environment, INFRASTRUCTURE_RELEASES.argoCd)),
      argoCdManifests,
    );
    const isCrd = (object: KubeObject) => object.kind === 'CustomResourceDefinition';
    for (const object of [...argoCdObjects.filter(isCrd), ...argoCdObjects.filter((object) => !isCrd(object))]) await client.apply(object);
    log(`Argo CD ${INFRASTRUCTURE_RELEASES.argoCd.manifests.version}'s manifests with the platform's patches: ${argoCdObjects.length} objects applied`);
    await client.apply(argoCdServerSecret(namespace));
    await client.apply(argoCdRedisSecret(namespace));
    await client.apply(loopbackClusterSecret(namespace));
    await client.apply(manifests.ageKeySecret as unknown as KubeObject);
    for (const storageClass of storageClasses(rendered)) await client.apply(storageClass);
    await startArgoCd({
      toolchain,
      supervisor,
      client,
      kubeconfig: plane.kubeconfig,
      namespace,
      dir: path.join(dir, 'argocd'),
      argoCdManifests,
      repoServer: argoCdObjects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'argocd-repo-server')!,
      knownHosts: git.knownHosts,
      tlsCertificates: new Map([...hosts, ...(publishing === undefined ? [] : [publishing.host])].map((host) => [host, plane.pki.ca.cert])),
    });
    // `argocd: v3.6.1+unknown`: the build knows its tag, not its commit.
    const argocdVersion = run(toolchain.bin('argocd', 'argocd'), ['version', '--client', '--short']).trim().replace(/^argocd:\s*/, '').replace(/\+unknown$/, '');
    log(`Argo CD ${argocdVersion}: repository server and application controller running`);
    // What runs is what the platform installs: the binary's tag is the manifests' tag.
    const installed = INFRASTRUCTURE_RELEASES.argoCd.manifests.version;
    if (argocdVersion !== installed) throw new E2eError(`the toolchain's Argo CD is ${argocdVersion}, the platform installs ${installed}'s manifests: rebuild toolchain/build.sh argocd`);
    phaseEnded('Argo CD started');

    // 2. Repository credentials, then the AppProject and the root Application (Pulumi: RepositoryCredentials, RootApplication).
    await client.apply(withProxy(manifests.repositorySecret as unknown as KubeObject, `socks5://127.0.0.1:${proxyPort}`));
    const chartRepositories = [...chartsByRepository().keys()].sort();
    for (const secret of chartRepositorySecrets(namespace, chartRepositories, `socks5://127.0.0.1:${proxyPort}`)) await client.apply(secret);
    if ('chartRegistrySecret' in manifests) await client.apply(withProxy(manifests.chartRegistrySecret as unknown as KubeObject, `socks5://127.0.0.1:${proxyPort}`));
    await client.apply(manifests.project as KubeObject);
    await client.apply(manifests.rootApplication as KubeObject);
    // The bindings in a namespace Argo CD creates (the broker's) wait for it, as the bootstrap's do.
    const inLaterNamespaces = (object: { metadata: { namespace?: string } }) => object.metadata.namespace !== undefined && object.metadata.namespace !== namespace;
    for (const object of manifests.operationsAccess.filter((object) => !inLaterNamespaces(object))) await client.apply(object as KubeObject);
    const laterAccess = manifests.operationsAccess.filter(inLaterNamespaces) as KubeObject[];
    log(`bootstrapped: namespace ${namespace}, repository Secret, age key Secret, AppProject ${manifests.project.metadata.name}, root Application ${manifests.rootApplication.metadata.name}`);
    phaseEnded('bootstrapped');

    // The server-side dry-run of every environment, beside the convergence: an empty cluster
    // of its own (the converged environment's objects would turn the dry-run of another
    // environment into updates of immutable fields), its API server at the lowest priority,
    // so it takes the cores the waves leave idle and delays none of them. Awaited for the report.
    const timeoutMs = (options.timeoutSeconds ?? 600) * 1000;
    const dryRunning = (async (): Promise<DryRunResult[]> => {
      if (!(options.dryRun ?? true)) return [];
      const since = secondsSinceStart();
      // Each wait within what is left of the run's bound (a minute at least); none after the run ended.
      const remainingMs = () => Math.max(startedAt + timeoutMs - Date.now(), 60_000);
      const stillRunning = () => {
        if (ending) throw new E2eError('the run ended before the dry-run did');
      };
      try {
        const empty = await startApiServer({
          toolchain,
          supervisor,
          dir,
          pki: plane.pki,
          etcd: plane.etcd,
          name: 'kube-apiserver-dry-run',
          etcdPrefix: '/dry-run',
          niceness: 19,
          // At the lowest priority it starts when the waves leave it a core.
          readyTimeoutMs: remainingMs(),
          check: stillRunning,
        });
        await installCrds(empty.client, readCrds(path.join(projectRoot, 'schemas', 'crds')), remainingMs(), log, stillRunning);
        const results: DryRunResult[] = [];
        for (const env of ENVIRONMENT_ORDER) {
          stillRunning();
          const result = await dryRunEnvironment(empty.client, env, distDir);
          results.push(result);
          log(`server-side dry-run ${env}: ${result.objects} objects and ${result.pods} Pods from their templates, ${result.failures.length} refused`);
          for (const failure of result.failures) log(`  ${env}: ${failure}`);
        }
        phaseEnded('dry-run', since);
        return results;
      } catch (error) {
        if (ending) throw error;
        // The dry-run's own cluster failed (not an object refused): every environment fails with why.
        const why = `not dry-run: ${error instanceof Error ? error.message : String(error)}`;
        log(`server-side dry-run: ${why}`);
        phaseEnded('dry-run', since);
        return ENVIRONMENT_ORDER.map((environment) => ({ environment, objects: 0, pods: 0, failures: [why] }));
      }
    })();
    // A run that ends by an error before awaiting it reports that error, not this one; its
    // cleanup waits for it to stop.
    dryRunSettled = dryRunning.catch(() => undefined);

    const { envoyGateway, certManager, flagger, kubePrometheusStack } = INFRASTRUCTURE_RELEASES;
    /** The releases whose real controller runs here, with the version it runs: Argo CD (above), cert-manager, Envoy Gateway, Flagger and prometheus-operator (started once Argo CD creates their release's controller Deployment). */
    const realControllers = new Map<InfrastructureRelease, string>([
      [INFRASTRUCTURE_RELEASES.argoCd, argocdVersion],
      [certManager, toolchain.versions['cert-manager']],
      [envoyGateway, toolchain.versions['envoy-gateway']],
      [flagger, toolchain.versions.flagger],
      [kubePrometheusStack, toolchain.versions['prometheus-operator']],
    ]);
    const releaseValues = { environment: environmentValues, platform };
    const controllers = new StandInControllers(client, {
      [certManager.chart.chart]: async (releaseNamespace) =>
        startCertManager({
          toolchain,
          supervisor,
          client,
          dir,
          serving: { pair: pki.leaf('cert-manager-webhook', plane.pki.ca, '/CN=cert-manager-webhook', 'server', [], ['127.0.0.1']), ca: plane.pki.ca.cert },
          kubeconfig: plane.kubeconfig,
          release: { name: certManager.name, namespace: releaseNamespace, values: certManager.values(releaseValues) },
          log,
        }),
      [envoyGateway.chart.chart]: (releaseNamespace) =>
        startEnvoyGateway({
          toolchain,
          supervisor,
          client,
          dir,
          kubeconfig: plane.kubeconfig,
          release: { name: envoyGateway.name, namespace: releaseNamespace, values: envoyGateway.values(releaseValues) },
          log,
        }),
      [kubePrometheusStack.chart.chart]: () => startPrometheusOperator({ toolchain, supervisor, dir, kubeconfig: plane.kubeconfig, log }),
      [flagger.chart.chart]: async (releaseNamespace) =>
        startFlagger({
          toolchain,
          supervisor,
          dir,
          kubeconfig: plane.kubeconfig,
          release: { name: flagger.name, namespace: releaseNamespace, values: flagger.values(releaseValues) },
          log,
        }),
    });
    liveContainers = new LiveContainers(
      client,
      path.join(dir, 'containers'),
      environmentValues.applications.map((application) => ({ namespace: application.namespace, container: application.name, name: application.name, database: application.database.name })),
      environmentValues.database.namespace,
      environmentValues.broker.namespace,
      log,
      new NetworkPolicyJudge(toolchain.bin('network-policy', 'network-policy-verdict'), client),
    );
    const containers = liveContainers;
    const stuckGateways = new StuckGateways(client, releaseNamespace(envoyGateway, releaseValues), log);
    controllersDone = (async () => {
      while (!stopControllers) {
        // A change during the pass (its own writes too) starts the next one; none, a second.
        const change = client.changed(1_000, STAND_IN_KINDS);
        try {
          for (const object of [...laterAccess]) {
            if ((await client.get('v1', 'Namespace', object.metadata.namespace!)) === undefined) continue;
            await client.apply(object);
            laterAccess.splice(laterAccess.indexOf(object), 1);
          }
          await controllers.reconcile();
          await containers.reconcile();
          await stuckGateways.poll();
        } catch (error) {
          log(`stand-in controllers: ${error instanceof Error ? error.message : String(error)}`);
        }
        await Promise.all([change, sleep(MIN_PASS_GAP_MS)]);
      }
    })();

    const expected = expectedApplications(rendered, manifests.rootApplication.metadata.name);
    /**
     * What prometheus-operator generated, the Certificates cert-manager issued, the team chat's
     * notifications and the containers' runs, logged; once everything converged (`synced`) it
     * waits for the generated files and the issued Certificates the converged objects make.
     * Logged under `when`: a run with --exec looks twice, before the command and at the end.
     */
    const observe = async (synced: boolean, when: 'at convergence, before --exec' | 'at the end'): Promise<ObservedState> => {
      log('');
      log(`--- what the cluster holds ${when} ---`);
      // The monitoring stack's chart makes one Prometheus and one Alertmanager (its values).
      const stackSynced = synced && expected.has(INFRASTRUCTURE_RELEASES.kubePrometheusStack.name) ? 1 : 0;
      const monitoring = await generatedMonitoring(client, { prometheus: stackSynced, alertmanager: stackSynced });
      log('');
      log(`generated by prometheus-operator:${Object.entries(monitoring.ruleFiles).map(([id, files]) => `\n  rule files of Prometheus ${id}: ${Object.keys(files).join(', ') || '-'}`).join('')}${Object.keys(monitoring.alertmanagerConfigs).map((id) => `\n  configuration of Alertmanager ${id}`).join('')}${monitoring.rejected.map((why) => `\n  rejected: ${why}`).join('')}`);
      const certificates = await issuedCertificates(client, synced ? rendered.filter((o) => o.apiVersion === 'cert-manager.io/v1' && o.kind === 'Certificate').length : 0);
      log('');
      log(`certificates (namespace/name, Ready, issued by):${certificates.map((c) => `\n  ${c.namespace}/${c.name}  ${c.ready}  ${c.issuer?.replaceAll('\n', ', ') ?? '-'}`).join('')}`);
      const notifications = chat.to(`/${ALERT_ROUTING.teamChat.receiver}`).map((request) => String(request.body?.text ?? JSON.stringify(request.body)));
      log('');
      log(`deployment notifications in the team chat (${notifications.length}):${notifications.map((text) => `\n  ${text}`).join('')}`);
      return { notifications, certificates, monitoring, migrations: [...(liveContainers?.migrations ?? [])], smoke: [...(liveContainers?.smoke ?? [])] };
    };
    const watch = (beforeOperatorSync: boolean, remainingMs: number, onConverged?: (state: ApplicationState) => void) =>
      watchConvergence({
        client,
        namespace,
        expected,
        timeoutMs: remainingMs,
        log,
        between: async () => {
          supervisor.assertRunning();
          controllers.assertStarted();
          controllers.assertNoRefusal();
        },
        waitingPods: () => controllers.waitingPods,
        startedAt,
        beforeOperatorSync,
        ...(onConverged === undefined ? {} : { onConverged }),
        ...(options.settleSeconds === undefined ? {} : { settleSeconds: options.settleSeconds }),
      });
    // Everything converges by itself but what only an operator syncs (Argo CD's own release);
    // then the harness is that operator: it syncs each such Application, and every
    // Application must end Synced and Healthy.
    const first = await watch(true, timeoutMs, (state) => phaseEnded(`${state.name} (wave ${state.wave}) ${state.operatorSynced === true ? 'Healthy' : 'Synced and Healthy'}`));
    let { states, converged: allConverged } = first;
    let stopped = first.stopped;
    let settled = first.settled;
    const operatorSynced = states.filter((state) => state.operatorSynced === true).map((state) => state.name);
    const operatorFailures: string[] = [];
    if (allConverged && operatorSynced.length > 0) {
      // Synced or not (the bootstrap's release may already match git), the operator's sync must run and succeed.
      for (const name of operatorSynced) {
        log(`operator: argocd app sync ${name} (the change to it reviewed)`);
        const result = await syncAsOperator(client, namespace, name, Math.max(startedAt + timeoutMs - Date.now(), 60_000));
        log(`operator: sync of ${name} ${result.phase}${result.message ? `: ${result.message}` : ''}`);
        if (result.phase !== 'Succeeded') {
          allConverged = false;
          operatorFailures.push(`the operator's sync of ${name} ${result.phase}`);
        }
      }
      if (allConverged) ({ states, converged: allConverged, stopped, settled } = await watch(false, Math.max(startedAt + timeoutMs - Date.now(), 60_000)));
      phaseEnded("operator's sync");
    }
    let exec: ExecResult | undefined;
    let convergedState: ObservedState | undefined;
    if (allConverged && options.exec !== undefined) {
      convergedState = await observe(true, 'at convergence, before --exec');
      log(`exec (as a member of ${OPERATORS_GROUP}): ${options.exec}`);
      // The command runs as an operator with the bootstrap's roles of `npm run ops` alone; what
      // a test does behind Argo CD's back goes through the administrator's kubeconfig.
      const operator = pki.leaf('operator', plane.pki.ca, `/O=${OPERATORS_GROUP}/CN=e2e-operator`, 'client');
      const operatorKubeconfig = path.join(dir, 'kubeconfig-operator');
      writeKubeconfig(operatorKubeconfig, plane.server, plane.pki, namespace, operator);
      exec = await execAgainstCluster({
        command: options.exec,
        cwd: projectRoot,
        env: {
          KUBECONFIG: operatorKubeconfig,
          E2E_ADMIN_KUBECONFIG: plane.kubeconfig,
          E2E_CONTAINERS: containers.root,
          E2E_STAND_IN_UPGRADE: JSON.stringify({ ...standInUpgrade(), applicationNamespace: namespace }),
          // The checkout served and the bare repository the git server serves (a push there is
          // what Argo CD syncs next), and the chart registry as publishing reaches it.
          E2E_SOURCE: source,
          E2E_GIT_REPOSITORY: git.bareRepository,
          E2E_GIT_BRANCH: platform.repository.targetRevision,
          ...(publishing === undefined ? {} : { E2E_CHART_REGISTRY: publishing.loopback, E2E_CHART_REGISTRY_CA: plane.pki.ca.cert }),
        },
        timeoutSeconds: options.execTimeoutSeconds ?? 1800,
        log,
      });
      log(`exec: exit ${exec.exitCode} after ${exec.seconds} s`);
      phaseEnded('exec');
    }
    if (proxy.refused.size > 0) log(`the loopback proxy refused: ${[...proxy.refused].sort().join(', ')}`);

    const dryRun = await dryRunning;

    const durationSeconds = Math.round((Date.now() - startedAt) / 1000);
    log('');
    log(formatTable(states));
    const notConverged = states.filter((s) => !converged(s));
    const execFailed = options.exec !== undefined && exec?.exitCode !== 0;
    const passed = allConverged && !execFailed && dryRun.every((r) => r.failures.length === 0);
    log('');
    log(
      passed
        ? `e2e ${environment}: every Application Synced and Healthy, every environment accepted by the API server, in ${durationSeconds} s`
        : `e2e ${environment}: FAILED after ${durationSeconds} s: ${[
            ...(stopped === undefined ? [] : [`stopped early, as no wave or retry could mend it: ${stopped}`]),
            ...(settled === undefined ? [] : [`ended early (--settle): ${settled}`]),
            ...(notConverged.length > 0 ? [`not converged: ${notConverged.map((s) => s.name).join(', ')}`] : []),
            ...operatorFailures,
            ...(execFailed && exec !== undefined ? [`--exec exited ${exec.exitCode}`] : []),
            ...dryRun.filter((r) => r.failures.length > 0).map((r) => `${r.environment}: ${r.failures.length} objects refused by the API server`),
          ].join('; ')}`,
    );
    const behindReleases = RELEASE_ROWS.map((release) => {
      const realVersion = realControllers.get(release);
      if (!isHelmRelease(release)) return { release: release.name, chart: `${release.manifests.repoURL.replace(/^https:\/\/github\.com\//, '')} manifests`, version: realVersion ?? release.manifests.version, runs: 'real' } as const;
      const runs = realVersion !== undefined ? 'real' : standInFor(release.chart.chart).realChart ? 'real chart' : 'stand-in';
      return { release: release.name, chart: release.chart.chart, version: realVersion ?? release.chart.version, runs } as const;
    });
    log('');
    log(formatControllers(behindReleases));
    log('');
    log(`phases (seconds from the start): ${phases.map(({ phase, seconds }) => `${phase} ${seconds}`).join(', ')}`);
    const publishedCharts =
      publishing === undefined
        ? undefined
        : await Promise.all(
            publishing.published.map(async (chart) => {
              const app = (await client.get('argoproj.io/v1alpha1', 'Application', chart.application, namespace)) as LiveObject | undefined;
              const source = app === undefined ? undefined : helmSource(app);
              return { application: chart.application, reference: chart.reference, published: chart.version, synced: source === undefined ? '' : chartRevision(app!, source) };
            }),
          );
    if (publishedCharts !== undefined) {
      log('');
      log(`published charts (application, published, synced at the end):${publishedCharts.map((c) => `\n  ${c.application}  ${c.published}  ${c.synced || '-'}  ${c.reference}`).join('')}`);
    }
    const { notifications, certificates, monitoring, migrations, smoke } = await observe(allConverged, 'at the end');
    return {
      environment,
      kubernetes: plane.version,
      argocd: argocdVersion,
      applications: states.map(({ name, sync, health, message }) => ({ name, sync, health, message })),
      controllers: behindReleases,
      dryRun,
      ...(exec === undefined ? {} : { exec }),
      ...(stopped === undefined ? {} : { stopped }),
      ...(settled === undefined ? {} : { settled }),
      ...(publishedCharts === undefined ? {} : { publishedCharts }),
      notifications,
      certificates,
      monitoring,
      migrations,
      smoke,
      ...(convergedState === undefined ? {} : { converged: convergedState }),
      durationSeconds,
      phases,
      passed,
    };
  } catch (error) {
    if (error instanceof E2eError) log(`e2e ${environment}: ${error.message}`);
    if (!options.keep) log('(run with --keep to keep the logs and certificates of the run)');
    throw error;
  } finally {
    await cleanupOnce();
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}
