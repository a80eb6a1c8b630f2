import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { KubeClient } from './kube-client';
import type { LiveContainers } from './live-containers';
import { LoopbackProxy } from './loopback-proxy';
import { ClusterEgress } from './cluster-egress';
import { Supervisor } from './processes';
import type { RunContext } from './run-start';
import { RecordingServer } from './webhook-sink';

/** The signals a run stops on, cleanly: everything it started stopped, its folder removed. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * A run's folder and what it starts, and its end: each phase hands over what it started as
 * it starts it, and `end` (the run's `finally`), or a stop signal before that, stops it all
 * once, in this order, and removes the folder (unless `keep`).
 */
export interface RunScope {
  readonly dir: string;
  readonly supervisor: Supervisor;
  readonly proxy: LoopbackProxy;
  /** The API server's way into the cluster network (e2e/cluster-egress.ts). */
  readonly egress: ClusterEgress;
  readonly chat: RecordingServer;
  /** Set once the run ends: the dry-run beside it stops at its next step. */
  readonly ending: () => boolean;
  /** Set once the run ends: the stand-in controllers' loop stops after its pass. */
  readonly stopControllers: () => boolean;
  readonly servingCharts: (charts: { close: () => Promise<void> }) => void;
  readonly watching: (client: KubeClient) => void;
  readonly containersStarted: (liveContainers: LiveContainers) => void;
  readonly controllersRunning: (controllersDone: Promise<void>) => void;
  readonly dryRunRunning: (dryRunSettled: Promise<unknown>) => void;
  /** Clean up (once: a signal's cleanup already under way is awaited), then stop handling the stop signals. */
  readonly end: () => Promise<void>;
}

/** Make the run's folder and start handling the stop signals. */
export function openRun(context: Pick<RunContext, 'options' | 'log'>): RunScope {
  const { options, log } = context;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-e2e-'));
  fs.chmodSync(dir, 0o711);
  const supervisor = new Supervisor(path.join(dir, 'logs'), dir);
  const proxy = new LoopbackProxy();
  const egress = new ClusterEgress();
  let charts: { close: () => Promise<void> } | undefined;
  let stopControllers = false;
  let controllersDone: Promise<void> = Promise.resolve();
  let liveContainers: LiveContainers | undefined;
  let watchingClient: KubeClient | undefined;
  /** Set once the run ends: the dry-run beside it stops at its next step. */
  let ending = false;
  let dryRunSettled: Promise<unknown> = Promise.resolve();
  const chat = new RecordingServer();
  const cleanup = async (): Promise<void> => {
    ending = true;
    stopControllers = true;
    await controllersDone.catch(() => undefined);
    watchingClient?.close();
    await liveContainers?.close();
    // The notifications controller posts to the chat until it stops.
    await supervisor.stopAll();
    await dryRunSettled;
    await chat.close();
    await proxy.close();
    await egress.close();
    await charts?.close();
    if (options.keep) log(`run folder kept: ${dir} (logs in ${supervisor.logDir})`);
    else fs.rmSync(dir, { recursive: true, force: true });
  };
  let cleaning: Promise<void> | undefined;
  const cleanupOnce = (): Promise<void> => (cleaning ??= cleanup());
  // Handled until the cleanup has ended: a signal during it (a second Ctrl-C, a timeout's
  // SIGTERM while a stop hangs) exits at once, and the exit kills every process still running
  // (Supervisor); without a handler it would end this process and leave them running.
  const onSignal = (): void => {
    if (cleaning !== undefined) process.exit(130);
    void cleanupOnce().finally(() => process.exit(130));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);

  return {
    dir,
    supervisor,
    proxy,
    egress,
    chat,
    ending: () => ending,
    stopControllers: () => stopControllers,
    servingCharts: (served) => {
      charts = served;
    },
    watching: (client) => {
      watchingClient = client;
    },
    containersStarted: (containers) => {
      liveContainers = containers;
    },
    controllersRunning: (done) => {
      controllersDone = done;
    },
    dryRunRunning: (settled) => {
      dryRunSettled = settled;
    },
    end: async () => {
      await cleanupOnce();
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    },
  };
}
