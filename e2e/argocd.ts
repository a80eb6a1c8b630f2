import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { argoCdValues } from '../src/infrastructure/argo-cd-values';
import { freePort, listening } from './loopback';
import { E2eError } from '../src/base/errors';
import type { KubeClient, KubeObject } from './kube-client';
import { type Supervisor, waitFor } from './processes';
import { isOciRepository } from './stand-in-charts';
import type { Toolchain } from '../toolchain';

/**
 * `configs.params` keys of the argo-cd chart (argocd-cmd-params-cm) that the platform
 * sets, and the environment variable the chart's Deployments read each one from.
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
  /** `known_hosts` lines for the repository host (argocd-ssh-known-hosts-cm). */
  readonly knownHosts: string;
  /** CA certificate for each HTTPS host (argocd-tls-certs-cm), by host name. */
  readonly tlsCertificates: ReadonlyMap<string, string>;
}

/** The CRDs Argo CD's own chart installs (argoproj.io), from schemas/crds. */
export function argoCdCrds(crdDir: string): KubeObject[] {
  return ['argocd-application.yaml', 'argocd-appproject.yaml'].map(
    (file) => parseAllDocuments(fs.readFileSync(path.join(crdDir, file), 'utf8'))[0]!.toJS() as KubeObject,
  );
}

/** The argo-cd chart's `notifications` values the platform sets. */
interface NotificationValues {
  readonly argocdUrl?: string;
  readonly notifiers?: Record<string, string>;
  readonly templates?: Record<string, string>;
  readonly triggers?: Record<string, string>;
  readonly subscriptions?: unknown[];
}

/**
 * argocd-notifications-cm's data as the argo-cd chart writes it from its `notifications`
 * values (argo-helm charts/argo-cd templates/argocd-configs/argocd-notifications-cm.yaml):
 * `context` with the Argo CD URL (the chart's default, `https://` and `global.domain`,
 * `argocd.example.com`), then every notifier, the subscriptions, every template and every
 * trigger as keys of their own.
 */
function notificationsConfig(values: NotificationValues): Record<string, string> {
  return {
    context: `argocdUrl: ${values.argocdUrl || 'https://argocd.example.com'}\n`,
    ...values.notifiers,
    ...(values.subscriptions === undefined ? {} : { subscriptions: stringify(values.subscriptions) }),
    ...values.templates,
    ...values.triggers,
  };
}

/**
 * Argo CD's configuration objects as the argo-cd chart renders them from the platform's
 * values (src/infrastructure/argo-cd-values.ts): argocd-cm (health checks, kustomize options),
 * argocd-cmd-params-cm, argocd-notifications-cm, argocd-secret.
 */
export function argoCdConfigObjects(namespace: string): KubeObject[] {
  const values = argoCdValues() as { configs: { cm: Record<string, string>; params: Record<string, string> }; notifications: NotificationValues };
  const labels = { 'app.kubernetes.io/part-of': 'argocd' };
  const plugins = Object.fromEntries([...pluginManifests()].map(([name, manifest]) => [`${name}.yaml`, stringify(manifest)]));
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cm', namespace, labels }, data: values.configs.cm },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cmd-params-cm', namespace, labels }, data: values.configs.params },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cmp-cm', namespace, labels }, data: plugins },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-rbac-cm', namespace, labels }, data: {} },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-notifications-cm', namespace, labels }, data: notificationsConfig(values.notifications) },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'argocd-secret', namespace, labels },
      type: 'Opaque',
      stringData: { 'server.secretkey': 'e2e-only-not-a-secret' },
    },
  ];
}

/**
 * The Config Management Plugins of the values (`configs.cmp.plugins`), as the argo-cd chart
 * writes each into argocd-cmp-cm: a ConfigManagementPlugin named after its key.
 */
export function pluginManifests(): Map<string, Record<string, unknown>> {
  const values = argoCdValues() as { configs: { cmp?: { plugins?: Record<string, Record<string, unknown>> } } };
  return new Map(
    Object.entries(values.configs.cmp?.plugins ?? {}).map(([name, spec]) => [
      name,
      { apiVersion: 'argoproj.io/v1alpha1', kind: 'ConfigManagementPlugin', metadata: { name }, spec },
    ]),
  );
}

