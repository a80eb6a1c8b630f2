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
} satisfies EnvironmentInput;
