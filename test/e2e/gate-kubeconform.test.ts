import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type KubeconformResult, prepareKubeconform, runKubeconform } from '../../src/bench/kubeconform';
import { VALIDATOR_CACHE_DIR } from '../../src/validation/compiled-validators';
import type { ManifestObject } from '../../src/validation/manifests';
import { KUBERNETES_VERSIONS, validateAgainstSchema } from '../../src/validation/schemas';
import { committedObjects, ENVIRONMENT_ORDER, ROOT, temporaryDirectory } from '../support';
import { canary, deployment, service } from '../validation-fixtures';
import { readManifestTree } from '../../src/base/manifest-files';

// The gate and kubeconform (v0.8.0, built by toolchain/build.sh) judge the same objects
// against the same schemas: schemas/ converted into kubeconform's layout
// (src/bench/kubeconform-schemas.ts), one kubeconform run per supported Kubernetes version
// as the gate checks both. No cluster: a few seconds.

type Verdict = 'valid' | 'invalid';

interface Case {
  readonly name: string;
  readonly object: ManifestObject;
  /** What both say, per supported version (one verdict: the same in both). */
  readonly verdict: Verdict | Readonly<Record<(typeof KUBERNETES_VERSIONS)[number], Verdict>>;
}

/** A case where the gate differs from kubeconform on purpose (or kubeconform's catalog does), and why. */
interface KnownDifference {
  readonly name: string;
  readonly object: ManifestObject;
  readonly gate: Verdict;
  readonly kubeconform: Verdict;
  readonly why: string;
}

const edit = (object: ManifestObject, change: (copy: any) => void): ManifestObject => {
  const copy = structuredClone(object) as any;
  change(copy);
  return copy;
};

const certificate = (spec: Record<string, unknown> = {}): ManifestObject => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'webapp', namespace: 'webapp' },
  spec: { secretName: 'webapp-tls', dnsNames: ['webapp.example.com'], issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' }, ...spec },
});

const prometheusRule = (strategy: string): ManifestObject => ({
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'rules', namespace: 'webapp' },
  spec: { groups: [{ name: 'rules', partial_response_strategy: strategy, rules: [{ alert: 'A', expr: 'up == 0' }] }] },
});

const kafka = (status: Record<string, unknown>): ManifestObject => ({
  apiVersion: 'kafka.strimzi.io/v1',
  kind: 'Kafka',
  metadata: { name: 'kafka-cluster', namespace: 'kafka' },
  spec: { kafka: { listeners: [{ name: 'plain', port: 9092, type: 'internal', tls: false }] } },
  status,
});

