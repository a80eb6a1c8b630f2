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
  database: {
    namespace: 'database',
    name: 'webapp',
    edition: 'Developer',
    resources: {
      requests: { cpu: '500m', memory: '2Gi' },
      limits: { cpu: '1', memory: '2Gi' },
    },
    storage: { storageClass: 'standard', size: '20Gi' },
    backup: { schedule: '0 2 * * *', storage: { storageClass: 'standard', size: '20Gi' } },
  },
  broker: {
    namespace: 'kafka',
    brokers: 1,
    tlsListener: false,
    resources: {
      requests: { cpu: '250m', memory: '1Gi' },
      limits: { cpu: '1', memory: '1Gi' },
    },
    storage: { storageClass: 'standard', size: '20Gi' },
    topics: [{ name: 'declarations', partitions: 3, replicas: 1, retentionHours: 168 }],
    users: [
      {
        name: 'webapp',
        acls: [{ topic: 'declarations', operations: ['Read', 'Write', 'Describe'] }],
        consumerGroup: 'webapp',
      },
    ],
  },
} satisfies EnvironmentInput;
