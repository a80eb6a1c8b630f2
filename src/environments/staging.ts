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
  database: {
    namespace: 'database',
    name: 'webapp',
    edition: 'Developer',
    resources: {
      requests: { cpu: '1', memory: '4Gi' },
      limits: { cpu: '2', memory: '4Gi' },
    },
    storage: { storageClass: 'ssd', size: '50Gi' },
    backup: { schedule: '0 1 * * *', storage: { storageClass: 'ssd', size: '100Gi' } },
  },
  broker: {
    namespace: 'kafka',
    brokers: 3,
    tlsListener: true,
    resources: {
      requests: { cpu: '500m', memory: '2Gi' },
      limits: { cpu: '2', memory: '2Gi' },
    },
    storage: { storageClass: 'ssd', size: '50Gi' },
    topics: [{ name: 'declarations', partitions: 3, replicas: 3, retentionHours: 168 }],
    users: [
      {
        name: 'webapp',
        acls: [{ topic: 'declarations', operations: ['Read', 'Write', 'Describe'] }],
        consumerGroup: 'webapp',
      },
    ],
  },
} satisfies EnvironmentInput;
