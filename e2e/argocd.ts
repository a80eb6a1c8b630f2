import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_SERVER_VOLUMES } from '../src/infrastructure/argo-cd-values';
import { argoCdReleaseValues } from '../src/infrastructure/releases';
import { writeGitRedirect } from './argo-cd-manifests';
import { pluginManifests } from '../src/infrastructure/argo-cd-kustomization';
import { freePort, listening } from './loopback';
import { E2eError } from '../src/base/errors';
import { operationRuns } from '../src/cluster/argo-cd';
import { IN_CLUSTER } from '../src/constructs/argo-cd-sync-policy';
import { CLUSTER_SECRET_LABEL, REPOSITORY_SECRET_LABEL } from '../src/contract/upstream';
import type { KubeClient, KubeObject } from './kube-client';
import { type Supervisor, waitFor } from './processes';
import { isOciRepository } from './stand-in-charts';
import { type ContainerPlay, type ContainerSpec, containerPlay, containerScript, type VolumeSource } from './sidecar';
import type { Toolchain } from '../toolchain';

/**
 * argocd-cmd-params-cm keys (the kustomization's `configs.params`) that the platform
 * sets, and the environment variable upstream's Deployments read each one from (their configMapKeyRef).
 * A key missing here fails the run, so a new setting is never silently dropped.
 */
const PARAM_VARIABLES: Readonly<Record<string, { component: 'controller' | 'repo-server'; variable: string }>> = {
  'controller.sync.timeout.seconds': { component: 'controller', variable: 'ARGOCD_APPLICATION_CONTROLLER_SYNC_TIMEOUT' },
};

/** What Argo CD needs on disk and in its environment, outside the cluster. */
export interface ArgoCdOptions {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  readonly client: KubeClient;
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly dir: string;
  /**
   * The local git repository of the pinned release's manifests (e2e/argo-cd-manifests.ts),
   * which the repository server's git reads for github.com/argoproj/argo-cd: the `argocd`
   * Application's remote base.
   */
  readonly argoCdManifests: string;
  /** The repository server's Deployment as the bootstrap applied it (the kustomization's): its plugin sidecars and volumes are played from it. */
  readonly repoServer: KubeObject;
  /** `known_hosts` lines for the repository host (argocd-ssh-known-hosts-cm). */
  readonly knownHosts: string;
  /** CA certificate for each HTTPS host (argocd-tls-certs-cm), by host name. */
  readonly tlsCertificates: ReadonlyMap<string, string>;
}

/**
 * argocd-secret's signing key, which Argo CD's API server writes on its first start
 * (v3.6.1 util/settings/settings.go `InitializeSettings`) and the controllers' settings read:
 * the e2e runs no API server, so the harness writes it beside upstream's empty Secret.
 */
export function argoCdServerSecret(namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'argocd-secret', namespace },
    type: 'Opaque',
    stringData: { 'server.secretkey': 'e2e-only-not-a-secret' },
  };
}

/**
 * Redis' password Secret, which upstream's Redis pod writes in its `secret-init` init container
 * (`argocd admin redis-initial-password`: Secret `argocd-redis`, key `auth`, v3.6.1
 * cmd/argocd/commands/admin/redis_initial_password.go, common.RedisInitialCredentials) and
 * every Argo CD pod reads (`secretKeyRef` argocd-redis/auth): kwok runs no init container, so
 * the harness writes it, as the bootstrap's first start would. Without it no Argo CD pod starts
 * ("Secret argocd-redis not found", seen on the e2e cluster).
 */
export function argoCdRedisSecret(namespace: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'argocd-redis', namespace }, type: 'Opaque', stringData: { auth: 'e2e-only-not-a-secret' } };
}

/**
 * The in-cluster destination as a declarative cluster Secret (Argo CD's
 * `argocd.argoproj.io/secret-type: cluster`), asking for uncompressed responses
 * (`disableCompression`, v3.6.1 pkg/apis/application/v1alpha1/types.go `rawRestConfig`,
 * which sets it on the REST config after reading the kubeconfig that
 * `ARGOCD_FAKE_IN_CLUSTER` points it to). On loopback, gzip is CPU spent on both ends for no
 * bandwidth: the API server compresses every large list and the whole OpenAPI document
 * (k8s.io/kube-openapi pkg/handler), which Argo CD's cluster cache reads again after each
 * CRD event. The platform renders no such Secret: a real cluster's Argo CD compresses as by
 * default. A deviation docs/e2e.md lists.
 */
