import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_ORDER, committedObjects, findObject, type K8sObject } from './support';

// prometheus-operator v0.93.1 pkg/apis/monitoring/v1/alertmanager_types.go (the release
// kube-prometheus-stack runs): `alertmanagerConfigSelector` selects the AlertmanagerConfig objects
// merged into the Alertmanager's configuration, `alertmanagerConfigNamespaceSelector` the
// namespaces they are read from (nil: the Alertmanager's own), and
// `alertmanagerConfigMatcherStrategy.type` whether an AlertmanagerConfig's routes see every
// alert (`None`), only those of its own namespace (`OnNamespace`, the default), or every alert
// only when it is in the Alertmanager's namespace (`OnNamespaceExceptForAlertmanagerNamespace`).
// With `{}` selectors and `None`, a Role that may write AlertmanagerConfig in any namespace
// receives every alert of the cluster (an application team reading the database's alerts,
// or silencing the on-call page with a catch-all route of its own).

/** Whether `labels` satisfies a LabelSelector's matchLabels (the only form the platform uses). */
function selects(selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) throw new Error('a nil selector means something else for each field; the platform sets both');
  return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

describe.each(ENVIRONMENT_ORDER)('alert routing in %s (6)', (environment) => {
  const objects = committedObjects(environment);
  const alertmanager = findObject(objects, 'Application', 'kube-prometheus-stack').spec.source.helm.valuesObject.alertmanager.alertmanagerSpec;
  const namespaceLabels = (namespace: string) => ({ 'kubernetes.io/metadata.name': namespace });

  it('reads AlertmanagerConfig objects only from the monitoring namespace, only the platform\'s own', () => {
    expect(alertmanager.alertmanagerConfigNamespaceSelector).toEqual({ matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } });
    expect(Object.keys(alertmanager.alertmanagerConfigSelector.matchLabels ?? {})).not.toEqual([]);
    const selected = objects.filter(
      (o: K8sObject) =>
        o.kind === 'AlertmanagerConfig' &&
        selects(alertmanager.alertmanagerConfigNamespaceSelector, namespaceLabels(o.metadata.namespace!)) &&
        selects(alertmanager.alertmanagerConfigSelector, o.metadata.labels ?? {}),
    );
    expect(selected.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['monitoring/platform-alert-routing']);
  });

  it('selects no AlertmanagerConfig an application namespace could hold, even one copying the platform\'s labels', () => {
    const routing = findObject(objects, 'AlertmanagerConfig', 'platform-alert-routing');
    for (const namespace of new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => n !== undefined && n !== 'monitoring'))) {
      const copied = selects(alertmanager.alertmanagerConfigSelector, routing.metadata.labels ?? {});
      expect(copied && selects(alertmanager.alertmanagerConfigNamespaceSelector, namespaceLabels(namespace)), namespace).toBe(false);
    }
  });

  it('confines any other AlertmanagerConfig to its own namespace\'s alerts, while the platform\'s, beside the Alertmanager, sees every namespace\'s', () => {
    expect(alertmanager.alertmanagerConfigMatcherStrategy).toEqual({ type: 'OnNamespaceExceptForAlertmanagerNamespace' });
    expect(findObject(objects, 'AlertmanagerConfig', 'platform-alert-routing').metadata.namespace).toBe('monitoring');
  });
});
