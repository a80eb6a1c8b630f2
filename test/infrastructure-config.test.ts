import { describe, expect, it } from 'vitest';
import { PLATFORM } from '../src/environments/platform';
import { refusalsAgainstCommittedDist } from './support';

type Files = Record<string, any>;

/** Synthesize with a broken environment file or platform; return the problems, dist/ untouched. */
const refusedWith = refusalsAgainstCommittedDist();
const refused = (breakFiles: (files: Files) => void, platform: unknown = PLATFORM) => refusedWith(breakFiles, undefined, platform);

describe('a bad infrastructure section is refused with environment, field, value and rule, and dist/ is untouched', () => {
  it.each<[string, (files: Files) => void, string]>([
    [
      'an unknown issuer type',
      (files) => (files.testing.environment.infrastructure.issuer = { type: 'vault' }),
      'src/environments/testing/environment.yaml: infrastructure.issuer.type "vault" must be one of self-signed-ca, acme',
    ],
    [
      'an ACME directory other than staging or production',
      (files) => (files.testing.environment.infrastructure.issuer.directory = 'prod'),
      'src/environments/testing/environment.yaml: infrastructure.issuer.directory "prod" must be "staging" or "production"',
    ],
    [
      'an ACME contact that is not an e-mail address',
      (files) => (files.staging.environment.infrastructure.issuer.email = 'platform-team'),
      'src/environments/staging/environment.yaml: infrastructure.issuer.email "platform-team" must be an e-mail address',
    ],
    [
      'an ACME issuer without a contact',
      (files) => delete files.production.environment.infrastructure.issuer.email,
      'src/environments/production/environment.yaml: infrastructure.issuer.email is required and must be a string',
    ],
    [
      'a contact on the self-signed CA, which has none',
      (files) => (files.local.environment.infrastructure.issuer.email = 'platform-team@example.com'),
      'src/environments/local/environment.yaml: infrastructure.issuer: unknown field "email" (the schema does not name it; check the spelling)',
    ],
    [
      'no Envoy proxy pod for the Gateway',
      (files) => (files.staging.environment.infrastructure.gateway.replicas = 0),
      'src/environments/staging/environment.yaml: infrastructure.gateway.replicas 0 must be at least 1',
    ],
    [
      'a Service type the Gateway cannot be reached through',
      (files) => (files.staging.environment.infrastructure.gateway.serviceType = 'ClusterIP'),
      'src/environments/staging/environment.yaml: infrastructure.gateway.serviceType "ClusterIP" must be "LoadBalancer" or "NodePort"',
    ],
    [
      'a retention Prometheus does not read',
      (files) => (files.production.environment.infrastructure.monitoring.retention = '15 days'),
      'src/environments/production/environment.yaml: infrastructure.monitoring.retention "15 days" must be a whole number of hours or days such as "24h" or "15d"',
    ],
    [
      'a fractional Alertmanager replica count',
      (files) => (files.production.environment.infrastructure.monitoring.alertmanagerReplicas = 1.5),
      'src/environments/production/environment.yaml: infrastructure.monitoring.alertmanagerReplicas 1.5 must be a whole number',
    ],
    [
      'a missing monitoring section',
      (files) => delete files.local.environment.infrastructure.monitoring,
      'src/environments/local/environment.yaml: infrastructure.monitoring is required: a mapping with retention, alertmanagerReplicas',
    ],
    [
      'a missing infrastructure section',
      (files) => delete files.local.environment.infrastructure,
      'src/environments/local/environment.yaml: infrastructure is required: a mapping with issuer, gateway, monitoring, argoCd, versions, network',
    ],
    [
      'an application certificate from an issuer the environment does not render',
      (files) => (files.production.environment.infrastructure.issuer.directory = 'staging'),
      'src/environments/production/webapp.yaml: tls.clusterIssuer "letsencrypt-production" must name the environment\'s ClusterIssuer "letsencrypt-staging" (rendered from infrastructure.issuer in environment.yaml)',
    ],
  ])('refuses %s', (_, breakFiles, message) => {
    expect(refused(breakFiles)).toEqual([message]);
  });
});

describe('bad platform settings are refused with field, value and rule, and dist/ is untouched', () => {
  const platform = (change: (settings: any) => void): unknown => {
    const settings = structuredClone(PLATFORM) as any;
    change(settings);
    return settings;
  };

  it.each<[string, unknown, string[]]>([
    [
      'an HTTPS repository URL (Argo CD reads the repository with the SSH key)',
      platform((s) => (s.repository.url = 'https://github.com/example/platform-gitops.git')),
      ['platform: repository.url "https://github.com/example/platform-gitops.git" must be an SSH repository URL such as "git@github.com:example/platform-gitops.git"'],
    ],
    [
      'a branch name git refuses',
      platform((s) => (s.repository.targetRevision = 'release..1')),
      ['platform: repository.targetRevision "release..1" must be a branch name such as "main"'],
    ],
    [
      'a controller namespace and project that are not DNS labels',
      platform((s) => (s.controller = { namespace: 'Argo_CD', project: '' })),
      ['platform: controller.namespace "Argo_CD" must be a DNS label', 'platform: controller.project "" must be a DNS label'],
    ],
    [
      'a missing controller section',
      platform((s) => delete s.controller),
      ['platform: controller is required: a mapping with namespace, project'],
    ],
  ])('refuses %s', (_, settings, messages) => {
    expect(refused(() => undefined, settings)).toEqual(messages);
  });

  it('reports a bad platform together with a bad environment, in one round', () => {
    const settings = platform((s) => (s.repository.targetRevision = 'release..1'));
    expect(refused((files) => (files.local.environment.infrastructure.gateway.replicas = 0), settings)).toEqual([
      'src/environments/local/environment.yaml: infrastructure.gateway.replicas 0 must be at least 1',
      'platform: repository.targetRevision "release..1" must be a branch name such as "main"',
    ]);
  });
});
