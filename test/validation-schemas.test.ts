import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { defaultRegistry, KUBERNETES_VERSIONS, kubernetesSchemaFile, validateAgainstSchema } from '../src/validation/schemas';
import { committedObjects, ENVIRONMENT_ORDER, ROOT } from './support';
import { canary, deployment, service } from './validation-fixtures';

const prometheusRule = (strategy: string) => ({
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'deployment-rules', namespace: 'webapp' },
  spec: { groups: [{ name: 'deployment.rules', partial_response_strategy: strategy, rules: [{ alert: 'A', expr: 'up == 0', for: '10m' }] }] },
});

describe('schema validation', () => {
  it('passes a valid Deployment', () => {
    expect(validateAgainstSchema(deployment())).toEqual([]);
  });

  it('reports a misspelt field with its path', () => {
    const object = deployment();
    (object.spec as Record<string, unknown>).replcas = 3;
    expect(validateAgainstSchema(object)).toEqual([
      'spec.replcas: unknown field: the apps/v1 Deployment schema has no such field (misspelt or misplaced?)',
    ]);
  });

  it('reports an unknown field deep in a pod template and in metadata', () => {
    const object = deployment();
    object.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true;
    (object.metadata as Record<string, unknown>).lables = { app: 'webapp' };
    expect(validateAgainstSchema(object)).toEqual([
      'metadata.lables: unknown field: the apps/v1 Deployment schema has no such field (misspelt or misplaced?)',
      'spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem: unknown field: the apps/v1 Deployment schema has no such field (misspelt or misplaced?)',
    ]);
  });

  it('reports an unknown kind instead of skipping it', () => {
    expect(validateAgainstSchema({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual([
      '(object): unknown kind example.com/v1 Widget: neither Kubernetes 1.35 nor 1.36 nor a CRD in schemas/crds defines it (check apiVersion and kind, or add the CRD)',
    ]);
    expect(validateAgainstSchema({ apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'old' } })).toEqual([
      expect.stringContaining('unknown kind apps/v1beta1 Deployment'),
    ]);
  });

  // Supported stack: Kubernetes 1.35-1.36 (README, "Supported stack"); the gate checks both
  // ends, so an API removed or a field added in between is a finding (kubeconform
  // -kubernetes-version, run once per version). Upstream definitions: cdk8s-team/cdk8s
  // kubernetes-schemas/v1.35.0 and v1.36.0 (schemas/SOURCES.md).
  it('validates built-in objects against both ends of the supported range, 1.35 and 1.36', () => {
    expect(KUBERNETES_VERSIONS).toEqual(['1.35', '1.36']);
    for (const minor of KUBERNETES_VERSIONS) expect(fs.existsSync(path.join(ROOT, 'schemas', kubernetesSchemaFile(minor))), minor).toBe(true);
    expect(fs.readdirSync(path.join(ROOT, 'schemas')).filter((file) => file.startsWith('kubernetes-'))).toEqual(['kubernetes-1.35.0.json', 'kubernetes-1.36.0.json']);
  });

  it('refuses a field only the newer release knows, and an API only one release serves, naming the release', () => {
    const object = deployment();
    object.spec.template.spec.schedulingGroup = { podGroupName: 'webapp' };
    expect(validateAgainstSchema(object)).toEqual([
      'spec.template.spec.schedulingGroup: unknown field: the apps/v1 Deployment schema has no such field (misspelt or misplaced?) (Kubernetes 1.35 only)',
    ]);
    const workload = { apiVersion: 'scheduling.k8s.io/v1alpha1', kind: 'Workload', metadata: { name: 'w', namespace: 'webapp' }, spec: { podGroups: [] } };
    expect(validateAgainstSchema(workload)).toEqual([
      '(object): Kubernetes 1.36 does not serve scheduling.k8s.io/v1alpha1 Workload (removed or not yet added: use an API version every supported release serves) (Kubernetes 1.36 only)',
    ]);
  });

  // README: cdk8s-plus-28 stays; the API versions it renders are served unchanged through 1.36.
  it.each(ENVIRONMENT_ORDER)('renders in %s only built-in API versions that Kubernetes 1.35 and 1.36 both serve', (environment) => {
    const registry = defaultRegistry();
    const crdGroups = /(^|\.)(cert-manager\.io|argoproj\.io|flagger\.app|strimzi\.io|coreos\.com|gateway\.networking\.k8s\.io|envoyproxy\.io)\//;
    const builtIn = committedObjects(environment).filter((object) => !crdGroups.test(object.apiVersion));
    const types = [...new Set(builtIn.map((object) => `${object.apiVersion} ${object.kind}`))].sort();
    expect(types).toContain('apps/v1 Deployment');
    for (const type of types) {
      const [apiVersion, kind] = type.split(' ') as [string, string];
      for (const minor of KUBERNETES_VERSIONS) expect(registry.servedBy(minor, apiVersion, kind), `${type} in ${minor}`).toBe(true);
    }
  });

  it('reports a wrong type and a missing required field', () => {
    const object = service();
    delete object.spec.ports[0].port;
    expect(validateAgainstSchema(object)).toEqual(['spec.ports[0].port: is required']);
    expect(validateAgainstSchema({ ...deployment(), spec: { ...deployment().spec, replicas: 'two' } })).toEqual([
      'spec.replicas: must be integer (got "two")',
    ]);
  });

  it('accepts int-or-string ports and quantities written as strings or numbers', () => {
    const named = service();
    named.spec.ports[0].targetPort = 'http';
    expect(validateAgainstSchema(named)).toEqual([]);
    const object = deployment();
    object.spec.template.spec.containers[0].resources = { requests: { cpu: 1, memory: '128Mi' }, limits: { cpu: '1.5', memory: 268435456 } };
    expect(validateAgainstSchema(object)).toEqual([]);
    object.spec.template.spec.containers[0].resources.limits.cpu = { millis: 500 };
    expect(validateAgainstSchema(object)).toEqual([
      'spec.template.spec.containers[0].resources.limits.cpu: must be string or number (got {"millis":500})',
    ]);
  });

  it('validates custom resources against their CRD, metadata included', () => {
    expect(validateAgainstSchema(canary({ interval: '30s', threshold: 5, maxWeight: 50, stepWeight: 10 }))).toEqual([]);
    expect(validateAgainstSchema(canary({ interval: '30s', threshold: 5, maxWeight: 50, stepWeigth: 10 }))).toEqual([
      'spec.analysis: must have exactly one of these sets of fields: interval + threshold + iterations | interval + threshold + stepWeight | interval + threshold + stepWeights',
      'spec.analysis.stepWeigth: unknown field: the flagger.app/v1beta1 Canary schema has no such field (misspelt or misplaced?)',
    ]);
    expect(validateAgainstSchema({ ...canary({ interval: '30s', threshold: 5, iterations: 10 }), metadata: { name: 'webapp', lables: {} } })).toEqual([
      'metadata.lables: unknown field: the flagger.app/v1beta1 Canary schema has no such field (misspelt or misplaced?)',
    ]);
  });

  it('keeps fields the CRD preserves unknown', () => {
    const topic = {
      apiVersion: 'kafka.strimzi.io/v1',
      kind: 'KafkaTopic',
      metadata: { name: 'declarations', namespace: 'kafka', labels: { 'strimzi.io/cluster': 'kafka-cluster' } },
      spec: { partitions: 3, replicas: 3, config: { 'retention.ms': 604800000, 'any.broker.setting': 'x' } },
    };
    expect(validateAgainstSchema(topic)).toEqual([]);
  });

  it('matches CRD patterns with RE2, as the API server does (Go (?i) included)', () => {
    expect(validateAgainstSchema(prometheusRule('warn'))).toEqual([]);
    expect(validateAgainstSchema(prometheusRule('ABORT'))).toEqual([]);
    expect(validateAgainstSchema(prometheusRule('sometimes'))).toEqual([
      'spec.groups[0].partial_response_strategy: must match ^(?i)(abort|warn)?$ (got "sometimes")',
    ]);
  });

  it('compiles the schema of every served version of every CRD in schemas/crds', () => {
    const dir = path.join(ROOT, 'schemas', 'crds');
    const kinds: string[] = [];
    for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.yaml'))) {
      for (const document of parseAllDocuments(fs.readFileSync(path.join(dir, file), 'utf8'))) {
        const crd = document.toJS();
        for (const version of crd.spec.versions.filter((v: { served: boolean }) => v.served)) {
          const problems = validateAgainstSchema({
            apiVersion: `${crd.spec.group}/${version.name}`,
            kind: crd.spec.names.kind,
            metadata: { name: 'probe' },
          });
          expect(problems.join('\n')).not.toContain('unknown kind');
          kinds.push(crd.spec.names.kind);
        }
      }
    }
    expect(kinds).toHaveLength(23);
  });
});
