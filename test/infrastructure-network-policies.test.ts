import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositorySshPort } from '../src/environments/platform';
import { validateAgainstSchema } from '../src/validation/schemas';
import { DIST, ENVIRONMENT_ORDER, ROOT, projectEnvironments, readManifests } from './support';
import { parse } from 'yaml';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath } from '../src/infrastructure/releases';

// Default deny in every namespace the platform creates or installs into, then what each
// component needs. The pods' labels and ports are upstream's (each cited where the platform
// encodes it, src/contract/upstream.ts); a NetworkPolicy applies to a pod's whole network
// namespace, so a sidecar (the sops plugin beside Argo CD's repository server) has exactly
// its pod's allows (https://kubernetes.io/docs/concepts/services-networking/network-policies/).

type Labels = Record<string, string>;

/** Whether a pod with `labels` is selected by a LabelSelector (matchLabels, In, NotIn, Exists). */
function selects(selector: any, labels: Labels): boolean {
  const byLabels = Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector?.matchExpressions ?? []).every((e: any) => {
    if (e.operator === 'In') return e.values.includes(labels[e.key]);
    if (e.operator === 'NotIn') return !e.values.includes(labels[e.key]);
    if (e.operator === 'Exists') return e.key in labels;
    return !(e.key in labels);
  });
  return byLabels && byExpressions;
}

/** A pod, as the policies see it. */
interface Pod {
  readonly namespace: string;
  readonly labels: Labels;
}

/** Whether a rule's peer list admits `pod` (absent: every address, so every pod). */
function peerAdmits(peers: any[] | undefined, pod: Pod): boolean {
  if (peers === undefined) return true;
  return peers.some(
    (peer) =>
      peer.ipBlock === undefined &&
      selects(peer.namespaceSelector ?? { matchLabels: { 'kubernetes.io/metadata.name': 'never' } }, { 'kubernetes.io/metadata.name': pod.namespace }) &&
      selects(peer.podSelector ?? {}, pod.labels),
  );
}

const portsOf = (rule: any): string[] => (rule.ports ?? []).map((p: any) => `${p.protocol ?? 'TCP'}/${p.port}`);