export function loopbackClusterSecret(namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'e2e-in-cluster', namespace, labels: { [CLUSTER_SECRET_LABEL.key]: CLUSTER_SECRET_LABEL.value } },
    type: 'Opaque',
    stringData: { name: 'in-cluster', server: IN_CLUSTER, config: JSON.stringify({ tlsClientConfig: { insecure: false }, disableCompression: true }) },
  };
}

/** What the harness has on disk for the repository server's pod: its Secrets' and ConfigMaps' copies, its sockets folder, Argo CD's binaries. */
export interface RepoServerDisk {
  /** Each Secret the pod mounts, by name: the folder of its keys as files (what the kubelet mounts). */
  readonly secrets: ReadonlyMap<string, { readonly folder: string; readonly keys: readonly string[] }>;
  /** Each ConfigMap the pod mounts, by name: the folder of its keys as files. */
  readonly configMaps: ReadonlyMap<string, { readonly folder: string; readonly keys: readonly string[] }>;
  /** The chart's `plugins` emptyDir, shared with the repository server: where the plugins' sockets are. */
  readonly sockets: string;
  /** The chart's `var-files` emptyDir, where its init container copies Argo CD's binary as `argocd-cmp-server`. */
  readonly varFiles: string;
}

/**
 * How the harness plays a plugin's sidecar of the repository server (e2e/sidecar.ts), as the
 * kustomization renders it into the repository server's Deployment: its command, environment, user,
 * read-only root and mounts, each volume of the pod standing on `disk`, and the sops image's
 * own `sops` (upstream's alpine image copies it to /usr/local/bin/sops) the toolchain's build
 * of the same version (`sops`). A Secret the pod mounts that the bootstrap does not create,
 * or a key it names that its Secret lacks, is an error: on a cluster the sidecar would read
 * nothing.
 */
export function sidecarPlay(name: string, repoServer: KubeObject, disk: RepoServerDisk, sops: string, exists: (folder: string) => boolean): ContainerPlay {
  const pod = repoServerPod(repoServer);
  const sidecar = pod.containers.find((container) => container.name === name);
  if (sidecar === undefined) throw new E2eError(`the kustomization's argocd-repo-server Deployment has no sidecar named ${name} for the plugin ${name}`);
  const volumes = new Map<string, VolumeSource>([
    [REPO_SERVER_VOLUMES.varFiles, { kind: 'folder', path: disk.varFiles, describe: 'the repository server\'s var-files volume' }],
    [REPO_SERVER_VOLUMES.plugins, { kind: 'folder', path: disk.sockets, describe: 'the repository server\'s plugins volume' }],
  ]);
  for (const volume of pod.volumes) {
    if (volumes.has(volume.name)) continue;
    if (volume.emptyDir !== undefined) volumes.set(volume.name, { kind: 'emptyDir' });
    const secretName = volume.secret?.secretName;
    if (secretName !== undefined) {
      const copy = disk.secrets.get(secretName);
      if (copy === undefined && (sidecar.volumeMounts ?? []).some((mount) => mount.name === volume.name)) {
        throw new E2eError(`sidecar ${name} mounts Secret ${secretName}, which the bootstrap does not create`);
      }
      if (copy !== undefined) volumes.set(volume.name, { kind: 'folder', path: copy.folder, keys: copy.keys, describe: `Secret ${secretName}` });
    }
    const configMap = volume.configMap?.name;
    if (configMap !== undefined) {
      const copy = disk.configMaps.get(configMap);
      if (copy !== undefined) volumes.set(volume.name, { kind: 'folder', path: copy.folder, keys: copy.keys, describe: `ConfigMap ${configMap}` });
    }
  }
  return containerPlay(sidecar, volumes, new Map([['/usr/local/bin/sops', sops]]), exists);
}

