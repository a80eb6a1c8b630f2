/**
 * The limits table of the platform contract (section 8) and the fixed shapes of
 * sections 2.1 and 2.2, in one place. Constructs refer to these by name; tests read
 * the rendered YAML and compare it with literals, so a drift here fails a test.
 */

/** 8: application container port 8080; service port 80. */
export const PORTS = {
  /** The application listens here: HTTP, probes and /metrics (4). */
  application: 8080,
  /** The Service (and the canary's Service) forwards this port to `application`. */
  service: 80,
  /** SQL Server (8, 7 "database unreachable"). */
  database: 1433,
  /** Kafka plain listener (1.3.6, 8). */
  broker: 9092,
  /** HTTP on the Gateway: redirects to HTTPS and serves ACME HTTP-01 challenges. */
  http: 80,
  /** HTTPS on the Gateway and the TLS handshake check (4.2). */
  https: 443,
} as const;

/** Name of the application container port, referenced by Service and monitors. */
export const HTTP_PORT_NAME = 'http';

/** 2.2 / 8: probe paths, ports and timings. */
export const PROBES = {
  liveness: { path: '/health', port: PORTS.application, initialDelaySeconds: 30, periodSeconds: 10 },
  readiness: { path: '/ready', port: PORTS.application, initialDelaySeconds: 5, periodSeconds: 5 },
} as const;

/** 4: metrics are served by the pod on this path and port. */
export const METRICS = { path: '/metrics', port: PORTS.application } as const;

/** 2.1 / 8: RollingUpdate maxUnavailable / maxSurge. */
export const ROLLING_UPDATE = { maxUnavailable: 1, maxSurge: 1 } as const;

/**
 * Revisions kept for orchestrator-level rollback (1.5). Not in the contract: ten is
 * Kubernetes' own default, written down so the manifest says it.
 */
export const REVISION_HISTORY_LIMIT = 10;

/**
 * Disruption and spread of every Deployment and of the Kafka brokers (convergence item 8; not
 * in the contract): at most one pod of a unit evicted at a time (a PodDisruptionBudget,
 * `maxUnavailable` like the rolling update's, so a node drain (7.2) is never blocked for
 * good), and pods spread across nodes (`kubernetes.io/hostname`) where the scheduler can,
 * without refusing to schedule on a one-node workstation.
 */