describe.each(ENVIRONMENT_ORDER)('NetworkPolicies of the infrastructure in %s', (environment) => {
  const files = readManifests(path.join(DIST, environment));
  const objects = [...files.values()].flat();
  const env = projectEnvironments()[environment]!;
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const policiesIn = (namespace: string) => policies.filter((p) => p.metadata.namespace === namespace);
  const INFRASTRUCTURE = ['argocd', 'cert-manager', 'envoy-gateway-system', 'flagger-system', 'monitoring'];

  /** The ingress rules (with their policy) that apply to `pod`. */
  const ingressTo = (pod: Pod) =>
    policiesIn(pod.namespace)
      .filter((p) => p.spec.policyTypes.includes('Ingress') && selects(p.spec.podSelector, pod.labels))
      .flatMap((p) => (p.spec.ingress ?? []).map((rule: any) => ({ policy: p.metadata.name, rule })));
  /** The egress rules (with their policy) that apply to `pod`. */
  const egressOf = (pod: Pod) =>
    policiesIn(pod.namespace)
      .filter((p) => p.spec.policyTypes.includes('Egress') && selects(p.spec.podSelector, pod.labels))
      .flatMap((p) => (p.spec.egress ?? []).map((rule: any) => ({ policy: p.metadata.name, rule })));
  /** Whether `from` may open `port` on `to`, by both sides' policies. */
  const reaches = (from: Pod, to: Pod, port: string): boolean =>
    egressOf(from).some(({ rule }) => portsOf(rule).includes(port) && peerAdmits(rule.to, to)) &&
    ingressTo(to).some(({ rule }) => portsOf(rule).includes(port) && peerAdmits(rule.from, from));

  // argo-helm argo-cd chart (charts/argo-cd/templates/_common.tpl `argo-cd.selectorLabels`,
  // values.yaml `nameOverride: argocd` and each component's `name`).
  const argo = (component: string): Pod => ({ namespace: 'argocd', labels: { 'app.kubernetes.io/name': `argocd-${component}`, 'app.kubernetes.io/instance': 'argocd' } });
  const repoServer = argo('repo-server');
  // The Redis Argo CD's clients reach: upstream's single-replica one, or HAProxy in front of Redis with Sentinel.
  const highAvailability = env.infrastructure.argoCd.highAvailability;
  const redisFront = highAvailability ? 'redis-ha-haproxy' : 'redis';

  it('denies every connection in each namespace the platform creates or installs into, before any release', () => {
    const used = new Set(['argocd', ...objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)]);
    for (const namespace of used) {
      const deny = policiesIn(namespace).filter((p) => p.metadata.name === 'default-deny');
      expect(deny.map((p) => p.spec), namespace).toEqual([{ podSelector: {}, policyTypes: ['Ingress', 'Egress'] }]);
    }
    const infrastructure = files.get('infrastructure.yaml')!;
    for (const namespace of INFRASTRUCTURE) {
      const own = infrastructure.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === namespace);
      expect(own.length, namespace).toBeGreaterThan(1);
      expect(policiesIn(namespace), `${namespace}: only the infrastructure chart's`).toEqual(own);
      for (const policy of own) {
        // With the Namespaces, before the first release (wave 0).
        expect(policy.metadata.annotations?.['argocd.argoproj.io/sync-wave'], policy.metadata.name).toBe('-1');
        expect(validateAgainstSchema(policy), `${namespace}/${policy.metadata.name}`).toEqual([]);
      }
    }
  });

  it('lets every pod of the infrastructure resolve names, and nothing else unless it is named', () => {
    const dns = { namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } };
    for (const namespace of INFRASTRUCTURE) {
      const anyPod = { namespace, labels: { 'some-pod': 'x' } };
      const egress = egressOf(anyPod);
      expect(peerAdmits(egress[0]!.rule.to, dns) && portsOf(egress[0]!.rule).join() === 'UDP/53,TCP/53', namespace).toBe(true);
      // Every pod of cert-manager's namespace is one of its controllers, and every pod of Envoy
      // Gateway's but the proxies is its controller or its certgen Job: those reach the API server.
      const controllersOnly = ['cert-manager', 'envoy-gateway-system'].includes(namespace);
      expect(egress.map(({ policy }) => policy), namespace).toEqual(controllersOnly ? ['allow-egress-to-dns', 'allow-egress-to-api-server'] : ['allow-egress-to-dns']);
      // Prometheus scrapes what runs beside it.
      expect(ingressTo(anyPod).map(({ policy }) => policy), namespace).toEqual(namespace === 'monitoring' ? ['allow-ingress-from-prometheus'] : []);
    }
  });

  // argoproj/argo-cd#12084: the repository server authenticates no caller, and here it runs
  // the secret-decrypting sops plugin; only the controller and the API server call it.
  it("lets only Argo CD's application controller and server reach the repository server (8081)", () => {
    const allowed = ingressTo(repoServer);
    expect(allowed.map(({ rule }) => portsOf(rule))).toEqual([['TCP/8081']]);
    for (const component of ['application-controller', 'server']) expect(reaches(argo(component), repoServer, 'TCP/8081'), component).toBe(true);
    for (const component of ['applicationset-controller', 'notifications-controller', 'redis', 'dex-server', 'redis-secret-init']) {
      expect(reaches(argo(component), repoServer, 'TCP/8081'), component).toBe(false);
    }
    for (const namespace of ['monitoring', env.applications[0]!.namespace, 'kube-system']) {
      expect(reaches({ namespace, labels: repoServer.labels }, repoServer, 'TCP/8081'), namespace).toBe(false);
      expect(ingressTo(repoServer).some(({ rule }) => peerAdmits(rule.from, { namespace, labels: { 'app.kubernetes.io/name': 'argocd-server' } })), namespace).toBe(false);
    }
  });

  it("leaves out upstream's own NetworkPolicies: they would let every namespace and the other controllers reach the repository server", () => {
    // argo-cd v3.6.1 manifests/base/repo-server/argocd-repo-server-network-policy.yaml admits
    // 8081 from the notifications and ApplicationSet controllers and the metrics port from
    // every namespace, and allows add up: the kustomization deletes every NetworkPolicy of
    // upstream's (built with the real kustomize: test/argo-cd-kustomization.test.ts).
    const kustomization = parse(fs.readFileSync(path.join(ROOT, releaseKustomizationPath(environment, INFRASTRUCTURE_RELEASES.argoCd), 'kustomization.yaml'), 'utf8'));
    const deletions = kustomization.patches.filter((patch: any) => patch.patch !== undefined && parse(patch.patch).$patch === 'delete');
    expect(deletions.map((patch: any) => patch.target)).toContainEqual({ kind: 'NetworkPolicy' });
  });

  it('gives the repository server, and so the sops plugin beside it, no egress but DNS, Redis and the repositories', () => {
    const egress = egressOf(repoServer).map(({ policy, rule }) => ({ policy, ports: portsOf(rule), to: rule.to }));
    expect(egress).toEqual([
      { policy: 'allow-egress-to-dns', ports: ['UDP/53', 'TCP/53'], to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }] },
      { policy: 'allow-egress-to-redis', ports: ['TCP/6379'], to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'argocd' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': `argocd-${redisFront}` } } }] },
      // git over SSH (the repository URL's port) and the Helm repositories over HTTPS, outside the cluster.
      { policy: 'allow-egress-to-repositories', ports: ['TCP/22', 'TCP/443'], to: undefined },
    ]);
    // Not the API server (it reads nothing from the cluster), not 6443, nothing else.
    expect(egress.flatMap((e) => e.ports)).not.toContain('TCP/6443');
  });

  it('lets the Argo CD controllers reach the API server by address, Redis only from its clients', () => {
    // Redis' front pod writes Redis' password Secret in an init container (ARGO_CD in src/contract/upstream.ts).
    for (const component of ['application-controller', 'server', 'applicationset-controller', 'notifications-controller', redisFront]) {
      const apiServer = egressOf(argo(component)).filter(({ policy }) => policy === 'allow-egress-to-api-server');
      expect(apiServer.map(({ rule }) => rule.to.every((peer: any) => peer.ipBlock !== undefined)), component).toEqual([true]);
    }
    expect(egressOf(argo(redisFront)).map(({ policy }) => policy).sort()).toEqual(['allow-egress-to-api-server', 'allow-egress-to-dns', ...(highAvailability ? ['allow-egress-to-redis-ha'] : [])]);
    for (const component of ['application-controller', 'server', 'repo-server']) expect(reaches(argo(component), argo(redisFront), 'TCP/6379'), component).toBe(true);
    for (const component of ['applicationset-controller', 'notifications-controller']) expect(reaches(argo(component), argo(redisFront), 'TCP/6379'), component).toBe(false);
    if (highAvailability) {
      // Redis with Sentinel: HAProxy and the servers reach the servers (6379, 26379), the clients only HAProxy.
      for (const port of ['TCP/6379', 'TCP/26379']) {
        expect(reaches(argo('redis-ha-haproxy'), argo('redis-ha'), port), port).toBe(true);
        expect(reaches(argo('redis-ha'), argo('redis-ha'), port), port).toBe(true);
        expect(reaches(argo('repo-server'), argo('redis-ha'), port), port).toBe(false);
      }
    }
  });

  it('lets the API server call the admission webhooks, and no pod', () => {
    const apiServerPeers = (pod: Pod, port: string) => ingressTo(pod).filter(({ rule }) => portsOf(rule).includes(port)).map(({ rule }) => rule.from);
    const cidrs = env.infrastructure.network.apiServerCidrs.map((cidr) => ({ ipBlock: { cidr } }));
    // cert-manager v1.21 chart: webhook pods `app.kubernetes.io/component: webhook`, securePort 10250.
    expect(apiServerPeers({ namespace: 'cert-manager', labels: { 'app.kubernetes.io/name': 'webhook', 'app.kubernetes.io/component': 'webhook' } }, 'TCP/10250')).toEqual([cidrs]);
    // kube-prometheus-stack: the operator serves its admission webhooks on 10250 (prometheusOperator.tls.internalPort).
    expect(apiServerPeers({ namespace: 'monitoring', labels: { app: 'kube-prometheus-stack-operator', release: 'kube-prometheus-stack' } }, 'TCP/10250')).toEqual(
      expect.arrayContaining([cidrs]),
    );
    // Envoy Gateway v1.9.0: the topology injector webhook on 9443 of the controller.
    expect(apiServerPeers({ namespace: 'envoy-gateway-system', labels: { 'control-plane': 'envoy-gateway', 'app.kubernetes.io/name': 'gateway-helm' } }, 'TCP/9443')).toEqual([cidrs]);
  });

  it("opens the Envoy proxies' listener ports to anyone, and only them", () => {
    // Envoy Gateway v1.9.0 shifts a privileged listener port by 10000 in the container
    // (internal/gatewayapi/listener.go, translator.go `wellKnownPortShift`).
    const proxy = { namespace: 'envoy-gateway-system', labels: { 'app.kubernetes.io/name': 'envoy', 'app.kubernetes.io/component': 'proxy', 'gateway.envoyproxy.io/owning-gateway-name': 'x' } };
    const open = ingressTo(proxy).filter(({ rule }) => rule.from === undefined);
    expect(open.map(({ rule }) => portsOf(rule))).toEqual([['TCP/10080', 'TCP/10443']]);
    const controller = { namespace: 'envoy-gateway-system', labels: { 'control-plane': 'envoy-gateway' } };
    expect(reaches(proxy, controller, 'TCP/18000')).toBe(true);
    for (const app of env.applications) {
      // The proxies of the application's own Gateway (the application's allows name them).
      const own = { ...proxy, labels: { ...proxy.labels, 'gateway.envoyproxy.io/owning-gateway-name': app.name, 'gateway.envoyproxy.io/owning-gateway-namespace': app.namespace } };
      expect(reaches(own, { namespace: app.namespace, labels: { app: app.name } }, 'TCP/8080'), app.name).toBe(true);
      expect(reaches(own, { namespace: app.namespace, labels: { 'acme.cert-manager.io/http01-solver': 'true' } }, 'TCP/8089'), app.name).toBe(true);
    }
    expect(egressOf(proxy).map(({ policy }) => policy)).not.toContain('allow-egress-to-api-server');
  });

  it('lets Flagger read Prometheus and call its load tester, and the load tester reach the application through the Gateway', () => {
    const flagger = { namespace: 'flagger-system', labels: { 'app.kubernetes.io/name': 'flagger', 'app.kubernetes.io/instance': 'flagger' } };
    // The chart's name, not the release's full name (charts/loadtester/templates/_helpers.tpl `loadtester.name`).
    const loadTester = { namespace: 'flagger-system', labels: { app: 'loadtester', 'app.kubernetes.io/name': 'loadtester' } };
    const prometheus = { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus', 'operator.prometheus.io/name': 'kube-prometheus-stack-prometheus' } };
    expect(reaches(flagger, prometheus, 'TCP/9090')).toBe(true);
    expect(reaches(flagger, loadTester, 'TCP/8080')).toBe(true);
    expect(reaches(loadTester, prometheus, 'TCP/9090')).toBe(false);
    const proxy = { namespace: 'envoy-gateway-system', labels: { 'app.kubernetes.io/name': 'envoy', 'app.kubernetes.io/component': 'proxy' } };
    expect(reaches(loadTester, proxy, 'TCP/10443')).toBe(true);
    expect(egressOf(loadTester).some(({ rule }) => rule.to === undefined && portsOf(rule).join() === 'TCP/443')).toBe(true);
  });

  it('lets Prometheus scrape the stack, the nodes and the applications, and the Alertmanagers reach each other and their receivers', () => {
    const prometheus = { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } };
    const alertmanager = { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'alertmanager' } };
    expect(reaches(prometheus, alertmanager, 'TCP/9093')).toBe(true);
    expect(reaches(prometheus, { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'kube-state-metrics' } }, 'TCP/8080')).toBe(true);
    expect(reaches(prometheus, { namespace: 'monitoring', labels: { app: 'kube-prometheus-stack-operator' } }, 'TCP/10250')).toBe(true);
    for (const port of ['TCP/9094', 'UDP/9094']) expect(reaches(alertmanager, alertmanager, port), port).toBe(true);
    for (const app of env.applications) expect(reaches(prometheus, { namespace: app.namespace, labels: { app: app.name } }, 'TCP/8080'), app.name).toBe(true);
    // Kubelets (10250) and node exporters (9100, host network) are node addresses.
    const nodes = egressOf(prometheus).filter(({ policy }) => policy === 'allow-egress-to-nodes');
    expect(nodes.map(({ rule }) => [portsOf(rule), rule.to.map((peer: any) => peer.ipBlock.cidr)])).toEqual([[['TCP/10250', 'TCP/9100'], env.infrastructure.network.nodeCidrs]]);
    expect(egressOf(alertmanager).some(({ rule }) => rule.to === undefined && portsOf(rule).join() === 'TCP/443')).toBe(true);
    expect(reaches(alertmanager, { namespace: env.applications[0]!.namespace, labels: { app: env.applications[0]!.name } }, 'TCP/8080')).toBe(false);
  });

  it('lets cert-manager reach the API server, and the ACME server and the challenge only where an ACME issuer is used', () => {
    const controller = { namespace: 'cert-manager', labels: { 'app.kubernetes.io/name': 'cert-manager', 'app.kubernetes.io/component': 'controller' } };
    const policiesOfController = egressOf(controller).map(({ policy }) => policy);
    expect(policiesOfController).toContain('allow-egress-to-api-server');
    if (env.infrastructure.issuer.type === 'acme') {
      expect(egressOf(controller).some(({ rule }) => rule.to === undefined && portsOf(rule).join() === 'TCP/80,TCP/443')).toBe(true);
    } else {
      expect(egressOf(controller).filter(({ rule }) => rule.to === undefined)).toEqual([]);
    }
  });
});

describe('the port the repository server reaches git on', () => {
  it('is the SSH URL\'s port, or 22', () => {
    expect(repositorySshPort('git@github.com:example/platform-gitops.git')).toBe(22);
    expect(repositorySshPort('ssh://git@git.example.com/example/platform-gitops.git')).toBe(22);
    expect(repositorySshPort('ssh://git@git.example.com:2222/example/platform-gitops.git')).toBe(2222);
  });
});