/** A volume of a Pod spec, as far as the harness plays it. */
interface PodVolume {
  readonly name: string;
  readonly secret?: { readonly secretName: string; readonly defaultMode?: number };
  readonly configMap?: { readonly name: string };
  readonly emptyDir?: object;
}

/** The containers and volumes of the repository server's Deployment (what the kubelet would run). */
export function repoServerPod(deployment: KubeObject): { containers: readonly ContainerSpec[]; volumes: readonly PodVolume[] } {
  const spec = (deployment as { spec?: { template?: { spec?: { containers?: ContainerSpec[]; volumes?: PodVolume[] } } } }).spec?.template?.spec;
  return { containers: spec?.containers ?? [], volumes: spec?.volumes ?? [] };
}

/**
 * A repository Secret with the loopback proxy as its `proxy` (Argo CD docs, "Declarative
 * Setup: Repositories", proxy): go-git dials through it, native git over SSH gets
 * `ProxyCommand connect-proxy -S ... -5` (argo-cd util/git/creds.go), so the platform's
 * URL (git@github.com:...) reaches the local git server, host key checked as `github.com`.
 */
export function withProxy(secret: KubeObject, proxy: string): KubeObject {
  return { ...secret, stringData: { ...secret.stringData, proxy, noProxy: '127.0.0.1,localhost' } };
}

/**
 * Each upstream Helm repository registered with Argo CD with the loopback proxy as its
 * `proxy`, as an installation behind a proxy registers them (Argo CD docs, "Declarative
 * Setup: Repositories", proxy): Argo CD's Helm client and `helm pull` go through it.
 */
export function chartRepositorySecrets(namespace: string, repoURLs: readonly string[], proxy: string): KubeObject[] {
  return repoURLs.map((url) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `e2e-helm-${url.replace(/^https:\/\//, '').replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '')}`,
      namespace,
      labels: { [REPOSITORY_SECRET_LABEL.key]: REPOSITORY_SECRET_LABEL.value },
    },
    type: 'Opaque',
    stringData: {
      type: 'helm',
      name: url.replace(/^https:\/\//, '').replace(/[^a-z0-9.]+/g, '-'),
      url,
      proxy,
      noProxy: '127.0.0.1,localhost',
      // Argo CD's convention for a Helm chart in an OCI registry: no scheme in the URL.
      ...(isOciRepository(url) ? { enableOCI: 'true' } : {}),
    },
  }));
}

/**
 * How long the application controller sleeps after applying each sync wave but the last,
 * before it judges that wave's health (`ARGOCD_SYNC_WAVE_DELAY`, v3.6.1
 * controller/sync.go `delayBetweenSyncWaves`; 2 s by default). The delay lets the other
 * controllers react to what was applied and the cluster cache receive it, so that a wave's
 * health is not read from the object as it was before the apply. Here every controller and
 * the cache's watch are on loopback, so one second keeps that margin; a warm local run has
 * about twenty such waves on its longest path (2026-11-28: every Application converged at
 * 153 s with the default, 135 s with none, 135.5 s with this). A deviation docs/e2e.md lists.
 */
const SYNC_WAVE_DELAY_SECONDS = 1;

function paramEnvironment(component: 'controller' | 'repo-server'): Record<string, string> {
  const values = argoCdReleaseValues();
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(values.configs.params)) {
    const mapping = PARAM_VARIABLES[key];
    if (!mapping) throw new E2eError(`argo-cd value configs.params.${key} has no mapping in e2e/argocd.ts (PARAM_VARIABLES)`);
    if (mapping.component === component) env[mapping.variable] = value;
  }
  return env;
}

/**
 * Argo CD (the release toolchain/build.sh pins) as its own developers run it locally (its Procfile): redis, the
 * repository server and the application controller as processes on loopback, with
 * ARGOCD_FAKE_IN_CLUSTER so `https://kubernetes.default.svc` means the e2e API server.
 * The API server and UI are not needed to sync.
 */