const AGREED: readonly Case[] = [
  { name: 'a valid Deployment', object: deployment(), verdict: 'valid' },
  { name: 'a valid Service with a named targetPort (int-or-string)', object: edit(service(), (s) => (s.spec.ports[0].targetPort = 'http')), verdict: 'valid' },
  { name: 'quantities as numbers and strings', object: edit(deployment(), (d) => (d.spec.template.spec.containers[0].resources.limits = { cpu: 1, memory: '1Gi' })), verdict: 'valid' },
  { name: 'a missing required field (Deployment spec.selector)', object: edit(deployment(), (d) => delete d.spec.selector), verdict: 'invalid' },
  { name: 'a missing required field (Service port)', object: edit(service(), (s) => delete s.spec.ports[0].port), verdict: 'invalid' },
  { name: 'a wrong type (replicas "two")', object: edit(deployment(), (d) => (d.spec.replicas = 'two')), verdict: 'invalid' },
  { name: 'an int-or-string that is neither', object: edit(service(), (s) => (s.spec.ports[0].targetPort = { port: 8080 })), verdict: 'invalid' },
  { name: 'an unknown field (spec.replcas)', object: edit(deployment(), (d) => (d.spec.replcas = 2)), verdict: 'invalid' },
  {
    name: 'an unknown field deep in the pod template',
    object: edit(deployment(), (d) => (d.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true)),
    verdict: 'invalid',
  },
  { name: 'an unknown field in built-in metadata', object: edit(deployment(), (d) => (d.metadata.lables = {})), verdict: 'invalid' },
  // The OpenAPI definitions list no enum here (the API server's Go code checks it): both pass it.
  {
    name: 'an imagePullPolicy outside Kubernetes values, which its definitions do not enumerate',
    object: edit(deployment(), (d) => (d.spec.template.spec.containers[0].imagePullPolicy = 'Sometimes')),
    verdict: 'valid',
  },
  {
    name: 'a field only Kubernetes 1.36 has (schedulingGroup)',
    object: edit(deployment(), (d) => (d.spec.template.spec.schedulingGroup = { podGroupName: 'webapp' })),
    verdict: { '1.35': 'invalid', '1.36': 'valid' },
  },
  {
    name: 'an API only Kubernetes 1.35 serves (scheduling.k8s.io/v1alpha1)',
    object: { apiVersion: 'scheduling.k8s.io/v1alpha1', kind: 'Workload', metadata: { name: 'w', namespace: 'webapp' }, spec: { podGroups: [] } },
    verdict: { '1.35': 'valid', '1.36': 'invalid' },
  },
  { name: 'a kind no schema defines', object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, verdict: 'invalid' },
  { name: 'a valid custom resource (Canary)', object: canary(), verdict: 'valid' },
  { name: 'a valid Certificate', object: certificate(), verdict: 'valid' },
  { name: 'a bad enum in a CRD (Certificate privateKey.algorithm)', object: certificate({ privateKey: { algorithm: 'DSA' } }), verdict: 'invalid' },
  { name: 'a missing required field in a CRD (Certificate secretName)', object: edit(certificate(), (c) => delete c.spec.secretName), verdict: 'invalid' },
  { name: 'a wrong type in a CRD (Canary analysis.threshold)', object: canary({ interval: '30s', threshold: 'five', maxWeight: 50, stepWeight: 10 }), verdict: 'invalid' },
  { name: 'an unknown field in a CRD (Canary analysis.stepWeigth)', object: canary({ interval: '30s', threshold: 5, maxWeight: 50, stepWeigth: 10 }), verdict: 'invalid' },
  { name: 'an unknown top-level field of a custom resource', object: edit(canary(), (c) => (c.specs = {})), verdict: 'invalid' },
  { name: 'an RE2 pattern with Go (?i) that matches', object: prometheusRule('ABORT'), verdict: 'valid' },
  { name: 'an RE2 pattern with Go (?i) that does not match', object: prometheusRule('sometimes'), verdict: 'invalid' },
];

const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    name: 'an unknown field in a custom resource metadata',
    object: edit(canary(), (c) => (c.metadata.lables = {})),
    gate: 'invalid',
    kubeconform: 'valid',
    why: 'the gate checks a custom resource metadata as ObjectMeta, as the API server does (schema-catalog.ts); the CRD says only type: object, which kubeconform reads',
  },
  {
    name: 'an int32 field out of range (replicas 3000000000)',
    object: edit(deployment(), (d) => (d.spec.replicas = 3_000_000_000)),
    gate: 'invalid',
    kubeconform: 'valid',
    why: 'the gate checks int32 as the API server does; the built-in catalog says $schema http://json-schema.org/schema# (the latest draft), where jsonschema v6 treats format as an annotation (santhosh-tekuri/jsonschema v6.0.2 objcompiler.go assertFormat)',
  },
  {
    name: 'null for an optional field (revisionHistoryLimit)',
    object: edit(deployment(), (d) => (d.spec.revisionHistoryLimit = null)),
    gate: 'invalid',
    kubeconform: 'valid',
    why: 'openapi2jsonschema --kubernetes lets every field that is not required be null (util.py allow_null_optional_fields); the gate keeps the upstream type',
  },
  {
    name: 'an unknown field under x-kubernetes-preserve-unknown-fields with properties (Kafka status.clusterSecurity)',
    object: kafka({ clusterSecurity: { anything: 'kept' } }),
    gate: 'valid',
    kubeconform: 'invalid',
    why: 'the gate, like the API server, keeps unknown fields where the CRD preserves them; openapi2jsonschema.py closes every schema with properties',
  },
];