export const DISRUPTION = {
  maxUnavailable: 1,
  spread: { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
} as const;

/** 2.1 / 8: replicas of each blue-green unit. */
export const BLUE_GREEN = { replicasPerUnit: 3, units: ['blue', 'green'] } as const;

/** 2.3 / 8: the canary object and its metric thresholds. */
export const CANARY = {
  progressDeadlineSeconds: 60,
  analysis: { interval: '30s', threshold: 5, maxWeight: 50, stepWeight: 10 },
  metrics: {
    requestSuccessRate: { name: 'request-success-rate', thresholdMin: 99, interval: '1m' },
    requestDuration: { name: 'request-duration', thresholdMax: 500, interval: '30s' },
  },
} as const;

/**
 * A failed or missing database backup (convergence item 10; not in the contract): critical,
 * so it pages the on-call engineer (6). It fires when the backup CronJob's last scheduled run
 * has not succeeded within the job's deadline plus five minutes.
 */
export const BACKUP_ALERT = {
  groupName: 'database.rules',
  name: 'DatabaseBackupFailed',
  for: '65m',
  severity: 'critical',
} as const;

/** 2.4 / 8: the alert rule group and its two alerts. */
export const ALERTS = {
  groupName: 'deployment.rules',
  deploymentFailed: { name: 'DeploymentFailed', for: '10m', severity: 'critical' },
  highErrorRate: {
    name: 'HighErrorRateDuringDeployment',
    for: '2m',
    severity: 'warning',
    ratio: 0.05,
    rateWindow: '5m',
  },
  /** 8: silence example. */
  silenceDuration: '1h',
} as const;

/**
 * 6: where alerts go. Critical alerts page the on-call engineer (escalation level 2);
 * warnings post to the team chat. Not in the contract: the receiver names, the Secrets
 * holding their addresses (never in git: 5.3, SOPS) and Alertmanager's grouping timers,
 * which are its documented defaults except a 4 h repeat, so a firing alert is repeated
 * about twice per working day.
 */
export const ALERT_ROUTING = {
  name: 'platform-alert-routing',
  onCall: { receiver: 'on-call', secret: { name: 'on-call-webhook', key: 'url' } },
  teamChat: { receiver: 'team-chat', secret: { name: 'chat-webhook', key: 'url' } },
  groupWait: '30s',
  groupInterval: '5m',
  repeatInterval: '4h',
} as const;

/**
 * The label kube-prometheus-stack's Prometheus and Alertmanager select rules, monitors and
 * alert routing by when its `*SelectorNilUsesHelmValues` stay true (the chart's default).
 * This platform sets them false (select everything, src/infrastructure/helm-values.ts); the
 * label keeps the objects selected either way. Not in the contract.
 */
export const MONITORING_SELECTOR_LABEL = { key: 'release', value: 'kube-prometheus-stack' } as const;

/** 1.3 / 8: how long each step may take, in seconds. */
export const WAITS_SECONDS = {
  infrastructurePodsReady: 300,
  databasePodReady: 600,
  brokerOperatorReady: 300,
  brokerClusterReady: 600,
  controllerSync: 300,
  rolloutStatus: 300,
} as const;

/** 2.7 / 1.3.6: the broker cluster and its bootstrap Service. */
export const BROKER = {
  clusterName: 'kafka-cluster',
  bootstrapService: 'kafka-cluster-kafka-bootstrap',
} as const;

/** 8: example limits in a fix (runbook, CrashLoopBackOff). */
export const EXAMPLE_FIX = { memoryLimit: '1Gi', cpuLimit: '500m', livenessInitialDelaySeconds: 60 } as const;

/** 7.2: replica counts named by the emergency procedures. */
export const EMERGENCY_REPLICAS = { outageScaleTarget: 5, afterRestore: 2 } as const;

/** 2.1 / 9: image tags look like v<major>.<minor>.<patch>. */
export const IMAGE_TAG_PATTERN = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** Labels every object of the application carries (2.1). */
export const LABELS = { app: 'app', version: 'version' } as const;

/**
 * The unprivileged user and group the platform's own images (application, migrations,
 * smoke test) run as; they must not need root (restricted Pod Security). Not in the contract.
 */
export const APPLICATION_USER = 10001;

/**
 * `version` label of the single unit of a rolling or canary Deployment (blue-green units
 * use blue / green). Not the image tag: a release then changes the image line only, and
 * the label stays out of immutable selectors' way.
 */
export const SINGLE_UNIT_VERSION = 'stable';

/**
 * Flagger's in-cluster load tester (not in the contract): it sends traffic during a
 * canary analysis so an idle environment still yields the metrics the thresholds read.
 */
export const FLAGGER_LOAD_TESTER = {
  namespace: 'flagger-system',
  service: 'flagger-loadtester',
  /** `hey` run by the load tester for each analysis step. */
  duration: '1m',
  queriesPerSecond: 10,
  concurrency: 2,
  timeout: '5s',
  /**
   * The load tester's manual gates (3.2: promote and roll back are operator commands).
   * Flagger asks `check` before promoting and, during analysis, whether to roll back;
   * an operator answers by calling `open` on the same gate.
   */
  gates: {
    promotion: { check: '/gate/check', open: '/gate/open', close: '/gate/close' },
    rollback: { check: '/rollback/check', open: '/rollback/open', close: '/rollback/close' },
  },
} as const;

/**
 * 1.3.4: the order the controller syncs the infrastructure in, as Argo CD sync waves
 * (lower first). The contract names the first three; the rest (issuers, the monitoring
 * stack, Flagger and its load tester, the Strimzi operator) come after them, in the order they depend on
 * each other (Flagger reads the monitoring stack's Prometheus). Not in the contract, and
 * neither is wave 0: the Gateway API CRDs, which cert-manager reads when it starts (its
 * Gateway API support checks for them only on startup: cert-manager website,
 * content/docs/usage/gateway.md), so they exist before the certificate manager.
 */
export const SYNC_WAVES = {
  gatewayApiCrds: 0,
  certificateManager: 1,
  ingressController: 2,
  controller: 3,
  issuers: 4,
  monitoringStack: 4,
  progressiveDelivery: 5,
  loadTester: 6,
  brokerOperator: 6,
} as const;

/** Argo CD's sync-wave annotation. */
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/**
 * Waves inside a chart's own Application, before its default wave 0: its encrypted
 * Secrets first, then the Sync-phase hook that needs them (the schema migrations), then
 * everything else. A PreSync hook would run before any Secret of the same Application
 * exists (Argo CD runs the PreSync phase before the Sync phase's waves), and a pod whose
 * Secret is missing never starts (e2e: test/e2e/convergence.test.ts).
 */
export const CHART_WAVES = {
  secrets: -2,
  migrations: -1,
} as const;

/**
 * Namespaces of the infrastructure releases. Not in the contract except `argocd`
 * (5.3: the controller's namespace) and FLAGGER_LOAD_TESTER.namespace: each upstream
 * chart's documented default.
 */
export const INFRASTRUCTURE_NAMESPACES = {
  certificateManager: 'cert-manager',
  /** Envoy Gateway's documented namespace; the Envoy proxies of every Gateway run there too. */
  ingressController: 'envoy-gateway-system',
  controller: 'argocd',
  monitoringStack: 'monitoring',
  progressiveDelivery: FLAGGER_LOAD_TESTER.namespace,
} as const;

/**
 * 1.3.3 / 1.3.4 / 8: every sync and health wait of the controller is bounded by 300 s.
 * Argo CD retries a failed sync with exponential backoff; the first wait and the factor
 * are ours (not in the contract): 10 s doubling, each wait capped at half the budget, so
 * the waits add up to the budget exactly (10 + 20 + 40 + 80 + 150 = 300).
 */
export const SYNC_RETRY = { firstBackoffSeconds: 10, factor: 2 } as const;

/** 5.3: Secret holding the age key file, and where the repository server reads it. */
export const SOPS_AGE = {
  secretName: 'sops-age',
  secretKey: 'keys.txt',
  mountPath: '/home/argocd/.config/sops/age',
  /** The environment variable that names the key file (5.3). */
  keyFileVariable: 'SOPS_AGE_KEY_FILE',
} as const;

/**
 * 5.3: the Config Management Plugin that decrypts an Application's encrypted Secrets in a
 * sidecar of Argo CD's repository server: every `*.sops.yaml` file of the source folder,
 * with sops and the age key (SOPS_AGE_KEY_FILE), nothing else. It replaces KSOPS run as a
 * kustomize exec plugin (`--enable-exec`), which let any commit run code beside the key.
 */
export const SOPS_PLUGIN = {
  name: 'sops',
  /** Upstream's image (ghcr.io/getsops/sops, `-alpine` for the shell), the version e2e/toolchain builds. */
  image: 'ghcr.io/getsops/sops:v3.13.3-alpine',
  /** Files the plugin decrypts, in name order. */
  filePattern: '*.sops.yaml',
} as const;

/** 5.3: label that makes a Secret in the controller's namespace a repository credential. */
export const REPOSITORY_SECRET_LABEL = { key: 'argocd.argoproj.io/secret-type', value: 'repository' } as const;

/**
 * Exemptions from the policy gate (src/validation/policy.ts) are annotations on the object
 * that needs them: `policy.platform-gitops.io/exempt-<rule>: "<reason>"`. Not in the
 * contract: the project's own convention, so a reviewer reads the reason beside the object.
 */
export const POLICY_EXEMPTION_PREFIX = 'policy.platform-gitops.io/exempt-';

/**
 * Namespaces of the platform's neighbours that the application's NetworkPolicies name.
 * Not in the contract: the upstream charts' default namespaces (Envoy Gateway and its
 * proxies, the Prometheus stack in `monitoring`, cluster DNS in `kube-system`).
 */
export const PLATFORM_NAMESPACES = {
  gateway: INFRASTRUCTURE_NAMESPACES.ingressController,
  monitoring: INFRASTRUCTURE_NAMESPACES.monitoringStack,
  kubeSystem: 'kube-system',
} as const;

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
 * `k8s-app: kube-dns` and answer on port 53 over UDP and TCP. Not in the contract: the
 * Kubernetes defaults.
 */
export const CLUSTER_DNS = { podLabels: { 'k8s-app': 'kube-dns' }, port: 53 } as const;

/**
 * 4.1: the smoke test. The contract orders the steps and says any failure stops the run;
 * the timeouts are not in the contract: each is long enough for a healthy cluster on a
 * cold connection and short enough that a PostSync hook fails well inside the 300 s
 * sync timeout (1.3).
 */
export const SMOKE = {
  /** Per step, in milliseconds. */
  stepTimeoutMs: { health: 10_000, login: 10_000, declarations: 10_000, database: 20_000, broker: 20_000 },
  /** Paths of 4 called by the steps. */
  paths: { health: '/health', login: '/api/auth/login', declarations: '/api/declarations', status: '/api/status' },
  /** The query the database step runs after logging in (4.1 step 4). */
  databaseQuery: 'SELECT 1 AS ok',
  /** 4.1 step 6. */
  passedMessage: 'All smoke tests passed',
  /**
   * The PostSync hook Job (not in the contract): one attempt, since a second run would
   * only hide a flaky deployment; the deadline is the steps' timeouts plus this much for
   * pulling the image and starting Node.
   */
  hook: { backoffLimit: 0, startupAllowanceSeconds: 60 },
  /** Each of the hook's shell steps (not in the contract): wget, sqlcmd. */
  resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '250m', memory: '192Mi' } },
  /** The broker step: Kafka's command-line client on a JVM, its heap capped below the limit. */
  brokerStep: { heap: '-Xmx128m', resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '500m', memory: '384Mi' } } },
} as const;

