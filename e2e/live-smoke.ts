import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../src/base/project-root';
import { matchesLabels } from '../src/cluster/workloads';
import { DATABASE } from '../src/contract/choices';
import { BROKER, PORTS, SMOKE } from '../src/contract/contract';
import { smokeName } from '../src/contract/naming';
import { BASE_URL_VARIABLE, BROKER_STEP_CONTAINER, DATABASE_STEP_CONTAINER, HTTP_STEP_CONTAINER } from '../src/constructs/smoke-hook';
import { STRIMZI } from '../src/contract/upstream';
import { closedPort } from './contract-server';
import type { KubeClient, KubeObject } from './kube-client';
import { listensOn, serviceHostNames, serviceOfHost } from './cluster-dns';
import { type ContainerPlay, type ContainerSpec, containerPlay, runContainer, type VolumeSource } from './sidecar';
import { type KafkaListener, listenerAdmits } from './stand-in-strimzi';
import { denial, type NetworkPolicyJudge, podConnection } from './network-policy';
import { KAFKA_STATE_FILE, type LiveDataServices, SQL_SERVER_ENV } from './live-data-services';
import { addressesReaching, completedPodConditions, containerStatus, exited, kubeletTime, type LiveApplication, secretValue, type SmokeRun } from './live-pods';

/**
 * Where the stand-ins a played container's image runs are put in its filesystem (node, the
 * stand-in's program and its state), apart from the image's own folders.
 */
const STAND_IN_IMAGE_FOLDER = '/opt/e2e-stand-in';

/**
 * The applications' PostSync smoke hooks, played on loopback (LiveContainers starts a play at
 * each pass): each step reaches only what the cluster would route to it, and what the
 * NetworkPolicies allow when a judge of them is given.
 */
export class SmokeHooks {
  private readonly playedSmoke = new Set<string>();
  private readonly smokePlays = new Set<Promise<void>>();
  private readonly smokeRuns: SmokeRun[] = [];

  constructor(
    private readonly client: KubeClient,
    /** Where each pod's folder is made. */
    private readonly root: string,
    private readonly applications: readonly LiveApplication[],
    /** The data services the database and broker steps reach. */
    private readonly data: LiveDataServices,
    /** The base address of the loopback container of an application pod (`<namespace>/<pod>`), if it has one. */
    private readonly containerUrl: (id: string) => string | undefined,
    /** Where what a played container did is told (the run's output). */
    private readonly log: (line: string) => void,
    /**
     * The judge of the cluster's NetworkPolicies (e2e/network-policy.ts), asked before a smoke
     * hook's step reaches another pod: a connection it denies is played as one that never
     * connects, and the step's output names the policies.
     * @default none: every connection the Services route is played
     */
    private readonly policies?: NetworkPolicyJudge,
  ) {}

  /** Every smoke hook played so far, in the order they ended. */
  get runs(): readonly SmokeRun[] {
    return [...this.smokeRuns];
  }

  /** Once every smoke step being played has ended. */
  async settle(): Promise<void> {
    await Promise.all(this.smokePlays);
  }

  /** Each smoke pod's connections the policies denied (by its uid), told in its steps' output. */
  private readonly denials = new Map<string, string[]>();

  /** Whether the policies allow `from` to reach `port` of `to`; a denial is kept for `from`'s smoke run. */
  private async allowed(from: KubeObject, to: KubeObject, port: number, what: string): Promise<boolean> {
    if (this.policies === undefined) return true;
    const [verdict] = await this.policies.judge([podConnection(from, to, port)]);
    const denied = denial(verdict!, `${what} (${from.metadata.namespace}/${from.metadata.name} to ${to.metadata.namespace}/${to.metadata.name}:${port})`);
    if (denied === undefined) return true;
    const uid = String(from.metadata.uid);
    this.denials.set(uid, [...(this.denials.get(uid) ?? []), denied]);
    return false;
  }

