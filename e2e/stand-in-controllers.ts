import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { E2eError } from '../src/base/errors';
import { matchesLabels } from '../src/cluster/workloads';
import { ApiError, type KubeClient, type KubeObject, resourceId } from './kube-client';
import { KWOK_ADMITTED_ANNOTATION } from './kwok-stages';
import { STAND_INS } from './stand-in-charts';
import { bootstrapServiceOf, brokerCount, brokerPodsOf, brokersReady, entityOperatorNamespace, KAFKA_CREATING, kafkaNetworkPolicyOf, kafkaRefusal, kafkaTopicProblem, kafkaUserProblem, poolsOf, saslJaasConfig, scramPassword } from './stand-in-strimzi';

/** Provisioner name of the StorageClasses the harness stands in for. */
export const STAND_IN_PROVISIONER = 'e2e.platform-gitops/stand-in';

type Ref = { kind: 'Secret' | 'ConfigMap'; name: string; key?: string };

/**
 * What a kubelet needs before it starts a pod's containers (kubelet: volume mounts and
 * container environment): every Secret and ConfigMap a volume, `env` or `envFrom` names
 * (unless marked optional), with the keys it names, and the image pull Secrets.
 */
export function podReferences(pod: KubeObject): Ref[] {
  const refs: Ref[] = [];
  const spec = pod.spec ?? {};
  for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    for (const env of container.env ?? []) {
      const secret = env.valueFrom?.secretKeyRef;
      if (secret && !secret.optional) refs.push({ kind: 'Secret', name: secret.name, key: secret.key });
      const configMap = env.valueFrom?.configMapKeyRef;
      if (configMap && !configMap.optional) refs.push({ kind: 'ConfigMap', name: configMap.name, key: configMap.key });
    }
    for (const from of container.envFrom ?? []) {
      if (from.secretRef && !from.secretRef.optional) refs.push({ kind: 'Secret', name: from.secretRef.name });
      if (from.configMapRef && !from.configMapRef.optional) refs.push({ kind: 'ConfigMap', name: from.configMapRef.name });
    }
  }
  const volumeSources = (spec.volumes ?? []).flatMap((volume: any) => [volume, ...(volume.projected?.sources ?? [])]);
  for (const source of volumeSources) {
    if (source.secret && !source.secret.optional) {
      const name = source.secret.secretName ?? source.secret.name;
      refs.push({ kind: 'Secret', name });
      for (const item of source.secret.items ?? []) refs.push({ kind: 'Secret', name, key: item.key });
    }
    if (source.configMap && !source.configMap.optional) {
      refs.push({ kind: 'ConfigMap', name: source.configMap.name });
      for (const item of source.configMap.items ?? []) refs.push({ kind: 'ConfigMap', name: source.configMap.name, key: item.key });
    }
  }
  for (const pull of spec.imagePullSecrets ?? []) refs.push({ kind: 'Secret', name: pull.name });
  return refs;
}

function keysOf(object: KubeObject): Set<string> {
  return new Set([...Object.keys(object.data ?? {}), ...Object.keys(object.binaryData ?? {}), ...Object.keys(object.stringData ?? {})]);
}

/** Secrets by namespace, then by name, each key of `data` decoded. */
function decodedByNamespace(secrets: readonly KubeObject[]): Map<string, Map<string, Record<string, string>>> {
  const byNamespace = new Map<string, Map<string, Record<string, string>>>();
  for (const secret of secrets) {
    const namespace = String(secret.metadata.namespace);
    if (!byNamespace.has(namespace)) byNamespace.set(namespace, new Map());
    byNamespace.get(namespace)!.set(secret.metadata.name, Object.fromEntries(Object.entries<string>(secret['data'] ?? {}).map(([name, value]) => [name, Buffer.from(value, 'base64').toString('utf8')])));
  }
  return byNamespace;
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, observedGeneration?: number): Record<string, unknown> {
  return { type, status, reason, message, lastTransitionTime: new Date().toISOString(), ...(observedGeneration !== undefined ? { observedGeneration } : {}) };
}

const key = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;

