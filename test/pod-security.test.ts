import { describe, expect, it } from 'vitest';
import { BROKER } from '../src/contract/contract';
import { STRIMZI } from '../src/contract/upstream';
import { ENVIRONMENT_ORDER, committedObjects, environmentFilesCopy, environmentsOf, findObject, projectEnvironments, renderToObjects, type K8sObject } from './support';

// Convergence item 7. Pod Security Admission reads the namespace's
// `pod-security.kubernetes.io/enforce` label; a namespace without one admits anything
// (https://kubernetes.io/docs/concepts/security/pod-security-admission/). Namespaces Argo CD
// creates get their labels from `syncPolicy.managedNamespaceMetadata` (argo-cd v3.5.1
// docs/user-guide/sync-options.md, "Namespace Auto-Creation").

const ENFORCE = 'pod-security.kubernetes.io/enforce';
const environments = projectEnvironments();

/** Every field of the restricted profile a container or its pod must set. */
function passesRestricted(container: Record<string, any>, pod: Record<string, any> = {}): boolean {
  const context = container.securityContext ?? {};
  return (
    (context.runAsNonRoot ?? pod.runAsNonRoot) === true &&
    context.allowPrivilegeEscalation === false &&
    JSON.stringify(context.capabilities?.drop) === JSON.stringify(['ALL']) &&
    (context.seccompProfile?.type ?? pod.seccompProfile?.type) === 'RuntimeDefault'
  );
}

