import { describe, expect, it } from 'vitest';
import { BLUE_GREEN, IMAGE_TAG_PATTERN } from '../src/contract/contract';
import { runningTagOf } from '../src/environments/strategy-registry';
import { unitName } from '../src/contract/naming';
import { committedObjects, findObject, type K8sObject, projectEnvironments } from './support';

// Every number here is a literal from the contract's limits table (section 8) and the
// shapes of 2.1 / 2.2, read from the committed manifests: a drift in src/contract/,
// a construct or cdk8s-plus fails here, not only in a snapshot.

const environments = projectEnvironments();
const local = committedObjects('local');
const testing = committedObjects('testing');
const staging = committedObjects('staging');
const production = committedObjects('production');

const container = (deployment: K8sObject) => deployment.spec.template.spec.containers[0];
const deploymentsOf = (objects: readonly K8sObject[]) => objects.filter((o) => o.kind === 'Deployment');
const allDeployments = [local, testing, staging, production].flatMap(deploymentsOf);
/** The application a Deployment belongs to: the one whose namespace it is in (each has its own). */
const applicationOf = (deployment: K8sObject) =>
  Object.values(environments)
    .flatMap((env) => env.applications)
    .find((app) => app.namespace === deployment.metadata.namespace)!;
/** The applications of an environment in a rolling or canary strategy: one Deployment each. */
const singleUnitApplications = (name: string) => environments[name]!.applications.filter((app) => app.strategy.type !== 'blue-green');

describe('the application Deployment (2.1, 2.2, 8)', () => {
  it('is named after the application in rolling and canary environments', () => {
    for (const [name, objects] of Object.entries({ local, testing, production })) {
      expect(deploymentsOf(objects).map((d) => d.metadata.name).sort()).toEqual(singleUnitApplications(name).map((app) => app.name).sort());
    }
  });

  it('rolls out with RollingUpdate, maxUnavailable 1 and maxSurge 1 (8: rolling update 1 / 1)', () => {
    expect(allDeployments.length).toBeGreaterThanOrEqual(4);
    for (const deployment of allDeployments) {
      expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } });
    }
  });

  it('checks liveness with GET /health on 8080 after 30 s, every 10 s (8: liveness probe)', () => {
    for (const deployment of allDeployments) {
      const probe = container(deployment).livenessProbe;
      expect(probe.httpGet).toMatchObject({ path: '/health', port: 8080 });
      expect(probe.initialDelaySeconds).toBe(30);
      expect(probe.periodSeconds).toBe(10);
    }
  });

  it('checks readiness with GET /ready on 8080 after 5 s, every 5 s (8: readiness probe)', () => {
    for (const deployment of allDeployments) {
      const probe = container(deployment).readinessProbe;
      expect(probe.httpGet).toMatchObject({ path: '/ready', port: 8080 });
      expect(probe.initialDelaySeconds).toBe(5);
      expect(probe.periodSeconds).toBe(5);
    }
  });

  it('listens on container port 8080 named http (8: application container port)', () => {
    for (const deployment of allDeployments) {
      expect(container(deployment).ports).toEqual([{ containerPort: 8080, name: 'http', protocol: 'TCP' }]);
    }
  });

  it('runs the image <registry>/<project>/<application>:v<major>.<minor>.<patch> of its environment', () => {
    // Derived from the values files: a release changes the tag, not this rule.
    for (const [name, objects] of Object.entries({ local, testing, staging, production })) {
      for (const application of environments[name]!.applications) {
        const { registry, project } = application.image;
        const app = application.name;
        const running = application.strategy.type === 'blue-green' ? unitName(app, application.strategy.blueGreen.active) : app;
        expect(container(findObject(objects, 'Deployment', running)).image).toBe(`${registry}/${project}/${app}:${runningTagOf(application)}`);
        expect(runningTagOf(application)).toMatch(IMAGE_TAG_PATTERN);
      }
    }
  });

  it('carries the labels app and version, and keeps revisions for rollback', () => {
    for (const deployment of allDeployments) {
      expect(Object.keys(deployment.spec.template.metadata.labels).sort()).toEqual(['app', 'version']);
      expect(deployment.spec.template.metadata.labels.app).toBe(applicationOf(deployment).name);
      expect(deployment.spec.revisionHistoryLimit).toBe(10);
    }
  });

  it('pulls with the registry secret, as a service account without a token, in a restricted context', () => {
    for (const deployment of allDeployments) {
      const pod = deployment.spec.template.spec;
      expect(pod.imagePullSecrets).toEqual([{ name: applicationOf(deployment).image.pullSecret }]);
      expect(pod.serviceAccountName).toBe(applicationOf(deployment).name);
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(container(deployment).securityContext).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        privileged: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
    }
  });

  it('sets the environment resources, as written', () => {
    expect(container(findObject(local, 'Deployment', 'webapp')).resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    expect(container(findObject(production, 'Deployment', 'webapp')).resources).toEqual({
      requests: { cpu: '500m', memory: '512Mi' },
      limits: { cpu: '1', memory: '1024Mi' },
    });
  });

  it('runs the replicas each environment asks for', () => {
    for (const [name, objects] of Object.entries({ local, testing, production })) {
      for (const application of environments[name]!.applications) {
        expect(findObject(objects, 'Deployment', application.name).spec.replicas).toBe(application.replicas);
      }
    }
  });

  it('creates a ServiceAccount that does not mount its token', () => {
    expect(findObject(local, 'ServiceAccount', 'webapp').automountServiceAccountToken).toBe(false);
  });
});

