import type { EnvironmentInput } from './schema';

/**
 * 1.2 (3): pre-production validation and user acceptance. Blue-green (1.4): the units
 * listed run side by side, 3 pods each, and the Service selects the active one.
 */
export const staging = {
  name: 'staging',
  status: 'live',
  autoSync: true,
  application: {
    name: 'webapp',
    namespace: 'webapp',
    url: 'https://webapp.staging.platform.example.com',
    resources: {
      requests: { cpu: '250m', memory: '256Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    },
  },
  image: {
    registry: 'registry.example.com',
    project: 'platform',
    pullSecret: 'registry-pull',
  },
  tls: { clusterIssuer: 'letsencrypt-staging' },
  strategy: {
    type: 'blue-green',
    blueGreen: {
      active: 'blue',
      units: { blue: { tag: 'v1.4.2' } },
    },
  },
  infrastructure: {
    issuer: { type: 'acme', directory: 'staging', email: 'platform-team@example.com' },
    ingressController: { replicas: 2, serviceType: 'LoadBalancer' },
    monitoring: { retention: '7d', alertmanagerReplicas: 2 },
  },
} satisfies EnvironmentInput;