/** What one pass of the stand-ins read once and shares: Secrets (their keys, by namespace/name) and Deployments. */
interface Seen {
  readonly secrets: ReadonlyMap<string, Set<string>>;
  /** Each namespace's Secrets by name, each key decoded. */
  readonly secretData: ReadonlyMap<string, ReadonlyMap<string, Readonly<Record<string, string>>>>;
  readonly deployments: readonly KubeObject[];
}

/**
 * The harness's stand-ins for what a real cluster runs beside the API server:
 * - the kubelet's checks before a container starts (podReferences): a pod missing one
 *   stays Pending with the reason in an annotation, as a kubelet leaves it in
 *   ContainerCreating/CreateContainerConfigError;
 * - a storage provisioner for the StorageClasses the environment names;
 * - the status the upstream operators write, once their stand-in controller Deployment
 *   is available, by each operator's own rules ported from its pinned release
 *   (e2e/stand-in-strimzi.ts);
 * - and the start of the real controllers the harness runs instead (`real`: cert-manager,
 *   Envoy Gateway, Flagger and prometheus-operator), once Argo CD has created their
 *   release's controller Deployment, whose pods start only once that controller runs.
 */
export class StandInControllers {
  /** Why pods are not started, by namespace/name (for the final report). */
  readonly waitingPods = new Map<string, string>();
  /**
   * Writes of a stand-in the API server refused as invalid (HTTP 422), by what was written:
   * a stand-in that writes what the server refuses is a defect of the harness, reported
   * at once (assertNoRefusal), never retried until an unrelated timeout.
   */
  readonly refused = new Map<string, string>();

  /** Charts whose real controller a pass began to start, those that run, and why a start failed. */
  private readonly started = new Set<string>();
  private readonly running = new Set<string>();
  private readonly startFailures: string[] = [];

  constructor(
    private readonly client: KubeClient,
    /**
     * Charts whose real controller the harness runs instead of a stand-in, by chart name: each
     * is started once, when Argo CD has created the chart's controller Deployment and every
     * CRD is served (Established), in the release's namespace; no stand-in status is written
     * for what it owns. That Deployment's pods start only once the real controller runs, so
     * Argo CD finds the release Healthy only then, as on a cluster where the pods' readiness
     * is the controller's own (a webhook that is not yet registered would admit what it
     * refuses). A CRD that is never Established keeps every real controller waiting, and the
     * report names their pods as not started. Each start is given that Deployment, as Argo CD
     * created it from the chart, to read the controller's arguments and configuration from.
     * @default none
     */
    private readonly real: Readonly<Record<string, (deployment: KubeObject) => Promise<void>>> = {},
  ) {}

  /**
   * One pass of every stand-in; errors of one object do not stop the others. The Secrets
   * and Deployments several stand-ins read are listed once per pass: what a pass writes
   * is seen by the next one, a second later.
   */
  async reconcile(): Promise<void> {
    const [secrets, deployments] = await Promise.all([this.client.list('v1', 'Secret'), this.client.list('apps/v1', 'Deployment')]);
    const seen: Seen = {
      secrets: new Map(secrets.map((s) => [key(s.metadata.namespace, s.metadata.name), keysOf(s)])),
      secretData: decodedByNamespace(secrets),
      deployments,
    };
    await this.kubelet(seen);
    await this.volumes();
    await this.operators(seen);
  }

  private async kubelet(seen: Seen): Promise<void> {
    const [pods, configMaps] = await Promise.all([this.client.list('v1', 'Pod'), this.client.list('v1', 'ConfigMap')]);
    const present = {
      Secret: seen.secrets,
      ConfigMap: new Map(configMaps.map((c) => [key(c.metadata.namespace, c.metadata.name), keysOf(c)])),
    };
    this.waitingPods.clear();
    for (const pod of pods) {
      if (!pod.spec?.nodeName || pod.status?.phase !== 'Pending' || pod.metadata.deletionTimestamp) continue;
      const namespace = pod.metadata.namespace!;
      const missing = new Set<string>();
      const controller = this.realControllerOf(pod, seen.deployments);
      if (controller !== undefined && !this.running.has(controller)) missing.add(`the real ${controller} controller is not running yet`);
      for (const ref of podReferences(pod)) {
        const keys = present[ref.kind].get(key(namespace, ref.name));
        if (!keys) missing.add(`${ref.kind} ${ref.name} not found`);
        else if (ref.key !== undefined && !keys.has(ref.key)) missing.add(`${ref.kind} ${ref.name} has no key ${ref.key}`);
      }
      const verdict = missing.size === 0 ? 'passed' : `waiting: ${[...missing].sort().join('; ')}`;
      if (missing.size > 0) this.waitingPods.set(key(namespace, pod.metadata.name), verdict);
      if (pod.metadata.annotations?.[KWOK_ADMITTED_ANNOTATION] === verdict) continue;
      await this.quietly(pod, () => this.client.mergePatch(pod, { metadata: { annotations: { [KWOK_ADMITTED_ANNOTATION]: verdict } } }));
    }
  }