describe.each(ENVIRONMENT_ORDER)('pod security in %s', (environment) => {
  const objects = committedObjects(environment);
  const applications = objects.filter((o) => o.kind === 'Application');

  it('labels every namespace the platform creates with an enforce level, restricted unless an exception says why', () => {
    const created = new Map<string, Record<string, string>>();
    for (const namespace of objects.filter((o) => o.kind === 'Namespace')) created.set(namespace.metadata.name, namespace.metadata.labels ?? {});
    for (const app of applications.filter((a) => (a.spec.syncPolicy.syncOptions ?? []).includes('CreateNamespace=true'))) {
      const labels = app.spec.syncPolicy.managedNamespaceMetadata?.labels;
      expect(labels?.[ENFORCE], `${app.metadata.name} creates ${app.spec.destination.namespace}`).toBeDefined();
      const before = created.get(app.spec.destination.namespace);
      // Two Applications creating one namespace must agree, or they would relabel it in turn.
      if (before !== undefined) expect(labels, app.metadata.name).toMatchObject({ [ENFORCE]: before[ENFORCE] });
      created.set(app.spec.destination.namespace, labels);
    }
    expect([...created.keys()].sort()).toEqual(
      expect.arrayContaining(['cert-manager', 'envoy-gateway-system', 'flagger-system', 'kafka', 'monitoring', 'webapp', 'database']),
    );
    for (const [namespace, labels] of created) {
      expect(labels[ENFORCE], namespace).toBe(namespace === 'monitoring' ? 'privileged' : 'restricted');
      expect(labels['pod-security.kubernetes.io/warn'], namespace).toBe('restricted');
    }
  });

  it('has the Strimzi operator give Kafka and entity-operator pods the restricted profile', () => {
    // Strimzi uses its baseline provider unless STRIMZI_POD_SECURITY_PROVIDER_CLASS says
    // `restricted` (strimzi-kafka-operator 1.2.0
    // documentation/modules/configuring/con-config-security-providers.adoc).
    const values = findObject(applications, 'Application', 'strimzi-kafka-operator').spec.source.helm.valuesObject;
    expect(values.extraEnvs).toContainEqual({ name: 'STRIMZI_POD_SECURITY_PROVIDER_CLASS', value: 'restricted' });
  });

  it('gives both entity operators requests and limits', () => {
    const kafka = findObject(objects, 'Kafka', BROKER.clusterName);
    for (const operator of ['topicOperator', 'userOperator']) {
      const { requests, limits } = kafka.spec.entityOperator[operator].resources;
      expect(Object.keys(requests).sort(), operator).toEqual(['cpu', 'memory']);
      expect(Object.keys(limits).sort(), operator).toEqual(['cpu', 'memory']);
    }
  });

  it('runs Flagger and its load tester with container security contexts that pass restricted', () => {
    for (const name of ['flagger', 'flagger-loadtester']) {
      const { securityContext } = findObject(applications, 'Application', name).spec.source.helm.valuesObject;
      expect(securityContext.enabled, name).toBe(true);
      expect(passesRestricted({ securityContext: securityContext.context }), name).toBe(true);
    }
  });

  it('denies all traffic in the broker namespace, then lets Strimzi reach DNS, the API server and the brokers', () => {
    const namespace = environments[environment]!.broker.namespace;
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === namespace);
    expect(policies.map((p) => p.metadata.name)).toEqual(['default-deny', 'allow-egress-to-dns', 'allow-egress-to-api-server', 'allow-egress-to-brokers']);
    expect(findObject(policies, 'NetworkPolicy', 'default-deny').spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    // The API server is outside every namespace: a NetworkPolicy names it by address. No
    // environment names its cluster's, so the allow names the private networks (RFC 1918,
    // RFC 4193), never any address: an operator's 443 does not reach the internet.
    expect(findObject(policies, 'NetworkPolicy', 'allow-egress-to-api-server').spec.egress).toEqual([
      {
        to: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'].map((cidr) => ({ ipBlock: { cidr } })),
        ports: [{ port: 443, protocol: 'TCP' }, { port: 6443, protocol: 'TCP' }],
      },
    ]);
    // Ingress to the brokers is Strimzi's own NetworkPolicy; operators and brokers reach
    // the control plane, replication and agent ports (strimzi-kafka-operator 1.2.0
    // cluster-operator/src/main/java/io/strimzi/operator/cluster/model/KafkaCluster.java).
    expect(findObject(policies, 'NetworkPolicy', 'allow-egress-to-brokers').spec.egress).toEqual([
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } }, podSelector: { matchLabels: { [STRIMZI.clusterLabel]: BROKER.clusterName } } }],
        ports: [9090, 9091, 8443].map((port) => ({ port, protocol: 'TCP' })),
      },
    ]);
  });

  it('lets an environment name its API server\'s addresses, and names them in every API server allow', () => {
    const files = environmentFilesCopy();
    files[environment].environment.infrastructure.network = { apiServerCidrs: ['172.18.0.2/32', 'fd00:10::2/128'] };
    const env = environmentsOf(files).find((candidate) => candidate.name === environment)!;
    const rendered = [...renderToObjects(env).values()].flat();
    const allow = findObject(rendered.filter((o) => o.metadata.namespace === env.broker.namespace), 'NetworkPolicy', 'allow-egress-to-api-server');
    expect(allow.spec.egress[0].to).toEqual([{ ipBlock: { cidr: '172.18.0.2/32' } }, { ipBlock: { cidr: 'fd00:10::2/128' } }]);
    const apiServerAllows = objects.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'allow-egress-to-api-server');
    expect(apiServerAllows.length).toBeGreaterThan(0);
    for (const policy of apiServerAllows) {
      for (const rule of policy.spec.egress) expect(rule.to, `${policy.metadata.namespace}/${policy.metadata.name}`).toEqual(expect.arrayContaining([{ ipBlock: expect.anything() }]));
    }
  });

  it('refuses an API server address that is not a CIDR', () => {
    const files = environmentFilesCopy();
    files[environment].environment.infrastructure.network = { apiServerCidrs: ['kubernetes.default'] };
    expect(() => environmentsOf(files)).toThrow(/infrastructure\.network\.apiServerCidrs\[0\] "kubernetes\.default" must be an IPv4 or IPv6 address range in CIDR notation/);
  });

  it('keeps the restricted profile on every pod the platform renders itself', () => {
    const pods = objects.flatMap((o: K8sObject) => {
      const template = o.spec?.jobTemplate?.spec?.template ?? o.spec?.template;
      return template?.spec?.containers ? [{ name: `${o.kind}/${o.metadata.name}`, spec: template.spec }] : [];
    });
    expect(pods.length).toBeGreaterThan(0);
    for (const pod of pods) {
      for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
        expect(passesRestricted(container, pod.spec.securityContext), `${pod.name} ${container.name}`).toBe(true);
      }
    }
  });
});
