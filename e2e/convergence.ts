import { compareText } from '../src/base/text-order';
import { type ApplicationState, applicationState, converged, formatApplicationTable, waveOf } from '../src/cluster/argo-cd';
import type { KubeClient } from './kube-client';
import type { KubeObject } from './kube-client';
import { sleep } from './processes';

/**
 * How long an Application may show the same comparison error before the run stops: a
 * revision that does not resolve, manifests that do not generate or decrypt. A transient one
 * (the repository server starting) is gone by then. Not Argo CD's; the harness's choice.
 */
export const FAIL_FAST_SECONDS = 30;

/** Argo CD's conditions that say the desired state cannot be computed at all (pkg/apis/application/v1alpha1 types.go). */
const COMPARISON_FAILURES = ['ComparisonError', 'InvalidSpecError'] as const;

/**
 * What no later wave or retry can mend in an Application, seen at `now`: a comparison error
 * or an object the API server refuses as invalid that stayed `FAIL_FAST_SECONDS` (`firstSeen`
 * remembers when each appeared), or a sync that ended Failed or Error after its last retry (Argo CD does not auto-sync a revision again
 * once its sync failed: controller/appcontroller.go, "failed previous sync attempt").
 */
export function unmendable(app: KubeObject, firstSeen: Map<string, number>, now: number): string | undefined {
  const name = app.metadata.name;
  for (const condition of (app.status?.conditions ?? []) as { type: string; message?: string }[]) {
    if (!(COMPARISON_FAILURES as readonly string[]).includes(condition.type)) continue;
    const key = `${name}\n${condition.type}\n${condition.message ?? ''}`;
    if (!firstSeen.has(key)) firstSeen.set(key, now);
    if (now - firstSeen.get(key)! >= FAIL_FAST_SECONDS * 1000) return `${name}: ${condition.type} for ${FAIL_FAST_SECONDS} s: ${condition.message ?? ''}`;
  }
  const operation = app.status?.operationState;
  // The API server's refusal of an object as invalid (HTTP 422, StatusReasonInvalid: "<Kind>
  // \"<name>\" is invalid: <field>: ..."), in the operation's message or a resource's result:
  // a retry sends the same object again. A missing CRD or webhook reads otherwise.
  const refusals = [operation?.message, ...((operation?.syncResult?.resources ?? []) as { message?: string }[]).map((r) => r.message)].filter(
    (message): message is string => typeof message === 'string' && / is invalid: /.test(message),
  );
  for (const message of refusals.slice(0, 1)) {
    const key = `${name}\ninvalid\n${message.replace(/^Retrying attempt #\d+ at \S+: /, '')}`;
    if (!firstSeen.has(key)) firstSeen.set(key, now);
    if (now - firstSeen.get(key)! >= FAIL_FAST_SECONDS * 1000) return `${name}: the API server refused for ${FAIL_FAST_SECONDS} s: ${message}`;
  }
  const limit = app.spec?.syncPolicy?.retry?.limit;
  if (operation !== undefined && ['Failed', 'Error'].includes(String(operation.phase)) && (operation.retryCount ?? 0) >= (limit ?? 0) && app.spec?.syncPolicy?.automated !== undefined) {
    return `${name}: sync ${operation.phase} after ${operation.retryCount ?? 0} retries: ${operation.message ?? ''}`;
  }
  return undefined;
}


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
}): Promise<{ states: ApplicationState[]; converged: boolean; stopped?: string }> {
  const { client, expected, log } = options;
  const last = new Map<string, string>();
  const firstSeen = new Map<string, number>();
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
    const now = Date.now();
    const stopped = apps.map((app) => unmendable(app, firstSeen, now)).find((reason) => reason !== undefined);
    if (stopped !== undefined) {
      log(`stopping: ${stopped}`);
      return { states, converged: false, stopped };
    }
    if (now > deadline) return { states, converged: false };
    await sleep(2_000);
  }
}

/** The final table: every Application with its sync, health and message. */
export function formatTable(states: readonly ApplicationState[]): string {
  return formatApplicationTable(states);
}