  private async volumes(): Promise<void> {
    const classes = new Set(
      (await this.client.list('storage.k8s.io/v1', 'StorageClass')).filter((c) => c.provisioner === STAND_IN_PROVISIONER).map((c) => c.metadata.name),
    );
    for (const claim of await this.client.list('v1', 'PersistentVolumeClaim')) {
      if (claim.status?.phase !== 'Pending' || claim.spec?.volumeName || !classes.has(claim.spec?.storageClassName)) continue;
      const name = `pvc-${claim.metadata.uid}`;
      if (await this.client.get('v1', 'PersistentVolume', name)) continue;
      await this.createQuietly({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': STAND_IN_PROVISIONER } },
        spec: {
          capacity: { storage: claim.spec.resources.requests.storage },
          accessModes: claim.spec.accessModes,
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: claim.spec.storageClassName,
          volumeMode: claim.spec.volumeMode ?? 'Filesystem',
          claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
          // Never mounted: kwok runs no containers.
          hostPath: { path: `/nonexistent/e2e-volumes/${claim.metadata.uid}` },
        },
      });
    }
  }

  /** A chart's stand-in controller Deployment, once Argo CD created it (`available`: once it has an available replica). */
  private controllerDeployment(chart: string, deployments: readonly KubeObject[], available: boolean): KubeObject | undefined {
    const name = STAND_INS[chart]?.controller;
    return deployments.find((d) => d.metadata.name === name && (!available || (d.status?.availableReplicas ?? 0) > 0));
  }

  /** The chart whose real controller's stand-in Deployment selects this pod, if any. */
  private realControllerOf(pod: KubeObject, deployments: readonly KubeObject[]): string | undefined {
    return Object.keys(this.real).find((chart) => {
      const deployment = this.controllerDeployment(chart, deployments, false);
      return deployment?.metadata.namespace === pod.metadata.namespace && matchesLabels(deployment?.spec?.selector?.matchLabels ?? {}, pod.metadata.labels);
    });
  }