describe('the Service, the Gateway and the HTTPRoute (4, 8)', () => {
  it('forwards Service port 80 to container port 8080 (8: service port 80)', () => {
    for (const objects of [local, testing, staging]) {
      expect(findObject(objects, 'Service', 'webapp').spec.ports).toEqual([
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
      ]);
    }
  });

  it('selects the application by app label in rolling environments', () => {
    expect(findObject(testing, 'Service', 'webapp').spec.selector).toEqual({ app: 'webapp' });
  });

  it('serves one HTTPS host per environment through its Gateway, its Certificate from the environment ClusterIssuer', () => {
    const expected = [
      [local, 'webapp.local.platform.example.com', 'local-ca'],
      [testing, 'webapp.testing.platform.example.com', 'letsencrypt-staging'],
      [staging, 'webapp.staging.platform.example.com', 'letsencrypt-staging'],
      [production, 'webapp.platform.example.com', 'letsencrypt-production'],
    ] as const;
    for (const [objects, host, issuer] of expected) {
      const certificate = findObject(objects, 'Certificate', 'webapp');
      expect(certificate.spec).toEqual({
        secretName: 'webapp-tls',
        dnsNames: [host],
        issuerRef: { group: 'cert-manager.io', kind: 'ClusterIssuer', name: issuer },
      });
      expect(findObject(objects, 'GatewayClass', 'envoy-gateway').spec).toEqual({ controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' });
      const gateway = findObject(objects, 'Gateway', 'webapp');
      expect(gateway.spec.gatewayClassName).toBe('envoy-gateway');
      // No cert-manager annotation: the Certificate above is the Secret's one owner.
      expect(gateway.metadata.annotations).toBeUndefined();
      expect(gateway.spec.listeners).toEqual([
        { name: 'http', protocol: 'HTTP', port: 80, hostname: host, allowedRoutes: { namespaces: { from: 'Same' } } },
        {
          name: 'https',
          protocol: 'HTTPS',
          port: 443,
          hostname: host,
          tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'webapp-tls' }] },
          allowedRoutes: { namespaces: { from: 'Same' } },
        },
      ]);
      // Gateway API: a RequestRedirect on the http listener; cert-manager's challenge routes
      // match an exact path there and take precedence over this route's implicit `/` prefix.
      expect(findObject(objects, 'HTTPRoute', 'webapp-https-redirect').spec).toEqual({
        parentRefs: [{ name: 'webapp', sectionName: 'http' }],
        hostnames: [host],
        rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 301 } }] }],
      });
    }
    for (const objects of [local, testing, staging]) {
      expect(findObject(objects, 'HTTPRoute', 'webapp').spec).toEqual({
        parentRefs: [{ name: 'webapp', sectionName: 'https' }],
        hostnames: [findObject(objects, 'Certificate', 'webapp').spec.dnsNames[0]],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'webapp', port: 80 }] }],
      });
    }
  });

  // Envoy Gateway v1.9.0 site/content/en/latest/tasks/operations/customize-envoyproxy.md: a
  // Gateway's `infrastructure.parametersRef` names an EnvoyProxy in its namespace.
  it('sizes each environment\'s Envoy proxies through the Gateway\'s EnvoyProxy, as its values file says', () => {
    for (const [name, objects] of Object.entries({ local, testing, staging, production })) {
      const { replicas, serviceType } = environments[name]!.infrastructure.gateway;
      expect(findObject(objects, 'Gateway', 'webapp').spec.infrastructure).toEqual({
        parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'webapp' },
      });
      expect(findObject(objects, 'EnvoyProxy', 'webapp').spec.provider).toEqual({
        type: 'Kubernetes',
        kubernetes: { envoyDeployment: { name: 'webapp-gateway', replicas }, envoyService: { name: 'webapp-gateway', type: serviceType } },
      });
    }
  });

  // Envoy Gateway v1.9.1 internal/provider/kubernetes/controller.go: a Gateway whose
  // parametersRef it cannot find is not Accepted (InvalidParameters), which Argo CD calls
  // Degraded; synced in one wave, the Gateway was judged before its EnvoyProxy existed (seen
  // on the e2e cluster: a transient Degraded and its team-chat notice on a first deployment).
  it("syncs each Gateway's EnvoyProxy in a wave before the Gateway", () => {
    const wave = (object: { metadata: { annotations?: Record<string, string> } }) => Number(object.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0);
    for (const objects of [local, testing, staging, production]) {
      const gateway = findObject(objects, 'Gateway', 'webapp');
      const proxy = findObject(objects, 'EnvoyProxy', gateway.spec.infrastructure.parametersRef.name);
      expect(wave(proxy)).toBeLessThan(wave(gateway));
    }
  });

  it('admits only restricted pods in the application namespace', () => {
    expect(findObject(local, 'Namespace', 'webapp').metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
  });
});