export async function startArgoCd(options: ArgoCdOptions): Promise<void> {
  const { toolchain, supervisor, dir } = options;
  const alive = (): void => supervisor.assertRunning();

  const common = argoCdEnvironment(dir, options.kubeconfig);
  const { ARGOCD_SSH_DATA_PATH: sshData, ARGOCD_TLS_DATA_PATH: tlsData, HOME: home, TMPDIR: tmp } = common;
  const ageDir = path.join(dir, 'age');
  for (const folder of [sshData, tlsData, home, tmp, ageDir]) fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(sshData, 'ssh_known_hosts'), options.knownHosts);
  for (const [host, caFile] of options.tlsCertificates) fs.copyFileSync(caFile, path.join(tlsData, host));
  // The Secrets the plugins' sidecars mount, as the kubelet would mount them: each key a file
  // of the volume's mode (0644 by default), read from the cluster, where the bootstrap created them.
  const repoServerVolumes = repoServerPod(options.repoServer).volumes;
  const secrets = new Map<string, { folder: string; keys: string[] }>();
  for (const volume of repoServerVolumes) {
    const secretName = volume.secret?.secretName;
    if (secretName === undefined) continue;
    const secret = await options.client.get('v1', 'Secret', secretName, options.namespace);
    if (secret === undefined) continue;
    const folder = path.join(ageDir, secretName);
    fs.mkdirSync(folder, { recursive: true });
    fs.chmodSync(folder, 0o755);
    const data: Record<string, string> = (secret as { data?: Record<string, string> }).data ?? {};
    for (const [key, value] of Object.entries(data)) fs.writeFileSync(path.join(folder, key), Buffer.from(value, 'base64'), { mode: volume.secret?.defaultMode ?? 0o644 });
    secrets.set(secretName, { folder, keys: Object.keys(data).sort() });
  }
  // argocd-cmp-cm as the bootstrap applied it (the kustomization's): one key per plugin.
  const cmpConfigMap = path.join(dir, 'argocd-cmp-cm');
  fs.mkdirSync(cmpConfigMap, { recursive: true, mode: 0o755 });
  const cmpData = ((await options.client.get('v1', 'ConfigMap', 'argocd-cmp-cm', options.namespace)) as { data?: Record<string, string> } | undefined)?.data ?? {};
  for (const [key, text] of Object.entries(cmpData)) fs.writeFileSync(path.join(cmpConfigMap, key), text, { mode: 0o644 });
  // The remote base of the `argocd` Application, read from the pinned release's local repository.
  writeGitRedirect(home, options.argoCdManifests);
  // The repository server's two emptyDirs: the plugins' sockets (0777, as the kubelet makes an emptyDir)
  // and Argo CD's binary, which its init container copies as argocd-cmp-server.
  const sockets = path.join(dir, 'plugins');
  fs.mkdirSync(sockets, { recursive: true });
  fs.chmodSync(sockets, 0o777);
  const varFiles = path.join(dir, 'var-files');
  fs.mkdirSync(varFiles, { recursive: true, mode: 0o755 });
  const cmpServer = path.join(varFiles, 'argocd-cmp-server');
  const argocdBinary = fs.realpathSync(toolchain.bin('argocd', 'argocd'));
  try {
    fs.linkSync(argocdBinary, cmpServer);
  } catch {
    fs.copyFileSync(argocdBinary, cmpServer);
  }
  fs.chmodSync(cmpServer, 0o755);
  const disk = { secrets, configMaps: new Map([['argocd-cmp-cm', { folder: cmpConfigMap, keys: Object.keys(cmpData).sort() }]]), sockets, varFiles };
  const isFolder = (folder: string) => fs.existsSync(folder) && fs.statSync(folder).isDirectory();

  // Each plugin runs as its rendered sidecar of the repository server: Argo CD's plugin
  // server, with the sidecar's environment, user, read-only root and mounts
  // (e2e/sidecar.ts), the age key mounted from its Secret; the repository server finds it
  // by its socket.
  for (const name of pluginManifests().keys()) {
    const play = sidecarPlay(name, options.repoServer, disk, fs.realpathSync(toolchain.bin('sops', 'sops')), isFolder);
    supervisor.start({ name: `argocd-cmp-server-${name}`, command: 'unshare', args: ['--mount', '--propagation', 'private', '--', 'sh', '-c', containerScript(play)] });
    await waitFor(`the ${name} plugin's socket`, 30_000, () => (fs.existsSync(path.join(sockets, `${name}.sock`)) ? true : undefined), alive);
  }

  const redisPort = await freePort();
  supervisor.start({
    name: 'redis',
    command: '/usr/bin/redis-server',
    args: ['--bind', '127.0.0.1', '--port', String(redisPort), '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
  });

  const toolPath = [
    path.dirname(toolchain.bin('argocd', 'git-verify-wrapper.sh')),
    path.dirname(toolchain.bin('kustomize', 'kustomize')),
    path.dirname(toolchain.bin('helm', 'helm')),
    path.dirname(toolchain.bin('sops', 'sops')),
    '/usr/local/bin',
    '/usr/bin',
    '/bin',
  ].join(':');

  const repoPort = await freePort();
  supervisor.start({
    name: 'argocd-repo-server',
    command: toolchain.bin('argocd', 'argocd-repo-server'),
    args: [
      '--address=127.0.0.1',
      `--port=${repoPort}`,
      '--metrics-address=127.0.0.1',
      `--metrics-port=${await freePort()}`,
      `--redis=127.0.0.1:${redisPort}`,
      '--disable-tls',
      // Plain gRPC on loopback, so no client CA for mTLS either (Argo CD v3.6 defaults one).
      '--client-ca-path=',
      '--loglevel=info',
    ],
    env: {
      ...common,
      ...paramEnvironment('repo-server'),
      PATH: toolPath,
      // No proxy variables: Argo CD dials its plugins' unix sockets through
      // golang.org/x/net/proxy, which would send them to ALL_PROXY too. Repositories get
      // the loopback proxy as their own setting (withProxy, chartRepositorySecrets).
      ARGOCD_PLUGINSOCKFILEPATH: sockets,
    },
  });
  await waitFor('argocd-repo-server to listen', 60_000, () => listening(repoPort), alive);

  const controllerMetrics = await freePort();
  supervisor.start({
    name: 'argocd-application-controller',
    command: toolchain.bin('argocd', 'argocd-application-controller'),
    args: [
      `--redis=127.0.0.1:${redisPort}`,
      `--repo-server=127.0.0.1:${repoPort}`,
      '--repo-server-plaintext',
      // Argo CD binds its controller metrics to 0.0.0.0 (controller/appcontroller.go); nothing connects.
      `--metrics-port=${controllerMetrics}`,
      '--status-processors=10',
      '--operation-processors=10',
      // Argo CD's own periodic refresh (`--app-resync`, default 120 s; its jitter, default
      // 60 s, off for a steadier run). What it would otherwise wait for, the harness asks as an
      // operator or a webhook would: a refresh of a Progressing Application whose CRDs became
      // Established, of one whose project the controller had not yet seen, of one showing a
      // comparison error (e2e/refresh.ts), and of every Application of the repository after a
      // scenario's push (test/e2e/scenario-steps.mjs, as Argo CD's git webhook does). Each
      // periodic refresh patches every Application's status: every 10 s it was half the
      // controller's CPU on a settled cluster, every 30 s still a quarter of the cluster's
      // (docs/performance.md, 2026-12-02).
      '--app-resync=120',
      '--app-resync-jitter=0',
      '--loglevel=info',
    ],
    env: { ...common, ...paramEnvironment('controller'), PATH: toolPath, ARGOCD_SYNC_WAVE_DELAY: String(SYNC_WAVE_DELAY_SECONDS) },
  });
  // Its metrics server starts with the controller's run loop.
  await waitFor('argocd-application-controller to start', 60_000, () => listening(controllerMetrics), alive);

  // The notifications controller, the same binary by another name (cmd/main.go reads
  // ARGOCD_BINARY_NAME before its own name): it reads argocd-notifications-cm and
  // argocd-notifications-secret and posts what the Applications' subscriptions ask for.
  const notificationsMetrics = await freePort();
  supervisor.start({
    name: 'argocd-notifications',
    command: toolchain.bin('argocd', 'argocd'),
    args: [
      `--namespace=${options.namespace}`,
      `--argocd-repo-server=127.0.0.1:${repoPort}`,
      '--argocd-repo-server-plaintext',
      `--metrics-port=${notificationsMetrics}`,
      '--loglevel=info',
    ],
    env: { ...common, ARGOCD_BINARY_NAME: 'argocd-notifications', PATH: toolPath },
  });
  await waitFor('argocd-notifications to start', 60_000, () => listening(notificationsMetrics), alive);
}

