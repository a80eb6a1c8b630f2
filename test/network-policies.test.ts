import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { DNS_PEER, NetworkPolicies } from '../src/constructs/network-policies';
import { validateAgainstSchema } from '../src/validation/schemas';
import { ENVIRONMENT_ORDER, findObject, projectEnvironments, renderToObjects, type K8sObject } from './support';

function policiesOf(objects: readonly K8sObject[]): K8sObject[] {
  return objects.filter((object) => object.kind === 'NetworkPolicy');
}

describe('application namespace network policies', () => {
  const environments = projectEnvironments();

  it.each(ENVIRONMENT_ORDER)('%s denies all traffic, then allows the Gateway\'s proxies, monitoring, the smoke hook, DNS, the database and the broker', (name) => {
    const objects = [...renderToObjects(environments[name]!).values()].flat().filter((o) => o.metadata.namespace === 'webapp');
    const policies = policiesOf(objects);
    expect(policies.map((policy) => policy.metadata.name)).toEqual([
      'default-deny',
      'allow-ingress-from-gateway',
      'allow-ingress-from-gateway-to-acme-solver',
      'allow-ingress-from-monitoring',
      'allow-ingress-from-webapp-smoke',
      'allow-egress-to-dns',
      'allow-egress-to-database',
      'allow-egress-to-broker',
      'webapp-smoke',
    ]);
    for (const policy of policies) {
      expect(policy.metadata.namespace).toBe('webapp');
      expect(validateAgainstSchema(policy)).toEqual([]);
    }

    expect(findObject(objects, 'NetworkPolicy', 'default-deny').spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    // Envoy Gateway runs each Gateway's proxies in its own namespace, labelled with the
    // owning Gateway (envoyproxy/gateway v1.9.0 internal/infrastructure/kubernetes/proxy:
    // resource.go EnvoyAppLabel, resource_provider.go stableSelector).
    const proxies = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'envoy-gateway-system' } },
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/name': 'envoy',
          'app.kubernetes.io/component': 'proxy',
          'gateway.envoyproxy.io/owning-gateway-name': 'webapp',
          'gateway.envoyproxy.io/owning-gateway-namespace': 'webapp',
        },
      },
    };
    expect(findObject(objects, 'NetworkPolicy', 'allow-ingress-from-gateway').spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress'],
      ingress: [{ from: [proxies], ports: [{ port: 8080, protocol: 'TCP' }] }],
    });
    // Convergence item 4: cert-manager's HTTP-01 solver pods run in the Certificate's
    // namespace with the label acme.cert-manager.io/http01-solver=true and listen on 8089
    // (cert-manager v1.21.1 pkg/issuer/acme/http/pod.go podLabels, http.go
    // acmeSolverListenPort); the default deny would keep the Gateway from reaching them.
    expect(findObject(objects, 'NetworkPolicy', 'allow-ingress-from-gateway-to-acme-solver').spec).toEqual({
      podSelector: { matchLabels: { 'acme.cert-manager.io/http01-solver': 'true' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [proxies], ports: [{ port: 8089, protocol: 'TCP' }] }],
    });
    expect(findObject(objects, 'NetworkPolicy', 'allow-ingress-from-monitoring').spec.ingress).toEqual([
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 8080, protocol: 'TCP' }] },
    ]);
    // The smoke hook (4.1) calls the application through its Service, so its pods may
    // reach every application pod on 8080 (in canary mode they are Flagger's -primary pods).
    expect(findObject(objects, 'NetworkPolicy', 'allow-ingress-from-webapp-smoke').spec.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'webapp' } }, podSelector: { matchLabels: { app: 'webapp-smoke' } } }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);
    expect(findObject(objects, 'NetworkPolicy', 'webapp-smoke').spec.egress).toContainEqual({
      to: [{ podSelector: {} }],
      ports: [{ port: 8080, protocol: 'TCP' }],
    });
    expect(findObject(objects, 'NetworkPolicy', 'allow-egress-to-dns').spec).toEqual({
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [
        {
          to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
          ports: [
            { port: 53, protocol: 'UDP' },
            { port: 53, protocol: 'TCP' },
          ],
        },
      ],
    });
  });
});

describe('NetworkPolicies', () => {
  it('renders one allow per peer, so another connection is one line of props', () => {
    const chart = new Chart(new App(), 'test', { disableResourceNameHashes: true });
    new NetworkPolicies(chart, 'network-policies', {
      namespace: 'webapp',
      podLabels: { app: 'webapp' },
      egress: [DNS_PEER, { name: 'database', namespace: 'mssql', podLabels: { app: 'mssql' }, ports: [{ port: 1433 }] }],
    });
    const objects = Testing.synth(chart) as K8sObject[];
    expect(objects.map((object) => object.metadata.name)).toEqual(['default-deny', 'allow-egress-to-dns', 'allow-egress-to-database']);
    expect(findObject(objects, 'NetworkPolicy', 'allow-egress-to-database').spec).toEqual({
      podSelector: { matchLabels: { app: 'webapp' } },
      policyTypes: ['Egress'],
      egress: [
        {
          to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'mssql' } }, podSelector: { matchLabels: { app: 'mssql' } } }],
          ports: [{ port: 1433, protocol: 'TCP' }],
        },
      ],
    });
    // The default deny still covers every pod of the namespace, whatever the allows select.
    expect(findObject(objects, 'NetworkPolicy', 'default-deny').spec.podSelector).toEqual({});
  });
});