describe('the delivery strategies rendered per environment (1.4, 2.1, 2.3, 8)', () => {
  it('runs blue-green in staging with 3 replicas per unit (8: blue-green replicas per unit)', () => {
    const strategy = environments.staging!.applications[0]!.strategy;
    if (strategy.type !== 'blue-green') throw new Error('staging is blue-green');
    const units = BLUE_GREEN.units.filter((unit) => strategy.blueGreen.units[unit] !== undefined);
    for (const unit of units) {
      const deployment = findObject(staging, 'Deployment', `webapp-${unit}`);
      expect(deployment.spec.replicas).toBe(BLUE_GREEN.replicasPerUnit);
      expect(deployment.spec.selector.matchLabels).toEqual({ app: 'webapp', version: unit });
    }
    expect(findObject(staging, 'Service', 'webapp').spec.selector).toEqual({ app: 'webapp', version: strategy.blueGreen.active });
  });

  it('runs a Flagger canary in production with the 2.3 analysis (8: canary rows)', () => {
    const canary = findObject(production, 'Canary', 'webapp');
    expect(canary.apiVersion).toBe('flagger.app/v1beta1');
    expect(canary.spec.targetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'webapp' });
    expect(canary.spec.progressDeadlineSeconds).toBe(60);
    expect(canary.spec.service).toMatchObject({ port: 80, targetPort: 8080 });
    expect(canary.spec.analysis).toMatchObject({ interval: '30s', threshold: 5, maxWeight: 50, stepWeight: 10 });
    expect(canary.spec.analysis.metrics).toEqual([
      { name: 'request-success-rate', templateRef: { name: 'request-success-rate', namespace: 'webapp' }, thresholdRange: { min: 99 }, interval: '1m' },
      { name: 'request-duration', templateRef: { name: 'request-duration', namespace: 'webapp' }, thresholdRange: { max: 500 }, interval: '30s' },
    ]);
    expect(production.filter((o) => o.kind === 'Service' && o.metadata.namespace === 'webapp')).toEqual([]);
  });

  it('uses rolling update in local and testing', () => {
    for (const [name, objects] of Object.entries({ local, testing })) {
      expect(objects.map((o) => o.kind)).not.toContain('Canary');
      expect(singleUnitApplications(name).map((app) => app.strategy.type)).toEqual(environments[name]!.applications.map(() => 'rolling'));
      expect(deploymentsOf(objects)).toHaveLength(environments[name]!.applications.length);
    }
  });
});
