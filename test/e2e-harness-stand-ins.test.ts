import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { podReferences, StandInControllers } from '../e2e/stand-in-controllers';
import { KWOK_ADMITTED_ANNOTATION } from '../e2e/kwok-stages';
import { ApiError, KubeClient, type KubeObject } from '../e2e/kube-client';
import { STAND_INS } from '../e2e/stand-in-charts';
import { HELM_RELEASE_ROWS } from '../src/infrastructure/releases';
import { installCrds } from '../e2e/dry-run';
import { ROOT } from './support';

// Unit tests of the e2e harness's own logic; test/e2e/ runs it on the real engines.

describe('stand-in charts', () => {
  it('stand in for every upstream chart the platform installs, with CRDs the project keeps', () => {
    for (const { chart } of HELM_RELEASE_ROWS) {
      const standIn = STAND_INS[chart.chart];
      expect(standIn, chart.chart).toBeDefined();
      for (const file of standIn!.crds) expect(fs.existsSync(path.join(ROOT, 'schemas', 'crds', file)), file).toBe(true);
    }
  });
});

describe('the kubelet checks before a container starts', () => {
  it('need every Secret and ConfigMap that env, envFrom, volumes and image pulls name, unless optional', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        imagePullSecrets: [{ name: 'pull' }],
        initContainers: [{ name: 'i', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'init', key: 'a' } } }] }],
        containers: [
          {
            name: 'c',
            env: [
              { name: 'B', valueFrom: { configMapKeyRef: { name: 'cm', key: 'b' } } },
              { name: 'C', valueFrom: { secretKeyRef: { name: 'maybe', key: 'c', optional: true } } },
            ],
            envFrom: [{ secretRef: { name: 'all' } }],
          },
        ],
        volumes: [{ name: 'v', secret: { secretName: 'vol', items: [{ key: 'k', path: 'k' }] } }, { name: 'p', projected: { sources: [{ configMap: { name: 'proj' } }] } }],
      },
    };
    expect(podReferences(pod)).toEqual([
      { kind: 'Secret', name: 'init', key: 'a' },
      { kind: 'ConfigMap', name: 'cm', key: 'b' },
      { kind: 'Secret', name: 'all' },
      { kind: 'Secret', name: 'vol' },
      { kind: 'Secret', name: 'vol', key: 'k' },
      { kind: 'ConfigMap', name: 'proj' },
      { kind: 'Secret', name: 'pull' },
    ]);
  });
});

describe('a stand-in controller\'s write the API server refuses', () => {
  // A client whose list answers one scheduled Pending pod and whose every write is refused
  // the way the API server refuses an invalid object (422 Unprocessable Entity).
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'webapp-1', namespace: 'webapp' }, spec: { nodeName: 'e2e-node-a', containers: [] }, status: { phase: 'Pending' } };
  const refusing = (status: number) =>
    ({
      list: async (apiVersion: string, kind: string) => (kind === 'Pod' ? [pod] : []),
      get: async () => undefined,
      mergePatch: async () => {
        throw new ApiError(status, status === 422 ? 'Invalid' : 'Conflict', `PATCH /api/v1/namespaces/webapp/pods/webapp-1: ${status} refused`);
      },
      create: async () => undefined,
    }) as unknown as KubeClient;

  it('is reported at once, naming the object and the server\'s answer, not retried until a timeout', async () => {
    const controllers = new StandInControllers(refusing(422));
    await controllers.reconcile();
    expect(() => controllers.assertNoRefusal()).toThrow(/refused 1 write\(s\) of the stand-in controllers: Pod webapp\/webapp-1: PATCH .*422 refused/);
  });

  it('is retried on the next pass when it is a conflict', async () => {
    const controllers = new StandInControllers(refusing(409));
    await controllers.reconcile();
    expect(() => controllers.assertNoRefusal()).not.toThrow();
  });
});

