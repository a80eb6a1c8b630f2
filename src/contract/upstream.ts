import { PORTS } from './contract';

/**
 * Facts of the upstream software the platform runs on (Kubernetes, Argo CD, SQL Server,
 * Strimzi, Envoy Gateway, cert-manager, kube-prometheus-stack): names, labels, ports and
 * limits those projects define, each with the upstream source it encodes. Not choices:
 * changing one here does not change the upstream.
 */

/** Argo CD's sync-wave annotation. */
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/**
 * The annotation by which Argo CD tracks what an Application applied, its default tracking
 * method since v3.0: `<application>:<group>/<kind>:<namespace>/<name>` (argo-cd v3.6.1
 * common/common.go AnnotationKeyAppInstance; util/argo/resource_tracking.go BuildAppInstanceValue).
 */
export const TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';

/** 5.3: label that makes a Secret in the controller's namespace a repository credential. */
export const REPOSITORY_SECRET_LABEL = { key: 'argocd.argoproj.io/secret-type', value: 'repository' } as const;

/** The same label's value that makes a Secret a declared cluster (argo-cd v3.6.1 common/common.go LabelValueSecretTypeCluster). */
export const CLUSTER_SECRET_LABEL = { key: REPOSITORY_SECRET_LABEL.key, value: 'cluster' } as const;

/**
 * The label kube-prometheus-stack's Prometheus selects rules and monitors by when its
 * `*SelectorNilUsesHelmValues` stay true (the chart's default). This platform sets them false
 * (select everything, src/infrastructure/helm-values.ts); the label keeps the objects selected
 * either way. The Alertmanager selects alert routing by a label of the platform's own
 * (ALERT_ROUTING.selectorLabel, ./choices.ts). Not in the contract.
 */
export const MONITORING_SELECTOR_LABEL = { key: 'release', value: 'kube-prometheus-stack' } as const;

/**
 * Namespaces Kubernetes creates and reserves for itself: no unit of the platform may own one
 * (the namespace would be deleted or relabelled with it). Not in the contract: Kubernetes'
 * own (kube-node-lease since 1.14).
 */
export const RESERVED_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/**
 * Kubernetes' length limits on what the platform derives from a name (not in the contract:
 * the API server's validation): a DNS-1123 label (namespaces, Service names) and a label
 * value at most 63 characters, an object name (DNS-1123 subdomain) at most 253.
 */
export const KUBERNETES_LIMITS = { dnsLabel: 63, labelValue: 63, objectName: 253 } as const;

/**
 * Cluster DNS (7 "name resolution failing"): CoreDNS pods in kube-system carry
 * `k8s-app: kube-dns` and answer on port 53 over UDP and TCP, for the cluster domain
 * `cluster.local` (a Service is `<service>.<namespace>.svc.cluster.local`). Not in the
 * contract: the Kubernetes defaults.
 */
export const CLUSTER_DNS = { podLabels: { 'k8s-app': 'kube-dns' }, port: 53, domain: 'cluster.local' } as const;

/** SQL Server's built-in administrator login. */
export const SQL_SERVER_ADMINISTRATOR = 'sa';

/**
 * What SQL Server has built in, that an application must not take (src/environments/validate.ts
 * refuses them): an application's name is its SQL login, and its database name must not be a
 * system database. SQL Server's default collation compares names case-insensitively, so these
 * are compared lower-cased. Fixed server principals and database principals:
 * https://learn.microsoft.com/sql/relational-databases/security/authentication-access/server-level-roles,
 * .../principals-database-engine; system databases: .../databases/system-databases.
 */
export const SQL_SERVER_BUILT_INS = {
  /**
   * Logins, roles and users every server or database has (`sa` is the administrator,
   * SQL_SERVER_ADMINISTRATOR): the fixed server roles (server-level-roles), the fixed database
   * roles (database-level-roles) and the built-in users.
   */
  principals: [
    SQL_SERVER_ADMINISTRATOR,
    'public',
    'sysadmin',
    'serveradmin',
    'securityadmin',
    'processadmin',
    'setupadmin',
    'bulkadmin',
    'diskadmin',
    'dbcreator',
    'db_owner',
    'db_securityadmin',
    'db_accessadmin',
    'db_backupoperator',
    'db_ddladmin',
    'db_datawriter',
    'db_datareader',
    'db_denydatawriter',
    'db_denydatareader',
    'dbo',
    'guest',
    'INFORMATION_SCHEMA',
    'sys',
  ],
  /** The system databases. */
  databases: ['master', 'model', 'msdb', 'tempdb'],
} as const;

