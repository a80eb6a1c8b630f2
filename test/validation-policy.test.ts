import { describe, expect, it } from 'vitest';
import { checkObjects, validateObject } from '../src/validation/gate';
import type { ManifestObject } from '../src/validation/manifests';
import { RULE_NAMES } from '../src/validation/policy';
import {
  ALLOW_DNS,
  canary,
  CONTEXT,
  DEFAULT_DENY,
  deployment,
  goodContainer,
  goodEnvironment,
  httpRoute,
  located,
  networkPolicy,
  service,
} from './validation-fixtures';

/** A cert-manager ClusterIssuer of the local CA's kind. */
function clusterIssuer(name: string): ManifestObject {
  return { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name }, spec: { ca: { secretName: `${name}-root` } } };
}

/** The application's Certificate, naming `issuerRef`. */
function certificate(issuerRef: Record<string, string>, name = 'webapp'): ManifestObject {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace: 'webapp' },
    spec: { secretName: `${name}-tls`, dnsNames: ['webapp.example.com'], issuerRef },
  };
}

/** `<Kind>/<name>: <rule>: <message>` for every finding of the objects. */
function findings(objects: readonly ManifestObject[]): string[] {
  return checkObjects(located(objects), () => CONTEXT).findings.map((f) => `${f.object}: ${f.rule}: ${f.message}`);
}

/** The environment with its Deployment's first container changed. */
function withContainer(change: (container: Record<string, any>) => void, extraPodSpec: Record<string, any> = {}): ManifestObject[] {
  const container = goodContainer();
  change(container);
  return goodEnvironment().map((object) => (object.kind === 'Deployment' ? deployment('webapp', [container], extraPodSpec) : object));
}

function replacing(kind: string, replacement: ManifestObject | undefined): ManifestObject[] {
  return goodEnvironment().flatMap((object) => (object.kind === kind ? (replacement === undefined ? [] : [replacement]) : [object]));
}

