import { compareText } from '../src/base/text-order';
import { eventTime } from '../src/cluster/events';
import { type ApplicationState, applicationState, converged, failedResults, formatApplicationTable, healthCauses } from '../src/cluster/application-state';
import { oneLine, waveOf } from '../src/cluster/argo-cd';
import { type KubeClient, type KubeObject, resourceId } from './kube-client';
import { sleep } from './processes';
import { ProgressingRefresher } from './refresh';

/**
 * How long an Application may show the same comparison error before the run stops: a
 * revision that does not resolve, manifests that do not generate or decrypt. A transient one
 * (the repository server starting) is gone by then. Not Argo CD's; the harness's choice.
 */
export const FAIL_FAST_SECONDS = 30;

/** What the watch of the convergence wakes on (KubeClient.watchKinds): its Applications, and the hook Jobs their syncs wait on. */
export const CONVERGENCE_KINDS = ['argoproj.io/v1alpha1/Application', 'batch/v1/Job'] as const;

/** The least time between two rounds of the convergence watch (a burst of changes is one round). */
const MIN_ROUND_GAP_MS = 250;

/** Argo CD's conditions that say the desired state cannot be computed at all (pkg/apis/application/v1alpha1 types.go). */
const COMPARISON_FAILURES = ['ComparisonError', 'InvalidSpecError'] as const;

/** When each problem an Application shows was first seen; what a poll no longer shows is forgotten. */
export class ProblemClock {
  private readonly firstSeen = new Map<string, number>();
  private seenNow = new Set<string>();
  /** The time of the current poll. */
  private now = 0;

  /** Start a poll at `now`. */
  poll(now: number): void {
    for (const key of this.firstSeen.keys()) if (!this.seenNow.has(key)) this.firstSeen.delete(key);
    this.seenNow = new Set();
    this.now = now;
  }

  /** Seconds the problem `key` has been seen without a poll missing it. */
  ageSeconds(key: string): number {
    this.seenNow.add(key);
    if (!this.firstSeen.has(key)) this.firstSeen.set(key, this.now);
    return (this.now - this.firstSeen.get(key)!) / 1000;
  }
}

/**
 * What each Application's last failed sync attempt said (its failed hooks and objects).
 * Argo CD clears an attempt's results when it starts the next retry ("Retrying operation.
 * Attempt #N"), so a run that ends mid-retry would otherwise lose why the sync fails.
 */
export class LastFailures {
  private readonly byName = new Map<string, readonly string[]>();

  /** Remember the failed results `app` shows now, if any. */
  see(app: KubeObject): void {
    const failed = failedResults(app.status?.operationState);
    if (failed.length > 0) this.byName.set(app.metadata.name, failed);
  }

  /** The failed results of an Application's last failed attempt (none seen: empty). */
  of(name: string): readonly string[] {
    return this.byName.get(name) ?? [];
  }

  /** `state` with its Application's last failed attempt added when its message no longer shows it. */
  explain(state: ApplicationState): ApplicationState {
    if (converged(state)) return state;
    const missing = (this.byName.get(state.name) ?? []).filter((line) => !state.message.includes(line));
    if (missing.length === 0) return state;
    const note = `last failed attempt: ${missing.join('; ')}`;
    return { ...state, message: state.message === '' ? note : `${state.message}; ${note}` };
  }
}

/**
 * The newest Warning event of each object, by `resourceId` (`<Kind> <namespace>/<name>`), as
 * `<reason>: <message>`: what `kubectl describe` shows last, where a controller that refuses
 * an object without a status of its own says why (Flagger, for a Canary it cannot
 * initialize: pkg/controller/scheduler.go `recordEventWarningf`).
 */
export function latestWarnings(events: readonly KubeObject[]): Map<string, string> {
  const newest = new Map<string, KubeObject>();
  for (const event of events) {
    if (event['type'] !== 'Warning' || event['involvedObject']?.kind === undefined) continue;
    const { kind, name, namespace } = event['involvedObject'];
    const id = resourceId(kind, name, namespace);
    const seen = newest.get(id);
    if (seen === undefined || compareText(eventTime(seen), eventTime(event)) <= 0) newest.set(id, event);
  }
  return new Map([...newest].map(([id, event]) => [id, `${String(event['reason'] ?? '')}: ${String(event['message'] ?? '').replace(/\s+/g, ' ').trim()}`]));
}