/**
 * 1.3 step 6: the Strimzi cluster. The plain listener is the contract's 9092; the TLS one
 * on 9093 (where an environment asks) is Strimzi's convention. Both authenticate users
 * with SCRAM-SHA-512, so the ACLs of each KafkaUser apply (not in the contract).
 */
export const STRIMZI = {
  nodePool: 'dual-role',
  /** The label Strimzi gives each node pool's pods, with the pool's name. */
  poolLabel: 'strimzi.io/pool-name',
  /** Copies of each partition at most; fewer when the cluster has fewer brokers. */
  maxReplication: 3,
  clusterLabel: 'strimzi.io/cluster',
  listeners: { plain: { name: 'plain', port: PORTS.broker }, tls: { name: 'tls', port: 9093 } },
  /** Topics and users sync after the cluster is Ready (Argo CD waits for each wave's health). */
  entitiesSyncWave: 1,
  /** Each of the entity operator's two containers (topic and user operator): small JVMs. */
  entityOperatorResources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '500m', memory: '384Mi' } },
  /**
   * Ports of the brokers Strimzi's own components reach inside the namespace: the KRaft
   * control plane, replication (operators and brokers), the Kafka agent (cluster operator)
   * (strimzi-kafka-operator 1.2.0, cluster-operator/.../model/KafkaCluster.java
   * CONTROLPLANE_PORT, REPLICATION_PORT, KAFKA_AGENT_PORT).
   */
  internalPorts: { controlPlane: 9090, replication: 9091, agent: 8443 },
  /** KafkaTopic `retention.ms` from the environment's hours. */
  retentionMsPerHour: 3_600_000,
  /**
   * The brokers' pods as Strimzi 1.2.0 makes them (`<cluster>-<pool>-<n>`, owned by a
   * StrimziPodSet): the label a pod with the broker role carries (api/.../ResourceLabels.java
   * STRIMZI_BROKER_ROLE_LABEL, set by cluster-operator/.../model/KafkaCluster.java), the
   * broker's container (KafkaCluster.java KAFKA_NAME), where the image keeps Kafka's tools
   * (docker-images/kafka-based/kafka/Dockerfile: KAFKA_HOME /opt/kafka) and the writable
   * /tmp of a read-only root filesystem (the `strimzi-tmp` emptyDir, VolumeUtils.java).
   */
  brokerPods: {
    brokerRoleLabel: 'strimzi.io/broker-role',
    container: 'kafka',
    topicsTool: '/opt/kafka/bin/kafka-topics.sh',
    /** The image's tool that asks every broker for its API versions (the smoke hook's broker step runs the same image). */
    apiVersionsTool: '/opt/kafka/bin/kafka-broker-api-versions.sh',
  },
} as const;

/**
 * The ingress controller (1.3.4): Gateway API served by Envoy Gateway. Not in the contract:
 * upstream's names. The GatewayClass names Envoy Gateway's controller (its chart's
 * `config.envoyGateway.gateway.controllerName`); every Gateway gets its own Envoy proxy
 * Deployment and Service in Envoy Gateway's namespace, whose pods carry the labels below
 * (envoyproxy/gateway v1.9.1, internal/infrastructure/kubernetes/proxy/resource.go
 * `EnvoyAppLabel` and resource_provider.go `stableSelector`; internal/gatewayapi/translator.go
 * for the owning-gateway keys).
 */