const verdictIn = (minor: string, verdict: Case['verdict']): Verdict => (typeof verdict === 'string' ? verdict : verdict[minor as keyof typeof verdict]);

/** The gate's verdict in one version: a problem counts unless it names only other versions. */
function gateVerdict(object: ManifestObject, minor: string): Verdict {
  const problems = validateAgainstSchema(object).filter((problem) => {
    const only = /\(Kubernetes ([\d., ]+) only\)$/.exec(problem);
    return only === null || only[1]!.split(', ').includes(minor);
  });
  return problems.length === 0 ? 'valid' : 'invalid';
}

const kubeconformVerdict = (result: KubeconformResult | undefined): Verdict | undefined =>
  result === undefined ? undefined : result.status === 'statusValid' ? 'valid' : 'invalid';

describe('the gate and kubeconform agree', () => {
  let dir: string;
  let results: Map<string, KubeconformResult[]>;
  const fileOf = (index: number) => path.join(dir, 'cases', `case-${String(index).padStart(3, '0')}.yaml`);
  const cases = [...AGREED.map((entry) => entry.object), ...KNOWN_DIFFERENCES.map((entry) => entry.object)];

  beforeAll(() => {
    dir = temporaryDirectory('platform-gitops-kubeconform-');
    fs.mkdirSync(path.join(dir, 'cases'));
    cases.forEach((object, index) => fs.writeFileSync(fileOf(index), stringify(object)));
    const kubeconform = prepareKubeconform(ROOT, path.join(ROOT, VALIDATOR_CACHE_DIR));
    // The rendered files, a kustomization's folder left out (dist/<env>/argocd/: kustomize's
    // input, a remote base and patches, which test/argo-cd-kustomization.test.ts builds with kustomize).
    const dist = path.join(ROOT, 'dist');
    results = runKubeconform(kubeconform, [path.join(dir, 'cases'), ...[...readManifestTree(dist).keys()].map((file) => path.join(dist, file))]);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const resultOf = (minor: string, index: number) => results.get(minor)!.find((result) => result.filename === fileOf(index));

  it.each(KUBERNETES_VERSIONS)('on every committed object: valid (Kubernetes %s)', (minor) => {
    const objects = ENVIRONMENT_ORDER.flatMap((environment) => committedObjects(environment));
    const invalidForGate = objects.filter((object) => gateVerdict(object, minor) !== 'valid');
    const fromDist = results.get(minor)!.filter((result) => result.filename.startsWith(path.join(ROOT, 'dist')) && result.status !== '');
    expect(invalidForGate).toEqual([]);
    expect(fromDist.filter((result) => result.status !== 'statusValid')).toEqual([]);
    expect(fromDist).toHaveLength(objects.length);
  });

  it.each(AGREED.map((entry, index) => [entry.name, index] as const))('on %s', (_name, index) => {
    const entry = AGREED[index]!;
    for (const minor of KUBERNETES_VERSIONS) {
      const expected = verdictIn(minor, entry.verdict);
      expect({ minor, gate: gateVerdict(entry.object, minor), kubeconform: kubeconformVerdict(resultOf(minor, index)) }).toEqual({
        minor,
        gate: expected,
        kubeconform: expected,
      });
    }
  });

  it.each(KNOWN_DIFFERENCES.map((entry, index) => [entry.name, index] as const))('except, by design, on %s', (_name, index) => {
    const entry = KNOWN_DIFFERENCES[index]!;
    expect(entry.gate).not.toBe(entry.kubeconform);
    expect(entry.why).not.toBe('');
    for (const minor of KUBERNETES_VERSIONS) {
      const at = AGREED.length + index;
      expect({ minor, gate: gateVerdict(entry.object, minor), kubeconform: kubeconformVerdict(resultOf(minor, at)) }).toEqual({
        minor,
        gate: entry.gate,
        kubeconform: entry.kubeconform,
      });
    }
  });
});
