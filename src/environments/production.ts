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
  database: {
    namespace: 'database',
    name: 'webapp',
    edition: 'Standard',
    resources: {
      requests: { cpu: '2', memory: '8Gi' },
      limits: { cpu: '4', memory: '8Gi' },
    },
    storage: { storageClass: 'ssd', size: '100Gi' },
    backup: { schedule: '0 1 * * *', storage: { storageClass: 'ssd', size: '200Gi' } },
  },
  broker: {
    namespace: 'kafka',
    brokers: 3,
    tlsListener: true,
    resources: {
      requests: { cpu: '1', memory: '4Gi' },
      limits: { cpu: '2', memory: '4Gi' },
    },
    storage: { storageClass: 'ssd', size: '100Gi' },
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