export const GATEWAY = {
  className: 'envoy-gateway',
  controllerName: 'gateway.envoyproxy.io/gatewayclass-controller',
  listeners: { http: 'http', https: 'https' },
  proxyPodLabels: { 'app.kubernetes.io/name': 'envoy', 'app.kubernetes.io/component': 'proxy' },
  owningGatewayNameLabel: 'gateway.envoyproxy.io/owning-gateway-name',
  owningGatewayNamespaceLabel: 'gateway.envoyproxy.io/owning-gateway-namespace',
  /** HTTP to HTTPS redirect status (permanent). */
  redirectStatusCode: 301,
} as const;

/**
 * cert-manager's ACME HTTP-01 solver pods (not in the contract): created in the namespace of
 * the Certificate, labelled `acme.cert-manager.io/http01-solver: "true"`, listening on 8089
 * (cert-manager v1.21.2 pkg/apis/acme/v1/types.go `SolverIdentificationLabelKey`,
 * pkg/issuer/acme/http/pod.go `podLabels`, pkg/issuer/acme/http/http.go `acmeSolverListenPort`).
 */
export const ACME_HTTP01_SOLVER = {
  port: 8089,
  podLabels: { 'acme.cert-manager.io/http01-solver': 'true' },
} as const;

/**
 * Argo CD's pods as upstream's release manifests label them, and the ports the platform's
 * NetworkPolicies open between them (not in the contract): every pod carries
 * `app.kubernetes.io/name: argocd-<component>` (argo-cd v3.6.1 manifests/base/*, and
 * manifests/ha/base/redis-ha for Redis with Sentinel: its servers `argocd-redis-ha`, behind
 * HAProxy `argocd-redis-ha-haproxy`, which the clients reach on 6379; the servers serve 6379
 * and Sentinel 26379 to HAProxy and to each other). Redis' password Secret is written by an
 * init container of the Redis pod (`argocd admin redis-initial-password`), of HAProxy's in the
 * high-availability install, which so reaches the API server. Upstream's own NetworkPolicies
 * are deleted (src/infrastructure/argo-cd-kustomization.ts).
 */
export const ARGO_CD = {
  nameLabel: 'app.kubernetes.io/name',
  components: {
    applicationController: 'argocd-application-controller',
    server: 'argocd-server',
    repoServer: 'argocd-repo-server',
    redis: 'argocd-redis',
    applicationSetController: 'argocd-applicationset-controller',
    notificationsController: 'argocd-notifications-controller',
    /** The high-availability install's Redis servers (with Sentinel). */
    redisHa: 'argocd-redis-ha',
    /** The high-availability install's HAProxy in front of them, which the clients reach. */
    redisHaProxy: 'argocd-redis-ha-haproxy',
  },
  ports: { repoServer: 8081, redis: 6379, redisSentinel: 26379 },
} as const;

/**
 * cert-manager's pods and its webhook's port (not in the contract): each component is
 * `app.kubernetes.io/component: controller | webhook | cainjector | startupapicheck`, the
 * webhook listens on `webhook.securePort` 10250, which the API server calls through the
 * webhook Service's 443 (cert-manager v1.21.2 deploy/charts/cert-manager/templates/deployment.yaml,
 * webhook-deployment.yaml, webhook-service.yaml, values.yaml).
 */
export const CERT_MANAGER = {
  componentLabel: 'app.kubernetes.io/component',
  components: { controller: 'controller', webhook: 'webhook' },
  webhookPort: 10250,
} as const;

/**
 * Envoy Gateway's controller and its proxies' ports (not in the contract). The controller's
 * pods carry `control-plane: envoy-gateway` (charts/gateway-helm/templates/envoy-gateway-deployment.yaml),
 * serve xDS to the proxies on 18000 (values.tmpl.yaml `deployment.ports` grpc) and the topology
 * injector webhook on 9443 (templates/envoy-proxy-topology-injector-webhook.yaml,
 * `topologyInjector.enabled` by default). A proxy listens on a Gateway listener's port, a
 * privileged one (below 1024) shifted by 10000 so it binds without a capability
 * (internal/gatewayapi/listener.go, translator.go `wellKnownPortShift`). envoyproxy/gateway v1.9.1.
 */