describe("a stand-in controller's status write", () => {
  // The Strimzi operator's Deployment available, and a node pool whose status the API server
  // holds as it answers a custom resource: its keys in alphabetical order (unstructured
  // objects are maps, which Go's encoding/json writes sorted by key).
  const operator: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: STAND_INS['strimzi-kafka-operator']!.controller!, namespace: 'strimzi' },
    status: { availableReplicas: 1 },
  };
  const pool = (status: Record<string, unknown>): KubeObject => ({
    apiVersion: 'kafka.strimzi.io/v1',
    kind: 'KafkaNodePool',
    metadata: { name: 'brokers', namespace: 'kafka', generation: 2 },
    spec: { replicas: 2 },
    status,
  });
  const writes = (held: KubeObject) => {
    const patches: unknown[] = [];
    const client = {
      list: async (_apiVersion: string, kind: string) => (kind === 'Deployment' ? [operator] : kind === 'KafkaNodePool' ? [held] : []),
      get: async () => undefined,
      mergePatch: async (_object: KubeObject, patch: unknown) => void patches.push(patch),
      create: async () => undefined,
    } as unknown as KubeClient;
    return { controllers: new StandInControllers(client), patches };
  };

  it('is not made when the server holds the same status, its keys in another order (no write, no watch event, no next pass)', async () => {
    const { controllers, patches } = writes(pool({ nodeIds: [0, 1], observedGeneration: 2, replicas: 2 }));
    await controllers.reconcile();
    expect(patches).toEqual([]);
  });

  it('is made when the status differs', async () => {
    const { controllers, patches } = writes(pool({ nodeIds: [0], observedGeneration: 1, replicas: 1 }));
    await controllers.reconcile();
    expect(patches).toEqual([{ status: { observedGeneration: 2, replicas: 2, nodeIds: [0, 1] } }]);
  });
});