/**
 * The `operation` the API server writes for `argocd app sync <name>` without options: the
 * Application's own sync options and retry (`spec.syncPolicy`), which the controller applies
 * with (v3.6.1 server/application/application.go, `Sync`: syncOptions and retry from
 * a.Spec.SyncPolicy unless the request gives its own). Without them an Application that needs
 * `ServerSideApply=true` (argocd: the ApplicationSet CRD is too large for a client-side
 * apply's annotation) is applied client-side.
 */
export function operatorSyncOperation(application: KubeObject | undefined): Record<string, unknown> {
  const policy = application?.spec?.syncPolicy as { syncOptions?: string[]; retry?: object } | undefined;
  return {
    initiatedBy: { username: OPERATOR },
    sync: { syncStrategy: { hook: {} }, ...(policy?.syncOptions === undefined ? {} : { syncOptions: policy.syncOptions }) },
    ...(policy?.retry === undefined ? {} : { retry: policy.retry }),
  };
}

/**
 * What `argocd app sync <name>` does: ask the application controller for a sync operation of
 * the Application at its target revision, by writing its `operation` field (Argo CD's
 * Application API, `operation.sync`; the CLI's request reaches the same field through the API
 * server, which adds the Application's sync options: operatorSyncOperation).
 */
export async function syncAsOperator(client: KubeClient, namespace: string, name: string, timeoutMs: number): Promise<{ phase: string; message: string }> {
  const application = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace } };
  const live = await client.get(application.apiVersion, application.kind, name, namespace);
  await client.mergePatch(application, { operation: operatorSyncOperation(live) });
  // The controller moves `operation` into `status.operationState` and reports its end there.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = (await client.get(application.apiVersion, application.kind, name, namespace))?.status?.operationState;
    const phase = String(state?.phase ?? 'Pending');
    if (state?.operation?.initiatedBy?.username === OPERATOR && !operationRuns(state)) return { phase, message: String(state?.message ?? '') };
    if (Date.now() > deadline) return { phase: `${phase} (timed out)`, message: String(state?.message ?? '') };
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * The environment every Argo CD process of a run shares, each folder in the run's own `dir`.
 * `TMPDIR` too: the repository server clones into `os.TempDir()/_argocd-repo`, and when it
 * starts it adopts every clone it finds there, by its remote's URL (v3.6.1
 * reposerver/server.go `filepath.Join(os.TempDir(), "_argocd-repo")`,
 * reposerver/repository/repository.go `Init`). Every run serves the same URL, so with the
 * machine's /tmp two runs at once (npm run test:e2e) worked in one clone, each checking out
 * its own commits there, and could read the other's files: the likely cause of the CI runs
 * where broken-controllers' early-hook Application retried by the platform's retry policy
 * (10 s doubling) instead of its copy's (1 s, once) and its run reached its timeout. Every run
 * also left its clone there (786 on this machine), and each start opened them all.
 */
export function argoCdEnvironment(dir: string, kubeconfig: string) {
  return {
    ARGOCD_FAKE_IN_CLUSTER: 'true',
    KUBECONFIG: kubeconfig,
    ARGOCD_SSH_DATA_PATH: path.join(dir, 'ssh'),
    ARGOCD_TLS_DATA_PATH: path.join(dir, 'tls'),
    ARGOCD_GPG_ENABLED: 'false',
    HOME: path.join(dir, 'home'),
    TMPDIR: path.join(dir, 'tmp'),
  };
}

/** Who the harness's operator syncs are initiated by. */
const OPERATOR = 'e2e-operator';