/** 4.2: the TLS handshake check gives up after this long (not in the contract). */
export const TLS_CHECK_TIMEOUT_MS = 10_000;

/**
 * 1.3 step 5, 7, 7.2: SQL Server. The port and the 600 s wait are the contract's; the rest
 * is ours: Microsoft's image at a pinned cumulative update (a release is a reviewed change
 * here), run as its documented non-root user `mssql` (10001), probes every 10 s.
 */
export const DATABASE = {
  /** StatefulSet, Service, pod label `app` and the host part of the address. */
  serverName: 'mssql',
  image: 'mcr.microsoft.com/mssql/server:2022-CU16-ubuntu-22.04',
  /** sqlcmd of the image (tools 18: `-C` trusts the server's self-signed certificate). */
  sqlcmd: '/opt/mssql-tools18/bin/sqlcmd',
  /** The server writes data, logs and its own files here. */
  dataPath: '/var/opt/mssql',
  /** The dedicated backup volume, mounted into the server: BACKUP TO DISK writes server-side. */
  backupPath: '/var/opt/mssql/backup',
  user: 10001,
  portName: 'tds',
  /** The administrator login (5.4); its password comes from the Secret below. */
  administrator: 'sa',
  adminSecret: { name: 'database-admin', key: 'password' },
  probe: { periodSeconds: 10, timeoutSeconds: 5 },
  /**
   * Schema migrations (9.4): a PreSync hook Job of the application chart. One retry for a
   * transient connection error; the deadline is the controller's sync timeout, which ends
   * the sync anyway.
   */
  migrations: { imageSuffix: 'migrations', backoffLimit: 1 },
  /**
   * The application's login, database and user, created by a Sync hook Job in the wave after
   * the server (healthy once it answers queries) and before the application's migrations
   * (a later Application). Two retries for a server still settling; the deadline is the
   * controller's sync timeout.
   */
  setup: {
    syncWave: 1,
    backoffLimit: 2,
    /** The role the login gets in its database: the migrations change the schema. */
    role: 'db_owner',
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
  },
  /**
   * The scheduled full backup: one attempt at a time, an hour at most, 3 runs kept. Backups
   * kept on the volume: `keep` files, one per UTC day (`<database>-day<N>.bak`, N the day
   * number modulo `keep`), each day's run overwriting the file of `keep` days ago, so the
   * volume never fills (size it for `keep` full backups). Convergence item 10.
   */
  backup: {
    keep: 7,
    backoffLimit: 1,
    activeDeadlineSeconds: 3600,
    historyLimit: 3,
    /** sqlcmd only sends the command; the server does the work. */
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
  },
} as const;