  /** The CRDs the API server does not serve yet (no `Established` condition True), by name. */
  private async unestablishedCrds(): Promise<string[]> {
    const crds = await this.client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    return crds
      .filter((crd) => !(crd.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True'))
      .map((crd) => crd.metadata.name)
      .sort();
  }

  private async operators(seen: Seen): Promise<void> {
    for (const [chart, start] of Object.entries(this.real)) {
      const deployment = this.controllerDeployment(chart, seen.deployments, false);
      if (deployment === undefined || this.started.has(chart)) continue;
      // A controller's pod starts well after the CRDs its release applied before it are
      // served; a controller started sooner finds its kinds missing (prometheus-operator
      // then never reconciles a Prometheus), which no cluster shows.
      if ((await this.unestablishedCrds()).length > 0) continue;
      this.started.add(chart);
      await start(deployment).then(
        () => this.running.add(chart),
        (error: unknown) => this.startFailures.push(`${chart}: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
    if (this.controllerDeployment('strimzi-kafka-operator', seen.deployments, true)) await this.strimzi(seen);
  }

  /**
   * Write a status unless the server holds the same, timestamps aside. Compared as values, not
   * as text: the server answers a custom resource's keys in alphabetical order (an
   * unstructured object is a map, which Go's encoding/json writes sorted), and a write of the
   * same status with a new `lastTransitionTime` is a change, whose watch event starts the
   * next pass, which writes again.
   */
  private async setStatus(object: KubeObject, status: Record<string, unknown>): Promise<void> {
    if (isDeepStrictEqual(stripTimes(object.status ?? {}), stripTimes(status))) return;
    await this.quietly(object, () => this.client.mergePatch(object, { status }, 'status'));
  }

  /**
   * Strimzi's status, by its own rules (e2e/stand-in-strimzi.ts): a Kafka is refused for an
   * unsupported version, invalid node pools (a broker and a controller with replicas),
   * replication settings above its brokers or invalid listeners; a valid one is Creating until
   * every broker pod is Ready, then Ready (and stays so, as upstream keeps the status of a
   * Ready cluster while a reconciliation makes a pod again). A topic or user is reconciled only
   * by the Entity Operator's topic or user operator of a Ready cluster that runs it
   * (`spec.entityOperator`), in the namespace it watches; else its status stays as it is. A
   * topic with no more replicas than brokers, a user's ACLs only when the cluster's
   * authorization supports them, and its password Secret must exist. The bootstrap Service and
   * the brokers' NetworkPolicy of each valid cluster, and each Ready user's Secret with the password the User Operator would
   * give it.
   */
  private async strimzi(seen: Seen): Promise<void> {
    const pools = await this.client.list('kafka.strimzi.io/v1', 'KafkaNodePool');
    const clusters: Array<{ kafka: KubeObject; brokers: number; ready: boolean }> = [];
    for (const kafka of await this.client.list('kafka.strimzi.io/v1', 'Kafka')) {
      const namespace = kafka.metadata.namespace!;
      const own = poolsOf(kafka, pools);
      const refusal = kafkaRefusal(kafka, own);
      // The brokers' pods of each valid cluster, made again when one is gone (evicted,
      // deleted), for kwok to run, and its clients' bootstrap Service.
      let pods: KubeObject[] = [];
      if (refusal === undefined) {
        pods = await this.client.list('v1', 'Pod', namespace);
        const present = new Set(pods.map((pod) => pod.metadata.name));
        for (const pod of brokerPodsOf(kafka, own)) {
          if (!present.has(pod.metadata.name)) await this.createQuietly(pod);
        }
        const service = bootstrapServiceOf(kafka);
        if ((await this.client.get('v1', 'Service', service.metadata.name, namespace)) === undefined) await this.createQuietly(service);
        const policy = kafkaNetworkPolicyOf(kafka, String(this.controllerDeployment('strimzi-kafka-operator', seen.deployments, true)?.metadata.namespace));
        if ((await this.client.get('networking.k8s.io/v1', 'NetworkPolicy', policy.metadata.name, namespace)) === undefined) await this.createQuietly(policy);
      }
      const wasReady = (kafka.status?.conditions ?? []).some((c: { type?: string; status?: string }) => c.type === 'Ready' && c.status === 'True');
      const ready = refusal === undefined && (wasReady || brokersReady(kafka, own, pods));
      clusters.push({ kafka, brokers: brokerCount(own), ready });
      const notReady = refusal ?? (ready ? undefined : KAFKA_CREATING);
      await this.setStatus(kafka, {
        observedGeneration: kafka.metadata.generation,
        conditions: [notReady ? condition('NotReady', 'True', notReady.reason, notReady.message) : condition('Ready', 'True', 'Ready', '')],
        ...(!ready
          ? {}
          : {
              clusterId: 'e2e-stand-in',
              listeners: (kafka.spec?.kafka?.listeners ?? []).map((l: any) => ({ name: l.name, bootstrapServers: `${kafka.metadata.name}-kafka-bootstrap.${namespace}.svc:${l.port}` })),
            }),
      });
    }
    for (const pool of pools) {
      await this.setStatus(pool, { observedGeneration: pool.metadata.generation, replicas: pool.spec?.replicas, nodeIds: [...Array(pool.spec?.replicas ?? 0).keys()] });
    }
    for (const kind of ['KafkaTopic', 'KafkaUser'] as const) {
      for (const object of await this.client.list('kafka.strimzi.io/v1', kind)) {
        const clusterName = object.metadata.labels?.['strimzi.io/cluster'];
        const namespace = object.metadata.namespace;
        // The operator that reconciles it: the Entity Operator of a Ready cluster of that name
        // running this kind's operator for this namespace. None: nothing writes its status.
        const cluster = clusters.find((c) => c.ready && c.kafka.metadata.name === clusterName && entityOperatorNamespace(c.kafka, kind) === namespace);
        if (cluster === undefined) continue;
        let problem: { reason: string; message: string } | undefined;
        if (kind === 'KafkaTopic') {
          const message = kafkaTopicProblem(object, cluster.brokers);
          if (message) problem = { reason: 'KafkaError', message };
        }
        if (kind === 'KafkaUser') {
          const message = kafkaUserProblem(object, cluster.kafka);
          if (message) problem = { reason: 'InvalidResourceException', message };
        }
        let password: string | undefined;
        if (!problem && kind === 'KafkaUser') {
          const chosen = scramPassword(object, seen.secretData.get(String(namespace)) ?? new Map(), () => randomBytes(24).toString('base64url').slice(0, 32));
          if (chosen !== undefined && 'problem' in chosen) problem = { reason: 'InvalidResourceException', message: chosen.problem };
          else password = chosen?.password;
        }
        await this.setStatus(object, {
          observedGeneration: object.metadata.generation,
          conditions: [problem ? condition('NotReady', 'True', problem.reason, problem.message) : condition('Ready', 'True', 'Ready', '')],
          ...(kind === 'KafkaUser' && !problem ? { username: object.metadata.name, secret: object.metadata.name } : {}),
        });
        // The user's Secret, as the User Operator writes it, owned by the user.
        if (kind === 'KafkaUser' && password !== undefined) {
          const data: Record<string, string> = { password, 'sasl.jaas.config': saslJaasConfig(object.metadata.name, password) };
          const current = seen.secretData.get(String(namespace))?.get(object.metadata.name) ?? {};
          if (Object.keys(current).length !== Object.keys(data).length || Object.entries(data).some(([name, value]) => current[name] !== value)) {
            const encoded = Object.fromEntries(Object.entries(data).map(([name, value]) => [name, Buffer.from(value).toString('base64')]));
            await this.quietly(object, () =>
              this.client.apply({
                apiVersion: 'v1',
                kind: 'Secret',
                metadata: {
                  name: object.metadata.name,
                  namespace,
                  labels: { 'strimzi.io/kind': 'KafkaUser', 'strimzi.io/cluster': clusterName! },
                  ownerReferences: [{ apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, uid: String(object.metadata.uid), controller: false, blockOwnerDeletion: false }],
                },
                data: encoded,
              } as unknown as KubeObject),
            );
          }
        }
      }
    }
  }

  private createQuietly(object: KubeObject): Promise<void> {
    return this.quietly(object, () => this.client.create(object));
  }

  /** Throws when a real controller could not be started. */
  assertStarted(): void {
    if (this.startFailures.length > 0) throw new E2eError(`a real controller did not start: ${this.startFailures.join('; ')}`);
  }

  /** Throws when the API server refused a stand-in's write (see `refused`). */
  assertNoRefusal(): void {
    if (this.refused.size === 0) return;
    const writes = [...this.refused].map(([what, answer]) => `${what}: ${answer}`).sort();
    throw new E2eError(`the API server refused ${writes.length} write(s) of the stand-in controllers: ${writes.join('; ')}`);
  }

  /**
   * Conflicts (409) and vanished objects (404) are normal between passes: the next pass
   * retries. A refusal (422) is recorded in `refused`; anything else is thrown.
   */
  private async quietly(what: KubeObject, action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (error) {
      if (error instanceof ApiError && [404, 409].includes(error.status)) return;
      if (error instanceof ApiError && error.status === 422) {
        this.refused.set(resourceId(what.kind, what.metadata.name, what.metadata.namespace), error.message);
        return;
      }
      throw error;
    }
  }
}

/** Status without timestamps, to compare what a pass would write with what is there. */
function stripTimes(status: unknown): unknown {
  return JSON.parse(JSON.stringify(status), (k, v) => (k === 'lastTransitionTime' ? undefined : v));
}