export const ENVOY_GATEWAY = {
  controllerPodLabels: { 'control-plane': 'envoy-gateway' },
  xdsPort: 18000,
  webhookPort: 9443,
  /** The container port of a proxy for a Gateway listener's port. */
  proxyContainerPort: (listenerPort: number): number => (listenerPort < 1024 ? listenerPort + 10000 : listenerPort),
} as const;

/**
 * kube-prometheus-stack's pods and ports (not in the contract). prometheus-operator labels the
 * pods it runs `app.kubernetes.io/name: prometheus | alertmanager` (v0.93.1
 * pkg/operator/kubernetes.go `ApplicationNameLabelKey`); Prometheus serves 9090
 * (pkg/prometheus/common.go), Alertmanager 9093 and its cluster mesh 9094 over TCP and UDP
 * (pkg/alertmanager/statefulset.go `alertmanagerWebPort`, `alertmanagerMeshPort`), each config
 * reloader 8080 (pkg/operator/config_reloader.go). The chart labels the operator
 * `app: <chart>-operator` and it and its admission Jobs `app.kubernetes.io/name:
 * <chart>-prometheus-operator` (templates/prometheus-operator/_prometheus-operator.tpl,
 * admission-webhooks/_prometheus-operator-webhook.tpl); the operator serves HTTPS and its
 * admission webhooks on 10250 (values.yaml `prometheusOperator.tls.internalPort`);
 * kube-state-metrics (chart 8.4.0) is `app.kubernetes.io/name: kube-state-metrics` on 8080;
 * the node exporter runs in the host's network on 9100 and Prometheus scrapes each kubelet on
 * 10250. The chart's names were read at kube-prometheus-stack 88.5.3, the version the platform
 * runs (src/infrastructure/releases.ts).
 */
export const KUBE_PROMETHEUS_STACK = {
  nameLabel: 'app.kubernetes.io/name',
  prometheus: 'prometheus',
  alertmanager: 'alertmanager',
  kubeStateMetrics: 'kube-state-metrics',
  /** The operator and its admission webhook Jobs, by `app.kubernetes.io/name`. */
  operatorName: `${MONITORING_SELECTOR_LABEL.value}-prometheus-operator`,
  /** The operator's pods alone. */
  operatorPodLabels: { app: `${MONITORING_SELECTOR_LABEL.value}-operator` },
  ports: { prometheus: 9090, alertmanager: 9093, alertmanagerMesh: 9094, configReloader: 8080, kubeStateMetrics: 8080, operator: 10250, kubelet: 10250, nodeExporter: 9100 },
} as const;

/**
 * Flagger's and its load tester's pods (not in the contract): Flagger is
 * `app.kubernetes.io/name: flagger` (charts/flagger/templates/deployment.yaml), the load
 * tester `app: loadtester`, listening on 8080 behind its Service's 80
 * (charts/loadtester/templates/deployment.yaml, service.yaml, values.yaml `service.port`).
 * fluxcd/flagger v1.44.0.
 */
export const FLAGGER = {
  podLabels: { 'app.kubernetes.io/name': 'flagger' },
  loadTesterPodLabels: { app: 'loadtester' },
  loadTesterPort: 8080,
  /**
   * The pod labels Flagger builds a canary's selectors from, in its order (cmd/flagger/main.go
   * `-selector-labels`, which the chart passes only when its `selectorLabels` value is set:
   * charts/flagger/templates/deployment.yaml). A target Deployment's `spec.selector.matchLabels`
   * must hold one, or Flagger does not initialize the Canary ("spec.selector.matchLabels must
   * contain one of [...]", pkg/canary/deployment_controller.go `getSelectorLabel`); the first
   * it holds is the label whose value Flagger suffixes with `-primary` on the primary's pods.
   */
  selectorLabels: ['app', 'name', 'app.kubernetes.io/name'],
} as const;

/**
 * The Deployment of Strimzi's cluster operator, as its Helm chart names it (strimzi-kafka-operator
 * 1.2.0, helm-charts/helm3/strimzi-kafka-operator/templates/060-Deployment-strimzi-cluster-operator.yaml):
 * what 1.3 step 6 waits for before the Kafka cluster.
 */
export const STRIMZI_OPERATOR_DEPLOYMENT = 'strimzi-cluster-operator';