describe('policy rules', () => {
  it('pass a small environment that follows every rule, schemas included', () => {
    expect(findings(goodEnvironment())).toEqual([]);
  });

  // One bad manifest per rule: the rule reports it, on the object to change, saying what to change.
  const badCases: { rule: string; what: string; objects: () => ManifestObject[]; expected: string }[] = [
    {
      rule: 'probes',
      what: 'a Deployment container without a readiness probe',
      objects: () => withContainer((c) => delete c.readinessProbe),
      expected: 'Deployment/webapp: probes: container "webapp": add readinessProbe (long-running containers need both)',
    },
    {
      rule: 'resources',
      what: 'an init container without limits',
      objects: () => withContainer(() => undefined, { initContainers: [{ ...goodContainer('migrate'), resources: { requests: { cpu: '1', memory: '1Gi' } } }] }),
      expected: 'Deployment/webapp: resources: init container "migrate": set resources.limits.cpu, resources.limits.memory',
    },
    {
      rule: 'run-as-non-root',
      what: 'a container that may run as root',
      objects: () => withContainer((c) => delete c.securityContext.runAsNonRoot),
      expected: 'Deployment/webapp: run-as-non-root: container "webapp": set securityContext.runAsNonRoot: true (on the container or the pod)',
    },
    {
      rule: 'run-as-non-root',
      what: 'a container that runs as user 0',
      objects: () => withContainer((c) => (c.securityContext.runAsUser = 0)),
      expected: 'Deployment/webapp: run-as-non-root: container "webapp": runs as user 0: set a non-zero runAsUser',
    },
    {
      rule: 'no-privilege-escalation',
      what: 'a container that may escalate privileges',
      objects: () => withContainer((c) => (c.securityContext.allowPrivilegeEscalation = true)),
      expected: 'Deployment/webapp: no-privilege-escalation: container "webapp": set securityContext.allowPrivilegeEscalation: false',
    },
    {
      rule: 'drop-all-capabilities',
      what: 'a container that keeps its capabilities',
      objects: () => withContainer((c) => (c.securityContext.capabilities = { drop: ['NET_RAW'] })),
      expected: 'Deployment/webapp: drop-all-capabilities: container "webapp": set securityContext.capabilities.drop: [ALL]',
    },
    {
      rule: 'drop-all-capabilities',
      what: 'a container that adds SYS_ADMIN',
      objects: () => withContainer((c) => (c.securityContext.capabilities.add = ['SYS_ADMIN'])),
      expected:
        'Deployment/webapp: drop-all-capabilities: container "webapp": remove securityContext.capabilities.add SYS_ADMIN (only NET_BIND_SERVICE may be added)',
    },
    {
      rule: 'seccomp-runtime-default',
      what: 'a container without a seccomp profile',
      objects: () => withContainer((c) => delete c.securityContext.seccompProfile),
      expected:
        'Deployment/webapp: seccomp-runtime-default: container "webapp": set securityContext.seccompProfile.type: RuntimeDefault (on the container or the pod)',
    },
    {
      rule: 'read-only-root-filesystem',
      what: 'a container with a writable root filesystem',
      objects: () => withContainer((c) => delete c.securityContext.readOnlyRootFilesystem),
      expected:
        'Deployment/webapp: read-only-root-filesystem: container "webapp": set securityContext.readOnlyRootFilesystem: true and mount a volume where it must write (or exempt it with the reason)',
    },
    {
      rule: 'image-tag',
      what: 'an image tagged latest',
      objects: () => withContainer((c) => (c.image = 'docker.io/library/busybox:latest')),
      expected: 'Deployment/webapp: image-tag: container "webapp": image docker.io/library/busybox:latest uses the tag "latest": pin a version tag',
    },
    {
      rule: 'image-tag',
      what: 'an untagged image',
      objects: () => withContainer((c) => (c.image = 'localhost:5000/busybox')),
      expected: 'Deployment/webapp: image-tag: container "webapp": image localhost:5000/busybox has no tag: pin a version tag',
    },
    {
      rule: 'application-image',
      what: 'an application image without a v<major>.<minor>.<patch> tag',
      objects: () => withContainer((c) => (c.image = 'registry.example.com/platform/webapp:1.2')),
      expected: 'Deployment/webapp: application-image: container "webapp": image registry.example.com/platform/webapp:1.2 must be tagged v<major>.<minor>.<patch>',
    },
    {
      rule: 'application-image',
      what: 'an image in the project that is not named after the application',
      objects: () => withContainer((c) => (c.image = 'registry.example.com/platform/other:v1.0.0')),
      expected:
        'Deployment/webapp: application-image: container "webapp": image registry.example.com/platform/other:v1.0.0 is in registry.example.com/platform/ but not named webapp or webapp-<suffix>',
    },
    {
      rule: 'service-selector',
      what: 'a Service whose selector matches no pod',
      objects: () => replacing('Service', service('webapp', { app: 'webapp', version: 'green' })),
      expected:
        'Service/webapp: service-selector: selector {"app":"webapp","version":"green"} matches no pod template in namespace webapp: fix the selector or the workload\'s pod labels',
    },
    {
      rule: 'route-backend',
      what: 'an HTTPRoute backend naming a missing Service',
      objects: () => replacing('HTTPRoute', httpRoute('web')),
      expected:
        'HTTPRoute/webapp: route-backend: backend Service "web" is not rendered in namespace webapp (nor created by a Canary there): render it or fix the name',
    },
    {
      rule: 'route-backend',
      what: 'an HTTPRoute backend naming a port the Service does not have',
      objects: () => replacing('HTTPRoute', httpRoute('webapp', 8080)),
      expected: 'HTTPRoute/webapp: route-backend: backend Service "webapp" has no port 8080 (it has 80): fix the port',
    },
    {
      rule: 'certificate-issuer',
      what: 'a Certificate naming the ClusterIssuer as an Issuer',
      objects: () => [...goodEnvironment(), clusterIssuer('local-ca'), certificate({ group: 'cert-manager.io', kind: 'Issuer', name: 'local-ca' })],
      expected:
        'Certificate/webapp: certificate-issuer: spec.issuerRef names the Issuer "local-ca" in namespace webapp, which the environment does not render (it renders ClusterIssuer local-ca): fix spec.issuerRef.kind or spec.issuerRef.name',
    },
    {
      rule: 'certificate-issuer',
      what: 'a Certificate naming a ClusterIssuer no chart renders',
      objects: () => [...goodEnvironment(), clusterIssuer('local-ca'), certificate({ kind: 'ClusterIssuer', name: 'letsencrypt-production' })],
      expected:
        'Certificate/webapp: certificate-issuer: spec.issuerRef names the ClusterIssuer "letsencrypt-production", which the environment does not render (it renders ClusterIssuer local-ca): fix spec.issuerRef.kind or spec.issuerRef.name',
    },
    {
      rule: 'network-policy',
      what: 'a namespace with workloads and no default-deny policy',
      objects: () => replacing('NetworkPolicy', undefined).concat(ALLOW_DNS()),
      expected:
        'Namespace/webapp: network-policy: namespace webapp runs workloads but has no default-deny NetworkPolicy: add one with podSelector {}, policyTypes [Ingress, Egress] and no rules',
    },
    {
      rule: 'network-policy',
      what: 'a namespace whose only policy denies everything',
      objects: () => replacing('NetworkPolicy', undefined).concat(DEFAULT_DENY()),
      expected: 'Namespace/webapp: network-policy: namespace webapp has no NetworkPolicy that allows traffic: add the allows its pods need',
    },
    {
      rule: 'network-policy',
      what: 'a "default deny" that denies only ingress',
      objects: () =>
        replacing('NetworkPolicy', undefined).concat(ALLOW_DNS(), networkPolicy('default-deny', { podSelector: {}, policyTypes: ['Ingress'] })),
      expected:
        'Namespace/webapp: network-policy: namespace webapp runs workloads but has no default-deny NetworkPolicy: add one with podSelector {}, policyTypes [Ingress, Egress] and no rules',
    },
    {
      rule: 'no-plaintext-secret',
      what: 'a Secret with stringData',
      objects: () => [
        ...goodEnvironment(),
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'webapp' }, stringData: { password: 'hunter2' } },
      ],
      expected:
        'Secret/db: no-plaintext-secret: holds data or stringData in plain text: remove the Secret from the rendered output and provide it SOPS-encrypted, referenced by name',
    },
    {
      rule: 'pull-secret',
      what: 'a workload pulling from the private registry without a pull secret',
      objects: () => withContainer(() => undefined, { imagePullSecrets: [] }),
      expected:
        'Deployment/webapp: pull-secret: pulls registry.example.com/platform/webapp:v1.2.3 from the private registry registry.example.com without imagePullSecrets: add the registry pull secret to the pod spec (or its ServiceAccount)',
    },
  ];

  it.each(badCases)('$rule: reports $what', ({ objects, expected }) => {
    expect(findings(objects())).toEqual([expected]);
  });

  it('has a failing case for every rule', () => {
    expect(new Set(badCases.map((entry) => entry.rule))).toEqual(new Set(RULE_NAMES));
  });

  // Good manifests that a too-eager rule would flag.
  const goodCases: { what: string; objects: () => ManifestObject[] }[] = [
    {
      what: "a Certificate naming a rendered ClusterIssuer, one naming its namespace's Issuer (no kind means Issuer) and one of an external issuer's group",
      objects: () => [
        ...goodEnvironment(),
        clusterIssuer('local-ca'),
        certificate({ group: 'cert-manager.io', kind: 'ClusterIssuer', name: 'local-ca' }),
        { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'team-ca', namespace: 'webapp' }, spec: { ca: { secretName: 'team-ca-root' } } },
        certificate({ name: 'team-ca' }, 'team'),
        certificate({ group: 'awspca.cert-manager.io', kind: 'AWSPCAClusterIssuer', name: 'pca' }, 'external'),
      ],
    },
    {
      what: 'a CronJob without probes (probes are for long-running containers)',
      objects: () => {
        const container = goodContainer('backup');
        delete container.readinessProbe;
        delete container.livenessProbe;
        delete container.ports;
        return [
          ...goodEnvironment(),
          {
            apiVersion: 'batch/v1',
            kind: 'CronJob',
            metadata: { name: 'backup', namespace: 'webapp' },
            spec: {
              schedule: '0 3 * * *',
              jobTemplate: {
                spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [container], imagePullSecrets: [{ name: 'registry-pull' }] } } },
              },
            },
          },
        ];
      },
    },
    {
      what: 'runAsNonRoot and seccomp set on the pod rather than the container',
      objects: () =>
        withContainer(
          (c) => {
            delete c.securityContext.runAsNonRoot;
            delete c.securityContext.seccompProfile;
          },
          { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } },
        ),
    },
    {
      what: 'a third-party image pinned by digest or version, and an application image with a suffix',
      objects: () => [
        ...goodEnvironment(),
        deployment('tools', [
          goodContainer('db', 'mcr.microsoft.com/mssql/server@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'),
          goodContainer('kafka', 'quay.io/strimzi/kafka:0.45.0-kafka-3.9.0'),
          goodContainer('migrate', 'registry.example.com/platform/webapp-migrations:v1.2.3'),
        ]),
      ],
    },
    {
      what: 'an ExternalName Service and a selectorless Service',
      objects: () => [
        ...goodEnvironment(),
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'webapp' }, spec: { type: 'ExternalName', externalName: 'db.example.com' } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'manual', namespace: 'webapp' }, spec: { ports: [{ port: 80 }] } },
      ],
    },
    {
      what: 'an HTTPRoute whose Services Flagger creates for a Canary',
      objects: () => [
        ...replacing('Service', undefined).filter((object) => object.kind !== 'HTTPRoute'),
        httpRoute('webapp-primary'),
        { ...httpRoute('webapp-canary'), metadata: { name: 'canary', namespace: 'webapp' } },
        canary(),
      ],
    },
    {
      what: 'a pull secret given through the ServiceAccount',
      objects: () => [
        ...withContainer(() => undefined, { imagePullSecrets: [], serviceAccountName: 'webapp' }),
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'webapp', namespace: 'webapp' }, imagePullSecrets: [{ name: 'registry-pull' }] },
      ],
    },
    {
      what: 'a Secret that names no data (provided in the cluster, referenced by name)',
      objects: () => [...goodEnvironment(), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls', namespace: 'webapp' }, type: 'kubernetes.io/tls' }],
    },
  ];

  it.each(goodCases)('pass $what', ({ objects }) => {
    expect(findings(objects())).toEqual([]);
  });
});

