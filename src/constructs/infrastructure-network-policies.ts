import { Construct } from 'constructs';
import { FLAGGER_LOAD_TESTER } from '../contract/choices';
import { METRICS, PORTS } from '../contract/contract';
import { ACME_HTTP01_SOLVER, ARGO_CD, CERT_MANAGER, ENVOY_GATEWAY, FLAGGER, GATEWAY, KUBE_PROMETHEUS_STACK } from '../contract/upstream';
import { DNS_PEER, type NetworkPeer, NetworkPolicies, apiServerPeer } from './network-policies';

/** The namespaces of the infrastructure the policies guard. */
export interface InfrastructureNamespaces {
  /** Argo CD's. */
  readonly controller: string;
  /** cert-manager's. */
  readonly certificateManager: string;
  /** Envoy Gateway's and its proxies'. */
  readonly ingressController: string;
  /** kube-prometheus-stack's. */
  readonly monitoringStack: string;
  /** Flagger's and its load tester's. */
  readonly progressiveDelivery: string;
}

export interface InfrastructureNetworkPoliciesProps {
  readonly namespaces: InfrastructureNamespaces;
  /** Addresses of the API server (the environment's `infrastructure.network.apiServerCidrs`). */
  readonly apiServerCidrs: readonly string[];
  /** Addresses of the nodes (the environment's `infrastructure.network.nodeCidrs`). */
  readonly nodeCidrs: readonly string[];
  /** The port git reaches this repository on (SSH). */
  readonly repositoryPort: number;
  /** The applications' namespaces: backends of the Gateway's proxies, scraped by Prometheus. */
  readonly applicationNamespaces: readonly string[];
  /** The environment's issuer is an ACME one: cert-manager calls the ACME server and checks the HTTP-01 challenge. */
  readonly acmeIssuer: boolean;
  /**
   * Argo CD runs upstream's high-availability install (Redis with Sentinel behind HAProxy).
   * @default false
   */
  readonly argoCdHighAvailability?: boolean;
  /**
   * Annotations of every NetworkPolicy (the sync wave).
   * @default - none
   */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** Every address on these ports: a peer outside the cluster, reached by name (a repository, the ACME server, a receiver). */
const anywhere = (name: string, ports: readonly number[], local: Pick<NetworkPeer, 'localPodLabels' | 'localPodsWhere'>): NetworkPeer => ({
  name,
  ports: ports.map((port) => ({ port })),
  ...local,
});

/**
 * Default deny in each namespace of the infrastructure, then one allow per connection its
 * components need (src/contract/upstream.ts has each component's labels and ports, with their
 * upstream source). In every namespace every pod may resolve names (DNS); beyond that:
 *
 * - Argo CD: the repository server, which authenticates no caller (argoproj/argo-cd#12084)
 *   and here runs the secret-decrypting sops plugin, is reachable on 8081 from the
 *   application controller and the API server (`argocd-server`) only; Redis from those three;
 *   the controllers reach the API server; the repository server reaches Redis and the
 *   repositories (git over SSH, Helm over HTTPS, outside the cluster), nothing else: the sops
 *   sidecar shares its pod's network, so it has exactly these.
 * - cert-manager: every component reaches the API server, which calls the webhook; the
 *   controller reaches the ACME server and checks the HTTP-01 challenge through the Gateway,
 *   where an ACME issuer is used.
 * - Envoy Gateway: the proxies take traffic from anywhere on their listeners' container
 *   ports and reach the applications' pods (8080) and HTTP-01 solvers (8089) and the
 *   controller's xDS; the controller (and its certgen Job: every pod but the proxies)
 *   reaches the API server, which calls its webhook.
 * - the monitoring stack: Prometheus scrapes the stack's pods, the kubelets and node exporters
 *   (node addresses) and the applications' pods; the Alertmanagers form their cluster and
 *   call their receivers (HTTPS, outside the cluster); the operator, kube-state-metrics and
 *   Prometheus reach the API server, which calls the operator's webhooks; Flagger reads
 *   Prometheus.
 * - Flagger reaches the API server, Prometheus and its load tester; the load tester reaches
 *   the application's public address (HTTPS), through the proxies when the cluster routes it
 *   inside.
 */
export class InfrastructureNetworkPolicies extends Construct {
  /** Each namespace's policies, in the order of InfrastructureNamespaces. */
  public readonly policies: readonly NetworkPolicies[];

