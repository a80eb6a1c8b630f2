import type { LocatedObject, ManifestObject } from '../src/validation/manifests';
import type { PolicyContext } from '../src/validation/policy';

/** The environment the in-memory manifests below belong to. */
export const CONTEXT: PolicyContext = { applications: [{ registry: 'registry.example.com', project: 'platform', name: 'webapp' }] };

const NS = 'webapp';

/** A container that passes every rule. */
export function goodContainer(name = 'webapp', image = 'registry.example.com/platform/webapp:v1.2.3'): Record<string, any> {
  return {
    name,
    image,
    ports: [{ containerPort: 8080, name: 'http' }],
    readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
    livenessProbe: { httpGet: { path: '/health', port: 8080 } },
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    securityContext: {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
}

export function deployment(name = 'webapp', containers = [goodContainer()], extra: Record<string, any> = {}): ManifestObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers, imagePullSecrets: [{ name: 'registry-pull' }], ...extra },
      },
    },
  };
}

export function service(name = 'webapp', selector: Record<string, string> = { app: 'webapp' }): ManifestObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { selector, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
  };
}

export function httpRoute(serviceName = 'webapp', port = 80): ManifestObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'webapp', namespace: NS },
    spec: {
      parentRefs: [{ name: 'webapp', sectionName: 'https' }],
      hostnames: ['webapp.example.com'],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: serviceName, port }] }],
    },
  };
}

/** A Flagger Canary for the `webapp` Deployment, its Services on port 80. */
export function canary(analysis: Record<string, unknown> = { interval: '30s', threshold: 5, maxWeight: 50, stepWeight: 10 }): ManifestObject {
  return {
    apiVersion: 'flagger.app/v1beta1',
    kind: 'Canary',
    metadata: { name: 'webapp', namespace: NS },
    spec: {
      provider: 'gatewayapi:v1',
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'webapp' },
      service: { port: 80, targetPort: 8080, hosts: ['webapp.example.com'], gatewayRefs: [{ name: 'webapp', namespace: NS, sectionName: 'https' }] },
      analysis,
    },
  };
}

export function networkPolicy(name: string, spec: Record<string, any>): ManifestObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: NS }, spec };
}

export const DEFAULT_DENY = () => networkPolicy('default-deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
export const ALLOW_DNS = () =>
  networkPolicy('allow-egress-to-dns', {
    podSelector: {},
    policyTypes: ['Egress'],
    egress: [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }], ports: [{ port: 53, protocol: 'UDP' }] }],
  });

/** A small environment that passes the gate: namespace, policies, workload, Service, HTTPRoute. */
export function goodEnvironment(): ManifestObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    DEFAULT_DENY(),
    ALLOW_DNS(),
    deployment(),
    service(),
    httpRoute(),
  ];
}

/** Objects placed in `dist/local/test.yaml`. */
export function located(objects: readonly ManifestObject[], environment = 'local', file = 'test.yaml'): LocatedObject[] {
  return objects.map((object) => ({ environment, file, object }));
}
