/**
 * The platform contract's own constants (docs/platform-contract.md): the limits table of
 * section 8 and the fixed shapes of sections 1-4, each with the section it comes from.
 * Tests read the rendered objects and compare them with these, so a drift here fails a
 * test. Where the contract is silent the platform
 * chooses (./choices.ts); what upstream software defines is in ./upstream.ts.
 */

/** 1.2: the environments in promotion order; promotion moves a version one step to the right. The one list of their names. */
export const ENVIRONMENT_ORDER = ['local', 'testing', 'staging', 'production'] as const;

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

/** 2.2 / 8: probe paths, ports and timings. */
export const PROBES = {
  liveness: { path: '/health', port: PORTS.application, initialDelaySeconds: 30, periodSeconds: 10 },
  readiness: { path: '/ready', port: PORTS.application, initialDelaySeconds: 5, periodSeconds: 5 },
} as const;

/** 4: metrics are served by the pod on this path and port. */
export const METRICS = { path: '/metrics', port: PORTS.application } as const;

/** 2.1 / 8: RollingUpdate maxUnavailable / maxSurge. */
export const ROLLING_UPDATE = { maxUnavailable: 1, maxSurge: 1 } as const;

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
   * The most the smoke test reads of an answer (not in the contract): a login answer is a
   * token in a few hundred bytes, so a longer one is an error, never read to the end.
   */
  maxBodyBytes: 64 * 1024,
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
