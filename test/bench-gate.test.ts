import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { writeCopies } from '../src/bench/gate';
import { kubeconformFileName } from '../src/bench/kubeconform-schemas';
import { loadEnvironments } from '../src/environments';
import { readRenderedTree } from '../src/validation/manifests';
import { runGate } from '../src/validation/gate';
import { DIST, ENVIRONMENT_ORDER, committedObjects, temporaryDirectory } from './support';

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("kubeconform's schema layout", () => {
  // yannh/kubeconform v0.8.0 pkg/registry/registry.go `schemaPath`: the kind lower-cased, then
  // KindSuffix: "-" + the group's first label (or the core version), "-" + the version.
  it('names each type <kind>-<first label of the group>-<version>.json, core types <kind>-<version>.json', () => {
    expect(kubeconformFileName('apps/v1', 'Deployment')).toBe('deployment-apps-v1.json');
    expect(kubeconformFileName('v1', 'Service')).toBe('service-v1.json');
    expect(kubeconformFileName('networking.k8s.io/v1', 'NetworkPolicy')).toBe('networkpolicy-networking-v1.json');
    expect(kubeconformFileName('monitoring.coreos.com/v1alpha1', 'AlertmanagerConfig')).toBe('alertmanagerconfig-monitoring-v1alpha1.json');
  });
});

describe("the gate bench's large set", () => {
  it('copies dist/ with every copy in namespaces of its own, each object once, and the gate passes it as it passes dist/', () => {
    const target = temporaryDirectory('platform-gitops-bench-copies-');
    dirs.push(target);
    const written = writeCopies(DIST, target, 2);
    const committed = ENVIRONMENT_ORDER.flatMap((environment) => committedObjects(environment));
    expect(written).toBe(2 * committed.length);

    const tree = readRenderedTree(target);
    expect(tree.unreadable).toEqual([]);
    expect(tree.objects).toHaveLength(written);
    const identities = tree.objects.map(({ environment, object }) => `${environment} ${object.apiVersion} ${object.kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name}`);
    expect(new Set(identities).size).toBe(identities.length);
    const namespaces = new Set(tree.objects.flatMap(({ object }) => (object.metadata?.namespace === undefined ? [] : [object.metadata.namespace])));
    for (const namespace of namespaces) expect(namespace).toMatch(/-[01]$/);

    const result = runGate({ dir: target, environments: loadEnvironments() });
    expect(result.findings).toEqual([]);
    expect(result.objects).toBe(written);
  });
});
