import { compareText } from '../src/base/text-order';
import { type ApplicationState, applicationState, converged, formatApplicationTable, waveOf } from '../src/cluster/argo-cd';
import type { KubeClient } from './kube-client';
import { sleep } from './processes';


/**
 * Watch the Applications of `expected` (name to sync wave) until every one is Synced
 * and Healthy or `timeoutMs` passes, printing each change of an Application's state as
 * it happens, wave by wave. `between` runs every poll (the stand-in controllers).
 */
export async function watchConvergence(options: {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly expected: ReadonlyMap<string, number>;
  readonly timeoutMs: number;
  readonly log: (line: string) => void;
  readonly between: () => Promise<void>;
  readonly waitingPods: () => ReadonlyMap<string, string>;
  readonly startedAt: number;
  /**
   * The operator has not synced yet: Applications only an operator syncs count when Healthy.
   * @default false
   */
  readonly beforeOperatorSync?: boolean;
}): Promise<{ states: ApplicationState[]; converged: boolean }> {
  const { client, expected, log } = options;
  const last = new Map<string, string>();
  const deadline = Date.now() + options.timeoutMs;
  let states: ApplicationState[] = [];
  for (;;) {
    await options.between();
    const apps = await client.list('argoproj.io/v1alpha1', 'Application', options.namespace);
    const byName = new Map(apps.map((a) => [a.metadata.name, a]));
    const names = [...new Set([...expected.keys(), ...byName.keys()])];
    states = names
      .map((name) => {
        const app = byName.get(name);
        const wave = waveOf(app, expected.get(name) ?? 0);
        return applicationState(app, name, wave, options.waitingPods());
      })
      .sort((a, b) => a.wave - b.wave || compareText(a.name, b.name));
    const elapsed = Math.round((Date.now() - options.startedAt) / 1000);
    for (const state of states) {
      const line = `${state.sync.padEnd(10)} ${state.health.padEnd(12)} ${state.message}`.trimEnd();
      if (last.get(state.name) === line) continue;
      last.set(state.name, line);
      log(`${String(elapsed).padStart(4)} s  wave ${String(state.wave).padStart(2)}  ${state.name.padEnd(26)} ${line.length > 220 ? `${line.slice(0, 217)}...` : line}`);
    }
    const missing = [...expected.keys()].filter((name) => !byName.has(name));
    if (missing.length === 0 && states.every((state) => converged(state, options.beforeOperatorSync))) return { states, converged: true };
    if (Date.now() > deadline) return { states, converged: false };
    await sleep(2_000);
  }
}

/** The final table: every Application with its sync, health and message. */
export function formatTable(states: readonly ApplicationState[]): string {
  return formatApplicationTable(states);
}