/**
 * `state` with the newest Warning event (`warnings`, see latestWarnings) of each of its
 * Application's resources that is not Healthy or that its health names as a cause
 * (healthCauses), for a run that did not converge.
 */
export function withWarnings(state: ApplicationState, app: KubeObject | undefined, warnings: ReadonlyMap<string, string>): ApplicationState {
  if (converged(state)) return state;
  const unhealthy = ((app?.status?.resources ?? []) as { kind: string; name: string; namespace?: string; health?: { status?: string } }[])
    .filter((resource) => resource.health !== undefined && resource.health.status !== 'Healthy')
    .map((resource) => resourceId(resource.kind, resource.name, resource.namespace));
  const notes = [...new Set([...unhealthy, ...healthCauses(app)])]
    .filter((id) => warnings.has(id))
    .map((id) => `${id} warned ${warnings.get(id)!}`);
  return notes.length === 0 ? state : { ...state, message: [state.message, ...notes].filter((part) => part !== '').join('; ') };
}

/**
 * How the API server words a refusal no retry mends (see `unmendable`): from the refused
 * object (`<Kind> "<name>" is invalid: ...`) or the webhook's name to the end.
 */
const REFUSED = /[\w.-]+ "[^"]+" is invalid: .*|admission webhook "[^"]+" denied the request: .*/;

/**
 * How helm words a chart's values schema refusing the values (helm v4.3.1
 * pkg/chart/common/util/values.go, `ToRenderValuesWithSchemaValidation`: "values don't meet the
 * specifications of the schema(s) in the following chart(s):\n" and each chart's errors), from
 * there to the end of the message. Argo CD 3.6.1 shows helm's stderr at the end of the
 * Application's ComparisonError: controller/state.go "Failed to load target state: failed to
 * generate manifest for source %d of %d: %w", the repository server's gRPC error, util/helm/cmd.go
 * "failed running helm: %w" over util/exec/exec.go `CmdError` ("`<command>` failed <cause>:
 * <stderr>"); the repository server caches it after three failures (reposerver/repository/
 * repository.go, "Manifest generation error (cached): ").
 */
const SCHEMA_REFUSAL = /values don't meet the specifications of the schema\(s\) in the following chart\(s\):[\s\S]*/;

/** An operation's message without what Argo CD appends on each retry (controller/appcontroller.go: ". Retrying attempt #N at T.", " (retried N times).") */
function withoutRetryNote(message: string): string {
  return message.replace(/\. Retrying attempt #\d+ at \S+\.$/, '').replace(/\s*\(retried \d+ times\)\.$/, '');
}

/**
 * What no later wave or retry can mend in an Application: at once, a chart's values schema
 * refusing its Helm values in a comparison error (`SCHEMA_REFUSAL`: the chart and the values
 * are those of a pinned version and revision, so no retry renders them otherwise; and the
 * message may name another random values file at each of the repository server's attempts
 * until it caches the error, reposerver/repository/repository.go `helmTemplate`, which would
 * start the clock again). Each of the rest only once it stayed `FAIL_FAST_SECONDS` (`clock`
 * says since when):
 * - a comparison error (a revision that does not resolve, manifests that do not generate or
 *   decrypt; Argo CD reports a repository error as one only after its own grace period);
 * - an object the API server refuses as invalid (HTTP 422, StatusReasonInvalid: "<Kind>
 *   \"<name>\" is invalid: ...") or a validating admission webhook denies ("admission webhook
 *   \"<name>\" denied the request: ...", k8s.io/apiserver pkg/admission/plugin/webhook/errors
 *   `ToStatusErr`), which a retry sends again unchanged; a missing CRD or an unreachable
 *   webhook reads otherwise and is waited for, since a later wave may install it. While a
 *   retry runs, Argo CD shows no result of the attempt before it: the refusal that attempt
 *   ended with (`lastFailed`, LastFailures) still counts, so the backoff's short windows
 *   between attempts add up instead of each starting the clock again;
 * - an automated sync that ended Failed or Error with the Application still OutOfSync: Argo
 *   CD does not sync that revision again by itself (controller/appcontroller.go, "Skipping
 *   auto-sync: failed previous sync attempt"). A sync that failed with every object applied
 *   (a hook, a Degraded resource) leaves it Synced and may still end Healthy;
 * - a resource of the Application that its controller leaves waiting on something no wave
 *   renders (`endless`, by `resourceId`, to why: a Certificate whose issuer does not exist,
 *   e2e/cert-manager.ts `missingIssuers`), which Argo CD reads as Progressing to the end.
 */
export function unmendable(app: KubeObject, clock: ProblemClock, lastFailed: readonly string[] = [], endless: ReadonlyMap<string, string> = new Map()): string | undefined {
  const name = app.metadata.name;
  const lasting = (key: string) => clock.ageSeconds(`${name}\n${key}`) >= FAIL_FAST_SECONDS;
  for (const condition of (app.status?.conditions ?? []) as { type: string; message?: string }[]) {
    if (!(COMPARISON_FAILURES as readonly string[]).includes(condition.type)) continue;
    const schemaRefusal = SCHEMA_REFUSAL.exec(condition.message ?? '')?.[0];
    if (schemaRefusal !== undefined) return `${name}: ${condition.type}: the chart refuses its values: ${oneLine(schemaRefusal)}`;
    if (lasting(`${condition.type}\n${condition.message ?? ''}`)) return `${name}: ${condition.type} for ${FAIL_FAST_SECONDS} s: ${condition.message ?? ''}`;
  }
  const operation = app.status?.operationState;
  const results = ((operation?.syncResult?.resources ?? []) as { message?: string }[]).map((r) => r.message);
  const retrying = operation?.phase === 'Running' && Number(operation?.retryCount ?? 0) > 0;
  const refusal = [...results, operation?.message, ...(retrying ? lastFailed : [])]
    .map((message) => (typeof message === 'string' ? REFUSED.exec(withoutRetryNote(message))?.[0] : undefined))
    .find((found): found is string => found !== undefined);
  if (refusal !== undefined && lasting(`invalid\n${refusal}`)) return `${name}: the API server refused for ${FAIL_FAST_SECONDS} s: ${refusal}`;
  const automated = app.spec?.syncPolicy?.automated !== undefined && app.spec.syncPolicy.automated.enabled !== false;
  if (automated && operation !== undefined && ['Failed', 'Error'].includes(String(operation.phase)) && app.status?.sync?.status === 'OutOfSync') {
    if (lasting(`failed\n${String(operation.startedAt ?? '')}`)) return `${name}: sync ${operation.phase}, still OutOfSync after ${FAIL_FAST_SECONDS} s: ${operation.message ?? ''}`;
  }
  for (const [id, why] of endlessOf(app, endless)) {
    if (lasting(`endless\n${id}\n${why}`)) return `${name}: ${id} waits without end, for ${FAIL_FAST_SECONDS} s: ${why}`;
  }
  return undefined;
}

/** The resources of an Application that `endless` names, with why each waits without end. */
function endlessOf(app: KubeObject | undefined, endless: ReadonlyMap<string, string>): [string, string][] {
  if (endless.size === 0) return [];
  return ((app?.status?.resources ?? []) as { kind: string; name: string; namespace?: string }[]).flatMap((resource) => {
    const id = resourceId(resource.kind, resource.name, resource.namespace);
    const why = endless.get(id);
    return why === undefined ? [] : [[id, why] as [string, string]];
  });
}

/** `state` with each of its Application's resources that waits without end (`endless`, see `unmendable`) and why, for a run that did not converge. */
export function withEndless(state: ApplicationState, app: KubeObject | undefined, endless: ReadonlyMap<string, string>): ApplicationState {
  if (converged(state)) return state;
  const notes = endlessOf(app, endless).map(([id, why]) => `${id} waits without end: ${why}`);
  return notes.length === 0 ? state : { ...state, message: [state.message, ...notes].filter((part) => part !== '').join('; ') };
}

/**
 * With `--settle`, what a run that found an unmendable Application still waits on before it
 * stops: the Applications that are neither converged nor unmendable (`ended`) and changed less
 * than `settleSeconds` before `now`. Empty: stop. The run that ends for one break then also
 * reports where the others settled, however soon the first was final. An Application that
 * does not exist yet counts as settled once it has stayed so (its parent may be the one that
 * cannot sync).
 */
export function stillChanging(
  states: readonly ApplicationState[],
  changedAt: ReadonlyMap<string, number>,
  now: number,
  settleSeconds: number,
  ended: ReadonlySet<string>,
  beforeOperatorSync = false,
): string[] {
  return states
    .filter((state) => !ended.has(state.name) && !converged(state, beforeOperatorSync) && now - (changedAt.get(state.name) ?? now) < settleSeconds * 1000)
    .map((state) => state.name);
}

/**
 * Why a run may end before its timeout although nothing is unmendable (`--settle`): every
 * Application has converged but some, and each of those has shown the same state (sync,
 * health, message) for `settleSeconds` or more, and at least `FAIL_FAST_SECONDS`. Undefined
 * while any Application does not exist yet, or one that has not converged is still changing.
 * `changedAt` says when each last changed.
 * It calls nothing final: the run ends unconverged, as at its timeout, only sooner. For what
 * waits without end and without an error Argo CD or the harness could call final: a Canary
 * Flagger cannot initialize stays Initializing, which Flagger retries each interval
 * (v1.44.0 pkg/controller/scheduler.go: `Initialize` reports the error as retriable).
 */
export function settled(
  states: readonly ApplicationState[],
  changedAt: ReadonlyMap<string, number>,
  now: number,
  settleSeconds: number,
  beforeOperatorSync = false,
): string | undefined {
  const waiting = states.filter((state) => !converged(state, beforeOperatorSync));
  // An Application that does not exist yet (applicationState: sync Missing) waits on its parent.
  if (waiting.length === 0 || waiting.some((state) => state.sync === 'Missing')) return undefined;
  // An error is final once it stayed FAIL_FAST_SECONDS (`unmendable`): a shorter quiet would
  // end as settled a run that the error stops, and report no error.
  const quiet = Math.max(settleSeconds, FAIL_FAST_SECONDS);
  if (stillChanging(waiting, changedAt, now, quiet, new Set(), beforeOperatorSync).length > 0) return undefined;
  return `settled for ${quiet} s with every other Application converged: ${waiting.map((state) => `${state.name} ${state.sync} ${state.health}`).join(', ')}`;
}

/** A condition as the run's log shows it: `Type=Status (Reason, since Time): message`. */
function conditionText(condition: { type?: string; status?: string; reason?: string; lastTransitionTime?: string; message?: string }): string {
  return `${condition.type}=${condition.status} (${condition.reason ?? 'no reason'}, since ${condition.lastTransitionTime ?? '?'})${condition.message ? `: ${condition.message}` : ''}`;
}

/**
 * The conditions of each resource an Application's health names as its cause (healthCauses),
 * read from the cluster, theirs and their listeners' (a Gateway's), one line each: what Argo
 * CD judged. The version of each comes from the Application's own resource list.
 */
export async function causeConditions(client: KubeClient, app: KubeObject | undefined): Promise<string[]> {
  const resources: Array<{ group?: string; version: string; kind: string; namespace?: string; name: string }> = app?.status?.resources ?? [];
  const lines: string[] = [];
  for (const cause of healthCauses(app)) {
    const resource = resources.find((r) => resourceId(r.kind, r.name, r.namespace) === cause);
    if (resource === undefined) continue;
    const object = await client.get(resource.group ? `${resource.group}/${resource.version}` : resource.version, resource.kind, resource.name, resource.namespace).catch(() => undefined);
    const conditions = [
      ...(object?.status?.conditions ?? []).map(conditionText),
      ...(object?.status?.listeners ?? []).flatMap((listener: { name?: string; conditions?: unknown[] }) => (listener.conditions ?? []).map((c: any) => `listener ${listener.name}: ${conditionText(c)}`)),
    ];
    lines.push(`${cause}: ${conditions.length > 0 ? conditions.join('; ') : object === undefined ? 'not found' : 'no conditions'}`);
  }
  return lines;
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
  /**
   * Called once for each Application, the first time it is converged.
   * @default - none
   */
  readonly onConverged?: (state: ApplicationState) => void;
  /**
   * End the run, unconverged, once `settled` says so (`--settle`); and a run that found an
   * unmendable Application only once `stillChanging` names none.
   * @default - wait until converged, unmendable or `timeoutMs`
   */
  readonly settleSeconds?: number;
  /**
   * The resources that wait without end, by `resourceId`, to why (see `unmendable`), asked
   * each round with the Applications listed.
   * @default - none
   */
  readonly endless?: (apps: readonly KubeObject[]) => Promise<ReadonlyMap<string, string>>;
}): Promise<{ states: ApplicationState[]; converged: boolean; stopped?: string; settled?: string }> {
  const { client, expected, log } = options;
  const last = new Map<string, string>();
  const changedAt = new Map<string, number>();
  const clock = new ProblemClock();
  const failures = new LastFailures();
  const seenConverged = new Set<string>();
  const refresher = new ProgressingRefresher(client);
  const deadline = Date.now() + options.timeoutMs;
  let states: ApplicationState[] = [];
  /** Whether the run found an unmendable Application and waits, with `--settle`, for the others. */
  let waitingToStop = false;
  /** The unmendable reasons logged. */
  const calledFinal = new Set<string>();
  for (;;) {
    // A change of an Application or a Job starts the next round; none, two seconds.
    const change = client.changed(2_000, CONVERGENCE_KINDS);
    await options.between();
    const apps = await client.list('argoproj.io/v1alpha1', 'Application', options.namespace);
    const byName = new Map(apps.map((a) => [a.metadata.name, a]));
    for (const app of apps) failures.see(app);
    const endless = options.endless === undefined ? new Map<string, string>() : await options.endless(apps);
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
      changedAt.set(state.name, Date.now());
      log(`${String(elapsed).padStart(4)} s  wave ${String(state.wave).padStart(2)}  ${state.name.padEnd(26)} ${line.length > 220 ? `${line.slice(0, 217)}...` : line}`);
      // Why Argo CD calls it Degraded, as the cause's own status says, even when it mends.
      if (state.health === 'Degraded') for (const cause of await causeConditions(client, byName.get(state.name))) log(`${' '.repeat(18)}${cause}`);
    }
    for (const state of states) {
      if (seenConverged.has(state.name) || !byName.has(state.name) || !converged(state, options.beforeOperatorSync)) continue;
      seenConverged.add(state.name);
      options.onConverged?.(state);
    }
    /** The states of a run that ends unconverged, with the last failed attempts and the newest warnings. */
    const explained = async () => {
      const warnings = latestWarnings(await client.list('v1', 'Event'));
      return states.map((state) => withEndless(withWarnings(failures.explain(state), byName.get(state.name), warnings), byName.get(state.name), endless));
    };
    const missing = [...expected.keys()].filter((name) => !byName.has(name));
    if (missing.length === 0 && states.every((state) => converged(state, options.beforeOperatorSync))) return { states, converged: true };
    const now = Date.now();
    clock.poll(now);
    const unmendables = apps.flatMap((app) => {
      const reason = unmendable(app, clock, failures.of(app.metadata.name), endless);
      return reason === undefined ? [] : [{ name: app.metadata.name, reason }];
    });
    // Each once, as it is found: a run stops for the first, the others' reasons are in the log.
    for (const { reason } of unmendables.filter((u) => !calledFinal.has(u.reason))) {
      calledFinal.add(reason);
      log(`final: ${reason}`);
    }
    const stopped = unmendables[0]?.reason;
    if (stopped !== undefined) {
      const changing = options.settleSeconds === undefined ? [] : stillChanging(states, changedAt, now, options.settleSeconds, new Set(unmendables.map((u) => u.name)), options.beforeOperatorSync);
      if (changing.length === 0) {
        log(`stopping: ${stopped}`);
        return { states: await explained(), converged: false, stopped };
      }
      if (!waitingToStop) log(`${stopped}; before stopping, waiting for ${changing.join(', ')} to keep their state ${options.settleSeconds} s (--settle)`);
      waitingToStop = true;
    }
    const quiet = options.settleSeconds === undefined || missing.length > 0 ? undefined : settled(states, changedAt, now, options.settleSeconds, options.beforeOperatorSync);
    if (quiet !== undefined) {
      log(`ending: ${quiet}`);
      return { states: await explained(), converged: false, settled: quiet };
    }
    if (now > deadline) return { states: await explained(), converged: false, ...(stopped === undefined ? {} : { stopped }) };
    await refresher.poll(apps);
    await Promise.all([change, sleep(MIN_ROUND_GAP_MS)]);
  }
}

/** The final table: every Application with its sync, health and message. */
export function formatTable(states: readonly ApplicationState[]): string {
  return formatApplicationTable(states);
}
