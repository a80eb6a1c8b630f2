import type { EnvironmentInput } from './schema';

/**
 * 1.2 (4): the live environment, planned and not yet in use: rendered and reviewable,
 * never synced automatically. Canary (1.4): Flagger shifts traffic on metric thresholds.
 */
export const production = {
  name: 'production',
  status: 'planned',
  autoSync: false,
  application: {
    name: 'webapp',
    namespace: 'webapp',
    url: 'https://webapp.platform.example.com',
    replicas: 3,
    resources: {
      requests: { cpu: '500m', memory: '512Mi' },
      limits: { cpu: '1', memory: '1Gi' },
    },
  },
  image: {
    registry: 'registry.example.com',
    project: 'platform',
    tag: 'v1.4.2',
    pullSecret: 'registry-pull',
  },
  tls: { clusterIssuer: 'letsencrypt-production' },
  strategy: { type: 'canary', canary: { loadTest: true } },
  infrastructure: {
    issuer: { type: 'acme', directory: 'production', email: 'platform-team@example.com' },
    ingressController: { replicas: 3, serviceType: 'LoadBalancer' },
    monitoring: { retention: '15d', alertmanagerReplicas: 3 },
  },
} satisfies EnvironmentInput;
