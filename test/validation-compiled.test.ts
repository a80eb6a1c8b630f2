import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadCompiledValidators, VALIDATOR_CACHE_DIR } from '../src/validation/compiled-validators';
import { KUBERNETES_VERSIONS, kubernetesSchemaFile } from '../src/validation/schema-catalog';
import { temporaryDirectory } from './support';

let roots: string[] = [];
afterEach(() => {
  for (const dir of roots.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A project with a two-definition `schemas/` per version and one CRD: compiles in a moment. */
function tinyProject(replicasType = 'integer'): string {
  const root = temporaryDirectory('platform-gitops-compiled-');
  roots.push(root);
  fs.mkdirSync(path.join(root, 'schemas', 'crds'), { recursive: true });
  for (const minor of KUBERNETES_VERSIONS) {
    const definitions = {
      [OBJECT_META]: { type: 'object', properties: { name: { type: 'string' } } },
      'io.k8s.api.apps.v1.Deployment': {
        type: 'object',
        'x-kubernetes-group-version-kind': [{ group: 'apps', version: 'v1', kind: 'Deployment' }],
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { $ref: `#/definitions/${OBJECT_META}` },
          spec: { type: 'object', properties: { replicas: { type: replicasType, format: 'int32' } } },
        },
      },
    };
    fs.writeFileSync(path.join(root, 'schemas', kubernetesSchemaFile(minor)), JSON.stringify({ definitions }));
  }
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    spec: {
      group: 'example.com',
      names: { kind: 'Widget' },
      versions: [{ name: 'v1', served: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'string', enum: ['S', 'M'] } } } } } } }],
    },
  };
  fs.writeFileSync(path.join(root, 'schemas', 'crds', 'widget.yaml'), stringify(crd));
  return root;
}

function load(root: string) {
  const messages: string[] = [];
  const validators = loadCompiledValidators(root, (message) => messages.push(message));
  return { validators, messages };
}

describe('validators compiled ahead of time', () => {
  it('compiles once per content of the schemas, then loads what it compiled', () => {
    const root = tinyProject();
    const first = load(root);
    expect(first.messages.join('\n')).toContain('compiling the verdict validators once');
    const deployment = first.validators.kubernetes.get('1.35')!.get('apps/v1 Deployment')!;
    expect(deployment.check({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { replicas: 2 } })).toBe(true);
    expect(deployment.check({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { replcas: 2 } })).toBe(false);
    expect(first.validators.crds.get('example.com/v1 Widget')!.check({ spec: { size: 'XL' } })).toBe(false);
    expect(fs.readdirSync(path.join(root, VALIDATOR_CACHE_DIR)).filter((file) => file.endsWith('.js'))).toHaveLength(1);

    expect(load(root).messages).toEqual([]);
  });

  it('explains an invalid object with every error, compiling the explaining validators on first use', () => {
    const root = tinyProject();
    const { validators, messages } = load(root);
    const errors = validators.kubernetes.get('1.36')!.get('apps/v1 Deployment')!.explain({ metadata: { name: 1, lables: {} }, spec: { replicas: 'two' } });
    expect(errors.map((error) => `${error.instancePath} ${error.keyword}`).sort()).toEqual(['/metadata additionalProperties', '/metadata/name type', '/spec/replicas type']);
    expect(messages.join('\n')).toContain('compiling the explain validators once');
  });

  it('compiles again when a schema changes, and judges by the new one', () => {
    const root = tinyProject();
    load(root);
    const changed = tinyProject('string');
    for (const minor of KUBERNETES_VERSIONS) fs.copyFileSync(path.join(changed, 'schemas', kubernetesSchemaFile(minor)), path.join(root, 'schemas', kubernetesSchemaFile(minor)));
    const again = load(root);
    expect(again.messages.join('\n')).toContain('compiling the verdict validators once');
    expect(again.validators.kubernetes.get('1.35')!.get('apps/v1 Deployment')!.check({ spec: { replicas: 'two' } })).toBe(true);
  });
});
