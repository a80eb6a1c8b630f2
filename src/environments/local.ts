import type { EnvironmentInput } from './schema';

/** 1.2 (1): developer workstations, initial testing. Rolling update, one pod, a local CA. */
export const local = {
  name: 'local',
  status: 'live',
  autoSync: true,
  application: {
    name: 'webapp',
    namespace: 'webapp',
    url: 'https://webapp.local.platform.example.com',
    replicas: 1,
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
  tls: { clusterIssuer: 'local-ca' },
  strategy: { type: 'rolling' },
  infrastructure: {
    issuer: { type: 'self-signed-ca' },
    ingressController: { replicas: 1, serviceType: 'NodePort' },
    monitoring: { retention: '24h', alertmanagerReplicas: 1 },
  },
  database: {
    namespace: 'database',
    name: 'webapp',
    edition: 'Developer',
    resources: {
      requests: { cpu: '500m', memory: '2Gi' },
      limits: { cpu: '1', memory: '2Gi' },
    },
    storage: { storageClass: 'standard', size: '10Gi' },
    backup: { schedule: '0 2 * * *', storage: { storageClass: 'standard', size: '10Gi' } },
  },
  broker: {
    namespace: 'kafka',
    brokers: 1,
    tlsListener: false,
    resources: {
      requests: { cpu: '250m', memory: '1Gi' },
      limits: { cpu: '1', memory: '1Gi' },
    },
    storage: { storageClass: 'standard', size: '10Gi' },
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