  /**
   * The steps of each smoke hook pod (`<app>-smoke`; kwok's pod-complete stage leaves these
   * pods running), once per pod, in order until one fails: the HTTP step's script, as
   * rendered, run by this machine's `sh` and `wget` with its container's environment (each
   * secretKeyRef read from its Secret), its base address sent where the cluster would send it
   * (`serviceTarget`); the database step's the same way, with the stand-in sqlcmd; the broker
   * step as its container (`playBrokerStep`). The pod then ends as the steps did: Succeeded
   * (the last line as kwok reports it), or Failed with the failing step's exit code and output.
   */
  async play(): Promise<void> {
    for (const application of this.applications) {
      for (const pod of await this.client.list('v1', 'Pod', application.namespace)) {
        const uid = String(pod.metadata.uid);
        if (pod.metadata.labels?.['app'] !== smokeName(application.name) || pod.status?.phase !== 'Running' || this.playedSmoke.has(uid)) continue;
        this.playedSmoke.add(uid);
        const play = this.playSmokeStep(pod).catch((error: Error) => this.log(`${application.namespace}/${pod.metadata.name}: the smoke hook could not be played: ${error.message}`));
        this.smokePlays.add(play);
        void play.finally(() => this.smokePlays.delete(play));
      }
    }
  }