/** A container of the repo-server's rendered values (`repoServer.extraContainers`) and the pod's volumes. */
interface Sidecar {
  readonly name: string;
  readonly env?: readonly { name: string; value?: string; valueFrom?: unknown }[];
  readonly volumeMounts?: readonly { name: string; mountPath: string; subPath?: string }[];
}

/**
 * The environment a plugin's sidecar gets, as the argo-cd chart renders it from the platform's
 * values, with each path inside a mounted Secret turned into the same file of the run's copy
 * of that Secret: `secrets` maps a volume's Secret name to the folder holding its keys as
 * files (what the kubelet would mount). A variable that names a file inside a Secret mount
 * that the Secret does not hold, or a Secret volume the harness has no copy of, is an error:
 * on a cluster that sidecar would read nothing.
 */
export function sidecarEnvironment(name: string, secrets: ReadonlyMap<string, { folder: string; keys: readonly string[] }>): Record<string, string> {
  const values = argoCdValues() as { repoServer: { extraContainers?: Sidecar[]; volumes?: { name: string; secret?: { secretName: string } }[] } };
  const sidecar = values.repoServer.extraContainers?.find((container) => container.name === name);
  if (sidecar === undefined) throw new E2eError(`the argo-cd values render no repo-server sidecar named ${name} for the plugin ${name}`);
  const secretMounts = (sidecar.volumeMounts ?? []).flatMap((mount) => {
    const secretName = values.repoServer.volumes?.find((volume) => volume.name === mount.name)?.secret?.secretName;
    if (secretName === undefined || mount.subPath !== undefined) return [];
    const copy = secrets.get(secretName);
    if (copy === undefined) throw new E2eError(`sidecar ${name} mounts Secret ${secretName} at ${mount.mountPath}, which the bootstrap does not create`);
    return [{ mountPath: mount.mountPath, secretName, ...copy }];
  });
  const env: Record<string, string> = {};
  for (const variable of sidecar.env ?? []) {
    if (variable.value === undefined) throw new E2eError(`sidecar ${name}: env ${variable.name} is not a plain value, which the harness does not resolve`);
    const mount = secretMounts.find((m) => variable.value!.startsWith(`${m.mountPath}/`));
    if (mount === undefined) {
      env[variable.name] = variable.value;
      continue;
    }
    const key = variable.value.slice(mount.mountPath.length + 1);
    if (!mount.keys.includes(key)) throw new E2eError(`sidecar ${name}: ${variable.name}=${variable.value} names key ${key} of Secret ${mount.secretName}, which holds ${mount.keys.join(', ') || 'no key'}`);
    env[variable.name] = path.join(mount.folder, key);
  }
  return env;
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
      labels: { 'argocd.argoproj.io/secret-type': 'repository' },
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

function paramEnvironment(component: 'controller' | 'repo-server'): Record<string, string> {
  const values = argoCdValues() as { configs: { params: Record<string, string> } };
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

  const sshData = path.join(dir, 'ssh');
  const tlsData = path.join(dir, 'tls');
  const home = path.join(dir, 'home');
  const ageDir = path.join(dir, 'age');
  for (const folder of [sshData, tlsData, home, ageDir]) fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(sshData, 'ssh_known_hosts'), options.knownHosts);
  for (const [host, caFile] of options.tlsCertificates) fs.copyFileSync(caFile, path.join(tlsData, host));
  // The Secrets the plugins' sidecars mount, as the kubelet would mount them: each key a file,
  // read from the cluster, where the bootstrap created them.
  const mountedSecrets = new Map<string, { folder: string; keys: string[] }>();
  for (const volume of (argoCdValues() as { repoServer: { volumes?: { secret?: { secretName: string } }[] } }).repoServer.volumes ?? []) {
    const secretName = volume.secret?.secretName;
    if (secretName === undefined) continue;
    const secret = await options.client.get('v1', 'Secret', secretName, options.namespace);
    if (secret === undefined) continue;
    const folder = path.join(ageDir, secretName);
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const data: Record<string, string> = (secret as { data?: Record<string, string> }).data ?? {};
    for (const [key, value] of Object.entries(data)) fs.writeFileSync(path.join(folder, key), Buffer.from(value, 'base64'), { mode: 0o600 });
    mountedSecrets.set(secretName, { folder, keys: Object.keys(data).sort() });
  }

  // Each plugin runs as Argo CD's plugin server with its own configuration, as the
  // repository server's sidecars do, and alone gets the age key; the repository server
  // finds them by their sockets.
  const sockets = path.join(dir, 'plugins');
  fs.mkdirSync(sockets, { recursive: true, mode: 0o700 });
  for (const [name, manifest] of pluginManifests()) {
    const config = path.join(dir, 'cmp', name);
    fs.mkdirSync(config, { recursive: true });
    fs.writeFileSync(path.join(config, 'plugin.yaml'), stringify(manifest));
    supervisor.start({
      name: `argocd-cmp-server-${name}`,
      command: toolchain.bin('argocd', 'argocd-cmp-server'),
      args: [`--config-dir-path=${config}`, '--loglevel=info'],
      env: {
        ARGOCD_PLUGINSOCKFILEPATH: sockets,
        HOME: home,
        PATH: [path.dirname(toolchain.bin('sops', 'sops')), '/usr/bin', '/bin'].join(':'),
        // The sidecar's own environment (SOPS_AGE_KEY_FILE: the key file of the mounted Secret).
        ...sidecarEnvironment(name, mountedSecrets),
      },
    });
    await waitFor(`the ${name} plugin's socket`, 30_000, () => (fs.existsSync(path.join(sockets, `${name}.sock`)) ? true : undefined), alive);
  }

  const redisPort = await freePort();
  supervisor.start({
    name: 'redis',
    command: '/usr/bin/redis-server',
    args: ['--bind', '127.0.0.1', '--port', String(redisPort), '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
  });

  const common = {
    ARGOCD_FAKE_IN_CLUSTER: 'true',
    KUBECONFIG: options.kubeconfig,
    ARGOCD_SSH_DATA_PATH: sshData,
    ARGOCD_TLS_DATA_PATH: tlsData,
    ARGOCD_GPG_ENABLED: 'false',
    HOME: home,
  };
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
      // What the cluster cache ties to no Application (a CRD becoming Established) is seen at
      // the next periodic refresh (default 120 s plus up to 60 s jitter; the harness also asks
      // one of a Progressing Application, e2e/convergence.ts). Git does not change during a
      // run: a shorter refresh only shortens the waits, it decides nothing.
      '--app-resync=10',
      '--app-resync-jitter=0',
      '--loglevel=info',
    ],
    env: { ...common, ...paramEnvironment('controller'), PATH: toolPath },
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
 * What `argocd app sync <name>` does: ask the application controller for a sync operation of
 * the Application at its target revision, by writing its `operation` field (Argo CD's
 * Application API, `operation.sync`; the CLI's request reaches the same field through the API
 * server).
 */
export async function syncAsOperator(client: KubeClient, namespace: string, name: string, timeoutMs: number): Promise<{ phase: string; message: string }> {
  const application = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace } };
  await client.mergePatch(application, { operation: { initiatedBy: { username: OPERATOR }, sync: { syncStrategy: { hook: {} } } } });
  // The controller moves `operation` into `status.operationState` and reports its end there.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = (await client.get(application.apiVersion, application.kind, name, namespace))?.status?.operationState;
    const phase = String(state?.phase ?? 'Pending');
    if (state?.operation?.initiatedBy?.username === OPERATOR && !['Running', 'Terminating'].includes(phase)) return { phase, message: String(state?.message ?? '') };
    if (Date.now() > deadline) return { phase: `${phase} (timed out)`, message: String(state?.message ?? '') };
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** Who the harness's operator syncs are initiated by. */
const OPERATOR = 'e2e-operator';
