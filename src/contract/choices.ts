import { ENVIRONMENT_ORDER } from './contract';
import { SQL_SERVER_ADMINISTRATOR } from './upstream';

/**
 * The platform's own choices where the contract says "not shown": each with its reason,
 * so a reviewer can weigh it. The contract's constants are in ./contract.ts, upstream
 * facts in ./upstream.ts, container images in ./images.ts.
 */

/** Name of the application container port, referenced by Service and monitors. */
export const HTTP_PORT_NAME = 'http';

/**
 * Revisions kept for orchestrator-level rollback (1.5). Not in the contract: ten is
 * Kubernetes' own default, written down so the manifest says it.
 */
export const REVISION_HISTORY_LIMIT = 10;

/**
 * Disruption and spread of every Deployment and of the Kafka brokers (not in the contract): at most one pod of a unit evicted at a time (a PodDisruptionBudget,
 * `maxUnavailable` like the rolling update's, so a node drain (7.2) is never blocked for
 * good), and pods spread across nodes (`kubernetes.io/hostname`) where the scheduler can,
 * without refusing to schedule on a one-node workstation.
 */
export const DISRUPTION = {
  maxUnavailable: 1,
  spread: { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
} as const;

/**
 * How long `ops silence` silences an alert at most: a silence outlasting its incident hides
 * the next one. Longer (a planned maintenance) only with --allow-long, and never beyond a year.
 */
export const SILENCE_BOUNDS = { days: 30, allowLongDays: 365 } as const;

/**
 * A failed or missing database backup (not in the contract): critical,
 * so it pages the on-call engineer (6). It fires when the backup CronJob's last scheduled run
 * has not succeeded within the job's deadline plus five minutes.
 */
export const BACKUP_ALERT = {
  groupName: 'database.rules',
  name: 'DatabaseBackupFailed',
  for: '65m',
  severity: 'critical',
} as const;

/**
 * 6: where alerts go. Every alert of the platform posts to the team chat (escalation level 1);
 * a critical one also pages the on-call engineer (level 2). Not in the contract: the receiver names, the Secrets
 * holding their addresses (never in git: 5.3, SOPS) and Alertmanager's grouping timers,
 * which are its documented defaults except a 4 h repeat, so a firing alert is repeated
 * about twice per working day.
 */
export const ALERT_ROUTING = {
  name: 'platform-alert-routing',
  /**
   * The label the Alertmanager selects AlertmanagerConfig objects by, in its own namespace
   * only (src/infrastructure/helm-values.ts): the platform's routing carries it, nothing else
   * the platform renders does.
   */
  selectorLabel: { key: 'platform-gitops.io/alert-routing', value: 'platform' },
  onCall: { receiver: 'on-call', secret: { name: 'on-call-webhook', key: 'url' } },
  teamChat: { receiver: 'team-chat', secret: { name: 'chat-webhook', key: 'url' } },
  groupWait: '30s',
  groupInterval: '5m',
  repeatInterval: '4h',
} as const;

/**
 * 1.6: stakeholders notified of significant deployments. Argo CD's notifications controller
 * (part of upstream's release manifests) posts a text message to the team chat
 * (the webhook of ALERT_ROUTING.teamChat: one chat for the alerts and the deployments) when
 * an application's sync succeeds or fails and when its health turns Degraded. Each
 * application's child Application subscribes by annotation (notifications-engine
 * pkg/subscriptions: `notifications.argoproj.io/subscribe.<trigger>.<service>`), so the
 * platform's own Applications (the root, the infrastructure) post nothing. The address is
 * read from the controller's Secret (`argocd-notifications-secret`, upstream's
 * name; `$<key>` in a service's configuration, notifications-engine
 * pkg/api/config.go), which the platform delivers through SOPS with the monitoring Secrets.
 * Not in the contract: the names below.
 */
export const DEPLOYMENT_NOTIFICATIONS = {
  /** The notification service (`service.webhook.<name>`), a Slack-compatible webhook. */
  service: 'team-chat',
  secret: { name: 'argocd-notifications-secret', key: 'team-chat-url' },
  /** Trigger name to the template it sends, one per event of 1.6. */
  triggers: {
    'on-sync-succeeded': 'app-sync-succeeded',
    'on-sync-failed': 'app-sync-failed',
    'on-health-degraded': 'app-health-degraded',
  },
  /** The annotation prefix of a subscription. */
  subscribePrefix: 'notifications.argoproj.io/subscribe',
} as const;

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
 * Where a new version enters the promotion order (1.2: local -> testing -> staging ->
 * production): `npm run release` sets a tag in these environments only; each later one
 * receives a version by `npm run promote` from the environment before it, so no version
 * reaches staging or production without running in the ones before. Not in the contract:
 * local is each developer's, testing is where CI releases a new build.
 */
export const RELEASE_ENVIRONMENTS: readonly (typeof ENVIRONMENT_ORDER)[number][] = ENVIRONMENT_ORDER.slice(0, 2);

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
  /**
   * Before every release: the namespaces the platform uses, each a Namespace object with its
   * Pod Security labels, and the NetworkPolicies of the infrastructure's namespaces, so no
   * pod starts before its namespace denies what its allows do not name.
   */
  namespaces: -1,
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

/**
 * Waves inside a chart's own Application, before its default wave 0: its encrypted
 * Secrets first, then the Sync-phase hook that needs them (the schema migrations), then
 * everything else. A PreSync hook would run before any Secret of the same Application
 * exists (Argo CD runs the PreSync phase before the Sync phase's waves), and a pod whose
 * Secret is missing never starts (e2e: test/e2e/broken-controllers.test.ts).
 */
export const CHART_WAVES = {
  secrets: -2,
  /**
   * The EnvoyProxy a Gateway names (`infrastructure.parametersRef`), before the Gateway:
   * Envoy Gateway does not accept a Gateway whose EnvoyProxy it cannot find (v1.9.1
   * internal/provider/kubernetes/controller.go `processGatewayParamsRef`, InvalidParameters),
   * and in one wave it may judge the Gateway first.
   */
  gatewayParameters: -2,
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
 * 1.3.3 / 1.3.4 / 8: the retries of each Application's sync span 300 s (the contract's sync
 * timeout; Argo CD's own operation timeout is longer: src/infrastructure/ordered-sync.ts).
 * Argo CD retries a failed sync with exponential backoff; the first wait and the factor
 * are ours (not in the contract): 10 s doubling, each wait capped at half the budget, so
 * the waits add up to the budget exactly (10 + 20 + 40 + 80 + 150 = 300).
 */
export const SYNC_RETRY = { firstBackoffSeconds: 10, factor: 2 } as const;

/**
 * The annotation of an Application that only an operator syncs, after review, in every
 * environment (not in the contract): Argo CD's own release, whose sops plugin runs beside the
 * age key (SOPS_PLUGIN). It has no `automated` sync policy, and the app of apps' health check
 * (src/infrastructure/argo-cd-values.ts) reads its health only: waiting for it to be Synced
 * would hold every later wave until someone syncs it.
 */
export const OPERATOR_SYNC_ANNOTATION = { key: 'platform-gitops.io/sync', value: 'operator' } as const;

/**
 * 1.3.3, "the new version is verified by listing pods and reading a version file inside the
 * application container": where the file is, the contract does not show. The application
 * image (its CI builds it) writes the running version as `version` in its working directory,
 * /app, which the Deployment sets explicitly (`workingDir`); `npm run ops -- version` reads it
 * by that relative path, so the command is the same whatever runs the container.
 */
export const VERSION_FILE = { workingDir: '/app', name: 'version' } as const;

/**
 * Who paused an Application's automated sync, and why (`npm run ops -- pause`): recorded on
 * the Application itself, so `ops status` and Argo CD's UI show it, and removed by `resume`.
 */
export const SYNC_PAUSE_ANNOTATIONS = { by: 'platform-gitops.io/paused-by', reason: 'platform-gitops.io/paused-reason' } as const;

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
  /** Files the plugin decrypts, in name order. */
  filePattern: '*.sops.yaml',
  /**
   * The plugin variable of an Application's secrets source (Argo CD passes it as
   * `ARGOCD_ENV_<name>`): the catalog's Secrets of the folder, what the plugin checks each
   * decrypted file against (src/secrets/shape.ts, pluginExpectation).
   */
  expectationVariable: 'SECRETS',
} as const;

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
 * Where the Kubernetes API server is, for the NetworkPolicies of the operators that call it,
 * when an environment does not name its own addresses (`infrastructure.network.apiServerCidrs`).
 * Not in the contract. The API server runs outside every namespace, so a NetworkPolicy can
 * name it only by address, and the address is the cluster's: the endpoints of the `kubernetes`
 * Service (`kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes`),
 * which is what a policy sees once the Service address is translated. The default is the
 * private address ranges (RFC 1918 and the IPv6 unique local range, RFC 4193): a kind, k3d,
 * self-hosted or private-endpoint cluster has its API server there, and an operator's 443
 * stays off the internet. A cluster whose API server has a public address names it; a
 * cluster may narrow the default to its endpoints (a /32 each), which is better still.
 */
export const PRIVATE_NETWORKS = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'] as const;

/** 4.2: the TLS handshake check gives up after this long (not in the contract). */
export const TLS_CHECK_TIMEOUT_MS = 10_000;

/**
 * 1.3 step 5, 7, 7.2: SQL Server. The port and the 600 s wait are the contract's; the rest
 * is ours: Microsoft's image (IMAGES.sqlServer, ./images.ts), run as its documented non-root user `mssql` (10001), probes every 10 s.
 */
export const DATABASE = {
  /** StatefulSet, Service, pod label `app` and the host part of the address. */
  serverName: 'mssql',
  /** sqlcmd of the image (tools 18: `-C` trusts the server's self-signed certificate). */
  sqlcmd: '/opt/mssql-tools18/bin/sqlcmd',
  /** The server writes data, logs and its own files here. */
  dataPath: '/var/opt/mssql',
  /** The dedicated backup volume, mounted into the server: BACKUP TO DISK writes server-side. */
  backupPath: '/var/opt/mssql/backup',
  user: 10001,
  portName: 'tds',
  /** The administrator login (5.4); its password comes from the Secret below. */
  administrator: SQL_SERVER_ADMINISTRATOR,
  adminSecret: { name: 'database-admin', key: 'password' },
  probe: { periodSeconds: 10, timeoutSeconds: 5 },
  /**
   * Schema migrations (9.4): a PreSync hook Job of the application chart. One retry for a
   * transient connection error; the deadline is the contract's sync timeout (8, 300 s): a
   * hook that has not ended by then fails, and the sync with it.
   */
  migrations: {
    imageSuffix: 'migrations',
    backoffLimit: 1,
    /**
     * The migration tool of the migrations image is Entity Framework Core's (not shown in
     * the contract; the one its "migration history table" and "update database to a named
     * migration" describe): the table that records each applied migration by id, the ids
     * sorting in the order they were made (`<yyyyMMddHHmmss>_<Name>`).
     */
    historyTable: '__EFMigrationsHistory',
    /**
     * The image's arguments that update the database to a named migration, applying or
     * reverting what lies between (EF Core's `database update <migration>`); without
     * arguments the image applies every pending migration (the Sync hook).
     */
    updateTo: (migration: string): string[] => ['database', 'update', migration],
    /** A migration id the tool accepts: letters, digits and `_` (EF Core's `<timestamp>_<Name>`). */
    idPattern: /^[A-Za-z0-9_]+$/,
  },
  /**
   * The application's login, database and user, created by a Sync hook Job in the wave after
   * the server (healthy once it answers queries) and before the application's migrations
   * (a later Application). Two retries for a server still settling; the deadline is the
   * contract's sync timeout (8, 300 s).
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
   * volume never fills (size it for `keep` full backups).
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
