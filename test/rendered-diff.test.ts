import { describe, expect, it } from 'vitest';
import { diffRenderedTrees } from '../src/diff/rendered-diff';

// A release installed from its upstream's manifests renders a kustomization folder
// (dist/<env>/argocd/): its kustomization.yaml has no metadata.name and its patches are not
// objects of their own. The diff compares those documents as the files they are.
describe('the rendered diff of a kustomization folder', () => {
  const kustomization = (tag: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - https://github.com/argoproj/argo-cd//manifests/cluster-install?ref=${tag}\n`;
  const patch = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  a: "1"\n';

  it('names a changed kustomization by its file, and reports an unchanged folder as no change', () => {
    const base = new Map([['local/argocd/kustomization.yaml', kustomization('v1.0.0')], ['local/argocd/argocd-cm.patch.yaml', patch]]);
    const head = new Map([['local/argocd/kustomization.yaml', kustomization('v1.0.1')], ['local/argocd/argocd-cm.patch.yaml', patch]]);
    expect(diffRenderedTrees(base, base).environments).toEqual([]);
    const [local] = diffRenderedTrees(base, head).environments;
    expect(local!.changed.map((change) => change.label)).toEqual(['kustomize file argocd/kustomization.yaml']);
    expect(local!.changed[0]!.file).toBe('argocd/kustomization.yaml');
  });

  it('still refuses a chart file whose document names no object', () => {
    expect(() => diffRenderedTrees(new Map(), new Map([['local/apps.yaml', 'data: {}\n']]))).toThrow('local/apps.yaml: a document without apiVersion, kind or metadata.name cannot be compared');
  });
});