  constructor(scope: Construct, id: string, props: InfrastructureNetworkPoliciesProps) {
    super(scope, id);
    const ns = props.namespaces;
    const apiServer = apiServerPeer(props.apiServerCidrs);
    const fromApiServer = (name: string, port: number, local: Pick<NetworkPeer, 'localPodLabels' | 'localPodsWhere'>): NetworkPeer => ({
      name,
      ipBlocks: props.apiServerCidrs,
      ports: [{ port }],
      ...local,
    });
    const common = { annotations: props.annotations };

    // Argo CD.
    const argo = (...components: string[]) => ({ key: ARGO_CD.nameLabel, in: components });
    const { applicationController, server, repoServer, redis, applicationSetController, notificationsController, redisHa, redisHaProxy } = ARGO_CD.components;
    // The Redis the clients reach: the single-replica install's, or HAProxy in front of Redis with Sentinel.
    const redisFront = props.argoCdHighAvailability ? redisHaProxy : redis;
    const redisHaPorts = [{ port: ARGO_CD.ports.redis }, { port: ARGO_CD.ports.redisSentinel }];
    const redisHaPeers = props.argoCdHighAvailability ? [{ name: 'redis-ha', namespace: ns.controller, podsWhere: argo(redisHaProxy, redisHa), localPodLabels: { [ARGO_CD.nameLabel]: redisHa }, ports: redisHaPorts }] : [];
    const argocd = new NetworkPolicies(this, 'argocd', {
      ...common,
      namespace: ns.controller,
      ingress: [
        {
          name: 'repo-server-clients',
          namespace: ns.controller,
          podsWhere: argo(applicationController, server),
          localPodLabels: { [ARGO_CD.nameLabel]: repoServer },
          ports: [{ port: ARGO_CD.ports.repoServer }],
        },
        {
          name: 'redis-clients',
          namespace: ns.controller,
          podsWhere: argo(applicationController, server, repoServer),
          localPodLabels: { [ARGO_CD.nameLabel]: redisFront },
          ports: [{ port: ARGO_CD.ports.redis }],
        },
        ...redisHaPeers,
      ],
      egress: [
        DNS_PEER,
        // Redis' front pod writes its password Secret in an init container (ARGO_CD).
        { ...apiServer, localPodsWhere: argo(applicationController, server, applicationSetController, notificationsController, redisFront) },
        {
          name: 'repo-server',
          namespace: ns.controller,
          podLabels: { [ARGO_CD.nameLabel]: repoServer },
          localPodsWhere: argo(applicationController, server),
          ports: [{ port: ARGO_CD.ports.repoServer }],
        },
        {
          name: 'redis',
          namespace: ns.controller,
          podLabels: { [ARGO_CD.nameLabel]: redisFront },
          localPodsWhere: argo(applicationController, server, repoServer),
          ports: [{ port: ARGO_CD.ports.redis }],
        },
        ...redisHaPeers.map(({ podsWhere, localPodLabels, ...peer }) => ({ ...peer, podLabels: localPodLabels, localPodsWhere: podsWhere })),
        // The repositories are outside the cluster and addressed by name, which a NetworkPolicy cannot name.
        anywhere('repositories', [props.repositoryPort, PORTS.https], { localPodLabels: { [ARGO_CD.nameLabel]: repoServer } }),
      ],
    });

    // cert-manager.
    const controller = { localPodLabels: { [CERT_MANAGER.componentLabel]: CERT_MANAGER.components.controller } };
    const certManager = new NetworkPolicies(this, 'cert-manager', {
      ...common,
      namespace: ns.certificateManager,
      ingress: [fromApiServer('api-server', CERT_MANAGER.webhookPort, { localPodLabels: { [CERT_MANAGER.componentLabel]: CERT_MANAGER.components.webhook } })],
      egress: [
        DNS_PEER,
        apiServer,
        ...(props.acmeIssuer
          ? [
              // The ACME directory (HTTPS) and the HTTP-01 self-check of the application's public address (HTTP).
              anywhere('acme', [PORTS.http, PORTS.https], controller),
              // The same check, when the cluster routes the Gateway's address to its proxies inside.
              { name: 'gateway', namespace: ns.ingressController, podLabels: GATEWAY.proxyPodLabels, ports: [{ port: ENVOY_GATEWAY.proxyContainerPort(PORTS.http) }], ...controller },
            ]
          : []),
      ],
    });

    // Envoy Gateway and its proxies.
    const proxies = { localPodLabels: GATEWAY.proxyPodLabels };
    const listenerPorts = [PORTS.http, PORTS.https].map((port) => ({ port: ENVOY_GATEWAY.proxyContainerPort(port) }));
    const gateway = new NetworkPolicies(this, 'envoy-gateway', {
      ...common,
      namespace: ns.ingressController,
      ingress: [
        // Anyone: the Gateway is the platform's public entry (1.3.4).
        { name: 'anywhere', ports: listenerPorts, ...proxies },
        { name: 'proxies', namespace: ns.ingressController, podLabels: GATEWAY.proxyPodLabels, localPodLabels: ENVOY_GATEWAY.controllerPodLabels, ports: [{ port: ENVOY_GATEWAY.xdsPort }] },
        fromApiServer('api-server', ENVOY_GATEWAY.webhookPort, { localPodLabels: ENVOY_GATEWAY.controllerPodLabels }),
      ],
      egress: [
        DNS_PEER,
        // Every pod but the proxies, which face the internet: the controller and its certgen Job.
        { ...apiServer, localPodsWhere: { key: 'app.kubernetes.io/component', notIn: [GATEWAY.proxyPodLabels['app.kubernetes.io/component']] } },
        { name: 'envoy-gateway', namespace: ns.ingressController, podLabels: ENVOY_GATEWAY.controllerPodLabels, ports: [{ port: ENVOY_GATEWAY.xdsPort }], ...proxies },
        ...props.applicationNamespaces.map((namespace) => ({
          name: `backend-${namespace}`,
          namespace,
          ports: [{ port: PORTS.application }, { port: ACME_HTTP01_SOLVER.port }],
          ...proxies,
        })),
      ],
    });

    // The monitoring stack.
    const k = KUBE_PROMETHEUS_STACK;
    const prometheusPods = { [k.nameLabel]: k.prometheus };
    const alertmanagerPods = { [k.nameLabel]: k.alertmanager };
    const scrapedPorts = [k.ports.configReloader, k.ports.prometheus, k.ports.alertmanager, k.ports.operator].map((port) => ({ port }));
    const mesh = [{ port: k.ports.alertmanagerMesh }, { port: k.ports.alertmanagerMesh, protocol: 'UDP' as const }];
    const monitoring = new NetworkPolicies(this, 'monitoring', {
      ...common,
      namespace: ns.monitoringStack,
      ingress: [
        // Scraping, and alerts to the Alertmanagers (9093).
        { name: 'prometheus', namespace: ns.monitoringStack, podLabels: prometheusPods, ports: scrapedPorts },
        { name: 'alertmanager', namespace: ns.monitoringStack, podLabels: alertmanagerPods, localPodLabels: alertmanagerPods, ports: mesh },
        { name: 'flagger', namespace: ns.progressiveDelivery, podLabels: FLAGGER.podLabels, localPodLabels: prometheusPods, ports: [{ port: k.ports.prometheus }] },
        fromApiServer('api-server', k.ports.operator, { localPodLabels: k.operatorPodLabels }),
      ],
      egress: [
        DNS_PEER,
        { ...apiServer, localPodsWhere: { key: k.nameLabel, in: [k.prometheus, k.kubeStateMetrics, k.operatorName] } },
        { name: 'monitoring', namespace: ns.monitoringStack, ports: scrapedPorts, localPodLabels: prometheusPods },
        { name: 'nodes', ipBlocks: props.nodeCidrs, ports: [{ port: k.ports.kubelet }, { port: k.ports.nodeExporter }], localPodLabels: prometheusPods },
        ...props.applicationNamespaces.map((namespace) => ({ name: `metrics-${namespace}`, namespace, ports: [{ port: METRICS.port }], localPodLabels: prometheusPods })),
        { name: 'alertmanager', namespace: ns.monitoringStack, podLabels: alertmanagerPods, ports: mesh, localPodLabels: alertmanagerPods },
        // The receivers' addresses are in Secrets (6), outside the cluster.
        anywhere('receivers', [PORTS.https], { localPodLabels: alertmanagerPods }),
      ],
    });

    // Flagger and its load tester.
    const flagger = { localPodLabels: FLAGGER.podLabels };
    const loadTester = { localPodLabels: FLAGGER.loadTesterPodLabels };
    const progressiveDelivery = new NetworkPolicies(this, 'flagger', {
      ...common,
      namespace: ns.progressiveDelivery,
      ingress: [{ name: 'flagger', namespace: ns.progressiveDelivery, podLabels: FLAGGER.podLabels, ports: [{ port: FLAGGER.loadTesterPort }], ...loadTester }],
      egress: [
        DNS_PEER,
        { ...apiServer, ...flagger },
        { name: 'prometheus', namespace: ns.monitoringStack, podLabels: prometheusPods, ports: [{ port: k.ports.prometheus }], ...flagger },
        { name: FLAGGER_LOAD_TESTER.service, namespace: ns.progressiveDelivery, podLabels: FLAGGER.loadTesterPodLabels, ports: [{ port: FLAGGER.loadTesterPort }], ...flagger },
        // The load test calls the application's public address (https://<host>/health).
        anywhere('application-hosts', [PORTS.https], loadTester),
        { name: 'gateway', namespace: ns.ingressController, podLabels: GATEWAY.proxyPodLabels, ports: [{ port: ENVOY_GATEWAY.proxyContainerPort(PORTS.https) }], ...loadTester },
      ],
    });

    this.policies = [argocd, certManager, gateway, monitoring, progressiveDelivery];
  }
}
