import type { DryRunResult } from './dry-run';
import type { IssuedCertificate } from './cert-manager';
import type { ProxyTopology } from './envoy-gateway';
import type { GeneratedMonitoring } from './prometheus-operator';
import type { ExecResult } from './exec';
import type { MigrationRun, SmokeRun } from './live-containers';

/** What `npm run e2e` was asked to do. */
export interface E2eOptions {
  /** The environment to bootstrap and converge. */
  readonly environment: string;
  /** The checkout whose committed dist/ and secrets/ are served. */
  readonly projectRoot: string;
  /**
   * How long the Applications may take to converge.
   * @default 600 s
   */
  readonly timeoutSeconds?: number;
  /**
   * End the run, not converged, once every Application that has not converged has kept the
   * same state this many seconds and all the others have converged (e2e/convergence.ts,
   * `settled`): for a run expected not to converge, which a stuck Application would
   * otherwise keep waiting to its timeout. A run that finds an unmendable Application then
   * stops only once the others have converged, stopped or kept their state that long
   * (`stillChanging`).
   * @default - wait to the timeout
   */
  readonly settleSeconds?: number;
  /**
   * Also server-side dry-run every object of every environment.
   * @default true
   */
  readonly dryRun?: boolean;
  /** Keep the run folder (logs, certificates, kubeconfig) instead of removing it. */
  readonly keep?: boolean;
  /** The age key file to give the repository server (SOPS_AGE_KEY_FILE). */
  readonly ageKeyFile?: string;
  /**
   * A bash command run once every Application has converged, with KUBECONFIG set to the
   * cluster's (`npm run e2e -- --exec 'npm run ops -- status --env local'`); the run fails
   * when it fails.
   * @default - none
   */
  readonly exec?: string;
  /**
   * Seconds the command may run.
   * @default 1800
   */
  readonly execTimeoutSeconds?: number;
  readonly log?: (line: string) => void;
}

/** The `--report` JSON. */
export interface E2eReport {
  readonly environment: string;
  readonly kubernetes: string;
  readonly argocd: string;
  readonly applications: readonly { name: string; sync: string; health: string; message: string }[];
  /** What ran behind each upstream release: its real controller (with the version run) or a stand-in. */
  readonly controllers: readonly { release: string; chart: string; version: string; runs: 'real' | 'real chart' | 'stand-in'; served: 'real chart' | 'stand-in chart' | 'release manifests' }[];
  readonly dryRun: readonly DryRunResult[];
  /** The `--exec` command and how it ended; absent when none was given or the Applications did not converge. */
  readonly exec?: ExecResult;
  /**
   * The texts Argo CD's notifications controller posted to the team chat (the run's webhook
   * sink, when local's Secrets were re-encrypted for a throwaway key), in order.
   */
  readonly notifications: readonly string[];
  /**
   * Why the run stopped before its timeout: an Application no later wave or retry could mend
   * (e2e/convergence.ts, `unmendable`). Absent when the run waited for convergence to the end.
   */
  readonly stopped?: string;
  /**
   * Why the run ended before its timeout with nothing unmendable: `--settle` (e2e/convergence.ts,
   * `settled`). Absent without `--settle` or when the run did not end that way.
   */
  readonly settled?: string;
  /**
   * For an environment that follows its published charts: each application's chart the run
   * published to its registry, and the version its Application was synced at when the run ended.
   */
  readonly publishedCharts?: readonly { application: string; reference: string; published: string; synced: string }[];
  /** Every Certificate when the run ended, with the certificate cert-manager issued into its Secret. */
  readonly certificates: readonly IssuedCertificate[];
  /** What prometheus-operator generated when the run ended: rule files and Alertmanager configurations. */
  readonly monitoring: GeneratedMonitoring;
  /** Every run of the migrations image (the Sync hooks', the live operations' Jobs), played on loopback with its pod's connection string, in order. */
  readonly migrations: readonly MigrationRun[];
  /** Every smoke hook's HTTP step, its script run on loopback against the application pod its Service sends to, in the order they ended. */
  readonly smoke: readonly SmokeRun[];
  /** Every Envoy proxy pod of a Gateway with its node's zone and the zone Envoy Gateway's topology injector annotated it with (e2e/envoy-gateway.ts `TOPOLOGY_INJECTOR`). */
  readonly gatewayProxies: readonly ProxyTopology[];
  /**
   * The same observations once every Application had converged, before the `--exec` command
   * changed anything: what the committed project converged to, in a run that then operates on it.
   * Absent when no command ran.
   */
  readonly converged?: ObservedState;
  readonly durationSeconds: number;
  /**
   * When each phase of the run ended, in seconds from its start, in order: the toolchain
   * check, the control plane, the servers (git, charts, registry), Argo CD, the bootstrap,
   * each Application first converged (Healthy for one only an operator syncs), the
   * operator's sync, the `--exec` command; and the dry-run, which runs beside them, where it
   * ended. What did not happen is absent. `npm run bench -- --only e2e` prints them.
   */
  readonly phases: readonly {
    readonly phase: string;
    readonly seconds: number;
    /** When a phase that ran beside the others (the dry-run) started, in seconds from the start; absent for one that followed the phase before it. */
    readonly since?: number;
  }[];
  /** True when every Application is Synced and Healthy and every dry-run passed. */
  readonly passed: boolean;
}

/** What the run observed in the cluster at one moment (the report's fields of the same names). */
export type ObservedState = Pick<E2eReport, 'notifications' | 'certificates' | 'monitoring' | 'migrations' | 'smoke' | 'gatewayProxies'>;