describe('a real controller the harness runs instead of a chart\'s stand-in', () => {
  // cert-manager's chart, installed by Argo CD: its controller Deployment and that Deployment's
  // pod, scheduled, not started. The pod is admitted only once the real controller runs, so
  // Argo CD finds the release Healthy only when its webhook judges what the next waves apply.
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: STAND_INS['cert-manager']!.controller!, namespace: 'cert-manager' },
    spec: { selector: { matchLabels: { app: 'cert-manager' } } },
  };
  const pod = (labels: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${labels.app}-1`, namespace: 'cert-manager', labels },
    spec: { nodeName: 'e2e-node-a', containers: [] },
    status: { phase: 'Pending' },
  });
  const crd = (established: boolean): KubeObject => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'certificates.cert-manager.io' },
    status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, ...(established ? [{ type: 'Established', status: 'True' }] : [])] },
  });
  const cluster = (pods: KubeObject[], crds: KubeObject[] = [crd(true)]) => {
    const verdicts = new Map<string, string>();
    const client = {
      list: async (_apiVersion: string, kind: string) => (kind === 'Pod' ? pods : kind === 'Deployment' ? [deployment] : kind === 'CustomResourceDefinition' ? crds : []),
      get: async () => undefined,
      mergePatch: async (object: KubeObject, patch: any) => {
        verdicts.set(object.metadata.name, patch.metadata.annotations[KWOK_ADMITTED_ANNOTATION]);
      },
      create: async () => undefined,
    } as unknown as KubeClient;
    return { client, verdicts };
  };

  it('is started once its Deployment exists, and that Deployment\'s pods start only once it runs', async () => {
    const { client, verdicts } = cluster([pod({ app: 'cert-manager' }), pod({ app: 'other' })]);
    const starts: string[] = [];
    const controllers = new StandInControllers(client, { 'cert-manager': async (deployment) => void starts.push(deployment.metadata.namespace!) });
    await controllers.reconcile();
    expect(starts).toEqual(['cert-manager']);
    expect(verdicts.get('cert-manager-1')).toBe('waiting: the real cert-manager controller is not running yet');
    expect(verdicts.get('other-1')).toBe('passed');
    await controllers.reconcile();
    expect(starts).toEqual(['cert-manager']);
    expect(verdicts.get('cert-manager-1')).toBe('passed');
  });

  it('is started only once every CRD is served, as its pod would start well after them', async () => {
    const crds = [crd(false)];
    const { client, verdicts } = cluster([pod({ app: 'cert-manager' })], crds);
    const starts: string[] = [];
    const controllers = new StandInControllers(client, { 'cert-manager': async (deployment) => void starts.push(deployment.metadata.namespace!) });
    await controllers.reconcile();
    await controllers.reconcile();
    expect(starts).toEqual([]);
    expect(verdicts.get('cert-manager-1')).toBe('waiting: the real cert-manager controller is not running yet');
    crds[0] = crd(true);
    await controllers.reconcile();
    await controllers.reconcile();
    expect(starts).toEqual(['cert-manager']);
    expect(verdicts.get('cert-manager-1')).toBe('passed');
  });

  it('keeps those pods waiting when it did not start, and says why', async () => {
    const { client, verdicts } = cluster([pod({ app: 'cert-manager' })]);
    const controllers = new StandInControllers(client, {
      'cert-manager': async () => {
        throw new Error('cert-manager-webhook did not listen');
      },
    });
    await controllers.reconcile();
    await controllers.reconcile();
    expect(verdicts.get('cert-manager-1')).toBe('waiting: the real cert-manager controller is not running yet');
    expect(() => controllers.assertStarted()).toThrow(/a real controller did not start: cert-manager: cert-manager-webhook did not listen/);
  });
});

describe("the dry-run cluster's CRDs (e2e/dry-run.ts installCrds)", () => {
  const crd = (name: string, kind: string, versions: { name: string; served: boolean }[]): KubeObject => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: { group: 'example.com', names: { kind }, versions },
  });

  it('waits until every served version of each CRD is served, and does not wait for a CRD the server refused', async () => {
    const applied: string[] = [];
    const asked: string[] = [];
    const client = {
      apply: async (object: KubeObject) => {
        if (object.metadata.name === 'refused.example.com') throw new ApiError(422, 'Invalid', 'PATCH CustomResourceDefinition/refused.example.com: 422 invalid');
        applied.push(object.metadata.name);
        return object;
      },
      // Each served version answers on its third question, as discovery does a moment after Established.
      resource: async (apiVersion: string, kind: string) => {
        asked.push(`${apiVersion}/${kind}`);
        return asked.filter((a) => a === `${apiVersion}/${kind}`).length >= 3 ? { namespaced: true } : undefined;
      },
    } as unknown as KubeClient;
    const logged: string[] = [];
    await installCrds(
      client,
      [crd('widgets.example.com', 'Widget', [{ name: 'v1', served: true }, { name: 'v1alpha1', served: false }, { name: 'v2', served: true }]), crd('refused.example.com', 'Refused', [{ name: 'v1', served: true }])],
      10_000,
      (line) => logged.push(line),
    );
    expect(applied).toEqual(['widgets.example.com']);
    expect([...new Set(asked)]).toEqual(['example.com/v1/Widget', 'example.com/v2/Widget']);
    expect(asked.filter((a) => a === 'example.com/v2/Widget')).toHaveLength(3);
    expect(logged).toEqual(['CRD refused.example.com: PATCH CustomResourceDefinition/refused.example.com: 422 invalid']);
  });

  it('names the kind that is never served', async () => {
    const client = { apply: async (object: KubeObject) => object, resource: async () => undefined } as unknown as KubeClient;
    await expect(installCrds(client, [crd('widgets.example.com', 'Widget', [{ name: 'v1', served: true }])], 600, () => undefined)).rejects.toThrow(
      /timed out after 1 s waiting for Widget \(example\.com\/v1\) to be served/,
    );
  });
});