/**
 * What SQL Server has built in, that an application must not take (src/environments/validate.ts
 * refuses them): an application's name is its SQL login, and its database name must not be a
 * system database. SQL Server's default collation compares names case-insensitively, so these
 * are compared lower-cased. Fixed server principals and database principals:
 * https://learn.microsoft.com/sql/relational-databases/security/authentication-access/server-level-roles,
 * .../principals-database-engine; system databases: .../databases/system-databases.
 */
export const SQL_SERVER_BUILT_INS = {
  /** Logins, roles and users every server or database has (`sa` is also DATABASE.administrator). */
  principals: [DATABASE.administrator, 'public', 'sysadmin', 'dbo', 'guest', 'INFORMATION_SCHEMA', 'sys'],
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
} as const;

/**
 * The ingress controller (1.3.4): Gateway API served by Envoy Gateway. Not in the contract:
 * upstream's names. The GatewayClass names Envoy Gateway's controller (its chart's
 * `config.envoyGateway.gateway.controllerName`); every Gateway gets its own Envoy proxy
 * Deployment and Service in Envoy Gateway's namespace, whose pods carry the labels below
 * (envoyproxy/gateway v1.9.0, internal/infrastructure/kubernetes/proxy/resource.go
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
 * (cert-manager v1.21.1 pkg/apis/acme/v1/types.go `SolverIdentificationLabelKey`,
 * pkg/issuer/acme/http/pod.go `podLabels`, pkg/issuer/acme/http/http.go `acmeSolverListenPort`).
 */
export const ACME_HTTP01_SOLVER = {
  port: 8089,
  podLabels: { 'acme.cert-manager.io/http01-solver': 'true' },
} as const;
