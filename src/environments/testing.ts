import type { EnvironmentInput } from './schema';

/** 1.2 (2): automated CI/CD testing. Rolling update, two pods, ACME staging certificates. */
export const testing = {
  name: 'testing',
  status: 'live',
  autoSync: true,
  application: {
    name: 'webapp',
    namespace: 'webapp',
    url: 'https://webapp.testing.platform.example.com',
    replicas: 2,
    resources: {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    },
  },
  image: {
    registry: 'registry.example.com',
    project: 'platform',
    tag: 'v1.5.0',
    pullSecret: 'registry-pull',
  },
  tls: { clusterIssuer: 'letsencrypt-staging' },
  strategy: { type: 'rolling' },
  infrastructure: {
    issuer: { type: 'acme', directory: 'staging', email: 'platform-team@example.com' },
    ingressController: { replicas: 1, serviceType: 'LoadBalancer' },
    monitoring: { retention: '3d', alertmanagerReplicas: 1 },
  },
} satisfies EnvironmentInput;