describe('exemptions', () => {
  const exempt = (annotations: Record<string, string>): ManifestObject[] =>
    withContainer((c) => delete c.securityContext.readOnlyRootFilesystem).map((object) =>
      object.kind === 'Deployment' ? { ...object, metadata: { ...object.metadata, annotations } } : object,
    );

  it('suppress the rule they name on their object and are listed with the reason', () => {
    const result = checkObjects(
      located(exempt({ 'policy.platform-gitops.io/exempt-read-only-root-filesystem': 'SQL Server writes to /var/opt/mssql' })),
      () => CONTEXT,
    );
    expect(result.findings).toEqual([]);
    expect(result.exemptions).toEqual([
      {
        environment: 'local',
        file: 'test.yaml',
        object: 'Deployment/webapp',
        rule: 'read-only-root-filesystem',
        reason: 'SQL Server writes to /var/opt/mssql',
        used: true,
      },
    ]);
  });

  it('report an empty reason, and then do not apply', () => {
    expect(findings(exempt({ 'policy.platform-gitops.io/exempt-read-only-root-filesystem': ' ' }))).toEqual([
      'Deployment/webapp: exemption: annotation policy.platform-gitops.io/exempt-read-only-root-filesystem has an empty reason: say why the object needs the exemption',
      expect.stringContaining('Deployment/webapp: read-only-root-filesystem: container "webapp"'),
    ]);
  });

  it('report an annotation that names no rule', () => {
    expect(findings([...goodEnvironment().slice(0, 3), { ...deployment(), metadata: { name: 'webapp', namespace: 'webapp', annotations: { 'policy.platform-gitops.io/exempt-schema': 'x' } } }, ...goodEnvironment().slice(4)])).toEqual([
      expect.stringMatching(/^Deployment\/webapp: exemption: annotation policy.platform-gitops.io\/exempt-schema names no rule: use one of probes, resources, /),
    ]);
  });

  it('do not cover another rule on the same object', () => {
    const objects = exempt({ 'policy.platform-gitops.io/exempt-probes': 'a batch worker' });
    expect(findings(objects)).toEqual([expect.stringContaining('read-only-root-filesystem')]);
    expect(checkObjects(located(objects), () => CONTEXT).exemptions[0]?.used).toBe(false);
  });
});

describe('validateObject', () => {
  it('returns nothing for a good workload on its own', () => {
    expect(validateObject(deployment(), CONTEXT)).toEqual([]);
  });

  it('returns schema problems and object rules as "<rule>: <message>" lines', () => {
    const bad = deployment('webapp', [{ ...goodContainer(), image: 'busybox' }]);
    (bad.spec as Record<string, any>).replcas = 3;
    expect(validateObject(bad, CONTEXT)).toEqual([
      'schema: spec.replcas: unknown field: the apps/v1 Deployment schema has no such field (misspelt or misplaced?)',
      'image-tag: container "webapp": image busybox has no tag: pin a version tag',
    ]);
  });
});