  private async playSmokeStep(pod: KubeObject): Promise<void> {
    const namespace = String(pod.metadata.namespace);
    const id = `${namespace}/${pod.metadata.name}`;
    const initContainers: Array<{ name: string; image: string; command?: string[]; args?: string[]; env?: any[] }> = pod.spec?.initContainers ?? [];
    const environment = async (step: { env?: any[] } | undefined) => {
      const env: Record<string, string> = {};
      for (const variable of step?.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        const value = ref ? await secretValue(this.client, namespace, ref.name, ref.key) : variable.value;
        if (value !== undefined) env[variable.name] = value;
      }
      return env;
    };
    const run = (step: { name: string; command?: string[]; args?: string[] } | undefined, env: Record<string, string>, rewrite: (text: string) => string = (text) => text) =>
      new Promise<{ exitCode: number; output: string }>((resolve) => {
        const command = [...(step?.command ?? []), ...(step?.args ?? [])].map(rewrite);
        if (command.length === 0) return resolve({ exitCode: 1, output: `no ${step?.name ?? 'such'} step in the pod` });
        execFile(command[0]!, command.slice(1), { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: Object.values(SMOKE.stepTimeoutMs).reduce((sum, ms) => sum + ms, 0), encoding: 'utf8' }, (error, stdout, stderr) =>
          resolve({ exitCode: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}`.trim() }),
        );
      });

    // 4.1 steps 1-3: the HTTP step, its base address sent where the cluster would send it.
    const http = initContainers.find((c) => c.name === HTTP_STEP_CONTAINER);
    const httpEnv = await environment(http);
    const baseUrl = httpEnv[BASE_URL_VARIABLE] ?? '';
    const target = await this.serviceTarget(baseUrl, namespace, pod);
    const results = new Map<string, { exitCode: number; output: string }>();
    results.set(HTTP_STEP_CONTAINER, await run(http, { ...httpEnv, [BASE_URL_VARIABLE]: target.url }));
    // 4.1 step 4: the database step, the image's sqlcmd being the stand-in's, which knows the
    // addresses that reach SQL Server from this namespace and the logins the setup hook made.
    if (results.get(HTTP_STEP_CONTAINER)!.exitCode === 0) {
      const database = initContainers.find((c) => c.name === DATABASE_STEP_CONTAINER);
      const network = path.join(this.root, `sql-network-${pod.metadata.uid}.json`);
      fs.writeFileSync(network, `${JSON.stringify({ addresses: await this.data.serverAddresses(namespace, (server) => this.allowed(pod, server, PORTS.database, "the database step's connection to SQL Server")), logins: await this.data.serverLogins() }, null, 2)}\n`);
      const sqlcmd = path.join(this.data.sqlcmdBin, 'sqlcmd');
      results.set(DATABASE_STEP_CONTAINER, await run(database, { ...(await environment(database)), [SQL_SERVER_ENV.state]: this.data.sqlServerState, [SQL_SERVER_ENV.network]: network }, (text) => text.replaceAll(DATABASE.sqlcmd, sqlcmd)));
    }
    // 4.1 step 5: the broker step, played as its container (e2e/sidecar.ts), the image's tool
    // being the stand-in's, which knows the addresses that reach a broker from this namespace
    // and the users the cluster holds.
    if (results.get(DATABASE_STEP_CONTAINER)?.exitCode === 0) {
      const broker = initContainers.find((c) => c.name === BROKER_STEP_CONTAINER);
      results.set(BROKER_STEP_CONTAINER, broker === undefined ? { exitCode: 1, output: 'no broker step in the pod' } : await this.playBrokerStep(pod, broker, await environment(broker)));
    }
    const played = [...results.keys()];
    const failed = [...results.entries()].find(([, result]) => result.exitCode !== 0);
    // The connections the policies denied, named in the failing step's output (the pod itself
    // would only have seen them time out).
    const denied = this.denials.get(String(pod.metadata.uid)) ?? [];
    if (failed !== undefined && denied.length > 0) failed[1] = { ...failed[1], output: [failed[1].output, ...denied].filter(Boolean).join('\n') };
    if (failed !== undefined) results.set(failed[0], failed[1]);
    const ok = failed === undefined;
    const output = [...results.values()].map((result) => result.output).join('\n');
    this.smokeRuns.push({ pod: id, baseUrl, reached: target.reached, steps: played, exitCode: failed?.[1].exitCode ?? 0, output });
    this.log(`${id}: the smoke hook's ${played.join(', ')} step${played.length > 1 ? 's' : ''} (${baseUrl}: ${target.reached}) ${ok ? 'passed' : `failed at ${failed[0]} (exit ${failed[1].exitCode})`}: ${output.replaceAll('\n', ' | ')}`);
    const now = kubeletTime();
    // Init containers run in order: those before the failing one completed, those after it never started.
    const failedAt = failed === undefined ? initContainers.length : initContainers.findIndex((c) => c.name === failed[0]);
    await this.client.mergePatch(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace } },
      {
        status: {
          phase: ok ? 'Succeeded' : 'Failed',
          conditions: completedPodConditions(now),
          initContainerStatuses: initContainers.map((c, index) => {
            const result = results.get(c.name);
            if (index < failedAt) return containerStatus(c.name, c.image, exited(0, now, result?.output.slice(-1024)));
            if (index === failedAt) return containerStatus(c.name, c.image, exited(result?.exitCode ?? 1, now, result?.output.slice(-1024)));
            return containerStatus(c.name, c.image, { waiting: { reason: 'PodInitializing' } });
          }),
          containerStatuses: (pod.spec?.containers ?? []).map((c: { name: string; image: string }) => containerStatus(c.name, c.image, ok ? exited(0, now) : { waiting: { reason: 'PodInitializing' } })),
        },
      },
      'status',
    );
  }

  /**
   * The smoke hook's broker step of `pod`, run as its container would run (containerPlay: its
   * user, read-only root, its emptyDir at /tmp, only its environment with each Secret key
   * read), the image's kafka-broker-api-versions.sh being the stand-in's
   * (e2e/stand-in-kafka-broker-api-versions.mjs) over the cluster's users (kafka.json) and
   * what the pod's namespace reaches (`brokerNetwork`), both in the stand-in's own folder of
   * the image with node.
   */
  private async playBrokerStep(pod: KubeObject, container: ContainerSpec, env: Record<string, string>): Promise<{ exitCode: number; output: string }> {
    const dir = path.join(this.root, 'smoke', String(pod.metadata.uid));
    fs.mkdirSync(dir, { recursive: true });
    const network = path.join(dir, 'kafka-network.json');
    fs.writeFileSync(network, `${JSON.stringify(await this.brokerNetwork(pod), null, 2)}\n`);
    const tool = path.join(dir, 'kafka-broker-api-versions.sh');
    fs.writeFileSync(tool, `#!/bin/sh\nexec ${STAND_IN_IMAGE_FOLDER}/node ${STAND_IN_IMAGE_FOLDER}/stand-in-kafka-broker-api-versions.mjs "$@"\n`, { mode: 0o755 });
    const imageFiles = new Map([
      [STRIMZI.brokerPods.apiVersionsTool, tool],
      [`${STAND_IN_IMAGE_FOLDER}/node`, process.execPath],
      ...['stand-in-kafka-broker-api-versions.mjs', 'stand-in-kafka-client.mjs'].map((file): [string, string] => [`${STAND_IN_IMAGE_FOLDER}/${file}`, path.join(projectRoot(), 'e2e', file)]),
      [`${STAND_IN_IMAGE_FOLDER}/${KAFKA_STATE_FILE}`, this.data.kafkaState],
      [`${STAND_IN_IMAGE_FOLDER}/kafka-network.json`, network],
    ]);
    const variables = [
      ...Object.entries(env).map(([name, value]) => ({ name, value })),
      { name: 'KAFKA_STATE', value: `${STAND_IN_IMAGE_FOLDER}/${KAFKA_STATE_FILE}` },
      { name: 'KAFKA_NETWORK', value: `${STAND_IN_IMAGE_FOLDER}/kafka-network.json` },
    ];
    const volumes = new Map<string, VolumeSource>();
    for (const volume of pod.spec?.volumes ?? []) if (volume.emptyDir !== undefined) volumes.set(volume.name, { kind: 'emptyDir' });
    let play: ContainerPlay;
    try {
      if (!fs.existsSync(this.data.kafkaState)) throw new Error('the Kafka cluster holds no state yet');
      play = containerPlay({ ...container, env: variables }, volumes, imageFiles, (folder) => fs.existsSync(folder));
    } catch (error) {
      return { exitCode: 1, output: `the broker step could not be played: ${(error as Error).message}` };
    }
    return runContainer(play, SMOKE.stepTimeoutMs.broker);
  }

  /**
   * What a pod reaches of the Kafka cluster, as the stand-in kafka-broker-api-versions.sh reads
   * it: the host names the cluster's DNS resolves for it (every Service's); the `host:port`
   * addresses that reach a listener speaking SASL_PLAINTEXT with SCRAM-SHA-512 (a Service of the
   * broker namespace whose port sends to that listener's port on a running broker pod, the
   * listener's rule of Strimzi's NetworkPolicy admitting the pod: listenerAdmits); and the
   * brokers the metadata names, as Strimzi advertises them.
   */
  private async brokerNetwork(pod: KubeObject): Promise<{ resolvable: string[]; listeners: string[]; brokers: Array<{ id: number; host: string; port: number }> }> {
    const from = String(pod.metadata.namespace);
    const namespace = await this.client.get('v1', 'Namespace', from);
    const kafka = await this.client.get('kafka.strimzi.io/v1', 'Kafka', BROKER.clusterName, this.data.brokerNamespace);
    const listeners: KafkaListener[] = (kafka?.spec?.kafka?.listeners ?? []).filter(
      (listener: KafkaListener) => !listener.tls && listener.authentication?.type === 'scram-sha-512' && listenerAdmits(listener, this.data.brokerNamespace, { name: from, labels: namespace?.metadata.labels ?? {} }, pod.metadata.labels ?? {}),
    );
    const brokers = (await this.client.list('v1', 'Pod', this.data.brokerNamespace)).filter(
      (broker) => broker.metadata.labels?.[STRIMZI.clusterLabel] === BROKER.clusterName && broker.metadata.labels?.[STRIMZI.brokerPods.brokerRoleLabel] === 'true' && broker.status?.phase === 'Running' && !broker.metadata.deletionTimestamp,
    );
    const services = await this.client.list('v1', 'Service');
    const resolvable = services.flatMap((service) => serviceHostNames(service.metadata.name, String(service.metadata.namespace), from));
    const brokerServices = services.filter((service) => service.metadata.namespace === this.data.brokerNamespace);
    const addresses: Array<{ host: string; port: number }> = [];
    for (const { port } of listeners) {
      const admitted: KubeObject[] = [];
      for (const broker of brokers) if (await this.allowed(pod, broker, port, "the broker step's connection to a broker")) admitted.push(broker);
      addresses.push(...addressesReaching(brokerServices, admitted, STRIMZI.brokerPods.container, [port], from));
    }
    const plain = STRIMZI.listeners.plain.port;
    return {
      resolvable: [...new Set(resolvable)].sort(),
      listeners: addresses.map(({ host, port }) => `${host}:${port}`).sort(),
      brokers: brokers
        .map((broker) => ({ id: Number(/-(\d+)$/.exec(String(broker.metadata.name))?.[1] ?? -1), host: `${broker.metadata.name}.${BROKER.clusterName}-kafka-brokers.${this.data.brokerNamespace}.svc`, port: plain }))
        .sort((a, b) => a.id - b.id),
    };
  }

  /**
   * Where a pod's request to `base` goes, as the cluster would send it: a host that is a
   * Service, to the port that Service's port sends to on one of its ready pods (by name), here
   * that pod's loopback container. Anything else, to a closed port, so the step fails at
   * once as it would in the pod: a host that is no Service (there its name does not resolve), a
   * Service without that port, or without a ready pod listening there (the connection is
   * refused).
   */
  private async serviceTarget(base: string, namespace: string, from?: KubeObject): Promise<{ url: string; reached: string }> {
    let url: URL;
    try {
      url = new URL(base);
    } catch {
      return { url: base, reached: 'not an address' };
    }
    const refused = async (why: string) => ({ url: `http://127.0.0.1:${await closedPort()}`, reached: why });
    const service = serviceOfHost(url.hostname, namespace);
    if (service === undefined) return refused(`${url.hostname} is no Service of the cluster`);
    const object = await this.client.get('v1', 'Service', service.name, service.namespace);
    if (object === undefined) return refused(`Service ${service.namespace}/${service.name} does not exist`);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const servicePort = (object.spec?.ports ?? []).find((p: { port: number }) => p.port === port);
    if (servicePort === undefined) return refused(`Service ${service.namespace}/${service.name} has no port ${port}`);
    const targetPort = servicePort.targetPort ?? port;
    const selector: Record<string, string> = object.spec?.selector ?? {};
    const ready = (pod: KubeObject) => (pod.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
    const listening = (await this.client.list('v1', 'Pod', service.namespace))
      .filter((pod) => matchesLabels(selector, pod.metadata.labels))
      .filter((pod) => pod.status?.phase === 'Running' && !pod.metadata.deletionTimestamp && ready(pod))
      .filter((pod) => (pod.spec?.containers ?? []).some((c: { ports?: Array<{ name?: string; containerPort: number }> }) => listensOn(c.ports, targetPort)))
      .sort((a, b) => (String(a.metadata.name) < String(b.metadata.name) ? -1 : String(a.metadata.name) > String(b.metadata.name) ? 1 : 0));
    const pods = listening.map((pod) => String(pod.metadata.name));
    const reached = pods.map((pod) => ({ pod, baseUrl: this.containerUrl(`${service.namespace}/${pod}`) })).find((candidate) => candidate.baseUrl !== undefined);
    if (reached === undefined) return refused(`Service ${service.namespace}/${service.name} port ${port} has no ready pod listening on ${targetPort}`);
    if (from !== undefined) {
      const pod = listening.find((candidate) => candidate.metadata.name === reached.pod)!;
      const containerPort =
        typeof targetPort === 'number'
          ? targetPort
          : (pod.spec?.containers ?? []).flatMap((c: { ports?: Array<{ name?: string; containerPort: number }> }) => c.ports ?? []).find((p: { name?: string }) => p.name === targetPort)?.containerPort;
      if (containerPort !== undefined && !(await this.allowed(from, pod, containerPort, "the HTTP step's connection to the application"))) {
        return refused(this.denials.get(String(from.metadata.uid))!.at(-1)!);
      }
    }
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    return { url: `${reached.baseUrl!}${path}`, reached: `pod ${service.namespace}/${reached.pod}` };
  }
}
