import { REFRESH_ANNOTATION } from '../src/cluster/argo-cd';
import type { KubeClient, KubeObject } from './kube-client';

// The refreshes the convergence watch (e2e/convergence.ts) asks of Argo CD, as an operator's
// `argocd app get --refresh` does: each shortens a wait Argo CD would end by itself, and
// decides nothing.

/** How long after its last reconciliation a Synced, Progressing Application gets a refresh asked of it. */
export const REFRESH_AFTER_SECONDS = 3;

/**
 * Whether an Application waits on a status update Argo CD may not have noticed: Synced,
 * Progressing, no operation running, and last reconciled `REFRESH_AFTER_SECONDS` or more
 * before `now`. Argo CD refreshes an Application when the cluster cache ties an updated
 * object to it, and otherwise only periodically (`--app-resync`, 120 s here without jitter,
 * 120 s plus up to 60 s of jitter by default). It ties no CRD to any Application: a CRD carries no
 * tracking annotation (v3.6.1 util/argo/resource_tracking.go, "CRDs don't get tracking
 * annotations"; controller/cache/cache.go). On the e2e cluster each Application whose CRDs
 * were not yet Established when its sync ended (gateway-crds, cert-manager,
 * kube-prometheus-stack, Flagger, Strimzi) waited 10-16 s for the periodic refresh.
 */
export function awaitsRefresh(app: KubeObject, now: number): boolean {
  if (app.status?.sync?.status !== 'Synced' || app.status?.health?.status !== 'Progressing') return false;
  if (app.status?.operationState?.phase === 'Running' || app.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined) return false;
  return reconciledLongEnoughAgo(app, now);
}

/** Whether Argo CD last reconciled the Application `REFRESH_AFTER_SECONDS` or more before `now` (false when it never did). */
function reconciledLongEnoughAgo(app: KubeObject, now: number): boolean {
  const reconciledAt = Date.parse(String(app.status?.reconciledAt ?? ''));
  return Number.isFinite(reconciledAt) && now - reconciledAt >= REFRESH_AFTER_SECONDS * 1000;
}

/**
 * The hook Jobs a running sync operation waits on (its results whose `hookPhase` is still
 * Running: gitops-engine pkg/sync, "waiting for completion of hook ..."), as `namespace/name`.
 */
export function runningHookJobs(app: KubeObject): string[] {
  const operation = app.status?.operationState;
  if (operation?.phase !== 'Running') return [];
  const results = (operation.syncResult?.resources ?? []) as { kind?: string; namespace?: string; name?: string; hookType?: string; hookPhase?: string }[];
  return results
    .filter((r) => r.kind === 'Job' && r.hookType !== undefined && r.hookPhase === 'Running')
    .map((r) => `${r.namespace ?? app.spec?.destination?.namespace ?? ''}/${r.name}`);
}

/**
 * Whether Argo CD found no AppProject of the Application's name. Its controller looks the
 * project up in its own informer's cache (v3.6.1 controller/appcontroller.go,
 * `refreshAppConditions` through `getAppProj`, "Application referencing project %s which does
 * not exist"), which may not yet hold a project applied a moment before the Application (the
 * bootstrap applies both, a moment after the controller started and its informers' first
 * list), and does not look again before the Application's next refresh: the periodic one
 * (`--app-resync`, 120 s here) or one asked. The project informer's arrival does not refresh
 * the Application (`appProjectEventHandlerFuncs` only invalidates the project cache), and the
 * failed reconciliation leaves `status.reconciledAt` unset (it returns before setting it), so
 * a refresh is asked by the clock: `PROJECT_REFRESHES` times, `PROJECT_REFRESH_SECONDS` apart.
 */
export function missingProject(app: KubeObject): boolean {
  return ((app.status?.conditions ?? []) as { type?: string; message?: string }[]).some(
    (condition) => condition.type === 'InvalidSpecError' && /^Application referencing project \S+ which does not exist$/.test(condition.message ?? ''),
  );
}

/**
 * The message of each comparison error an Application shows (its `ComparisonError`
 * conditions). Argo CD compares an Application again only when something it tracks changes, when
 * asked, or at its periodic refresh (`--app-resync`, 120 s here): a comparison that failed for
 * a passing cause (the repository server or a chart repository not answering yet) would show its
 * error until then, and the judge calls one final once it stayed FAIL_FAST_SECONDS
 * (e2e/convergence.ts `unmendable`).
 */
export function comparisonErrors(app: KubeObject): string[] {
  return ((app.status?.conditions ?? []) as { type?: string; message?: string }[]).filter((condition) => condition.type === 'ComparisonError').map((condition) => condition.message ?? '');
}

/**
 * How many refreshes an Application's comparison errors get asked, each for another message:
 * the repository server answers from its cache after three failed generations of the same
 * source (v3.6.1 cmd/argocd-repo-server, `ARGOCD_REPO_SERVER_PAUSE_GENERATION_AFTER_FAILED_ATTEMPTS`,
 * default 3; reposerver/repository/repository.go), so a message that changes at each attempt
 * settles by then.
 */
export const COMPARISON_REFRESHES = 3;

/** How many seconds apart the refreshes of an Application whose project Argo CD did not find are asked. */
export const PROJECT_REFRESH_SECONDS = 5;

/**
 * How many refreshes an Application whose project Argo CD did not find gets asked: one every
 * `PROJECT_REFRESH_SECONDS` over the `FAIL_FAST_SECONDS` (30 s) after which the judge calls the
 * error final (e2e/convergence.ts). A CI run once saw the one refresh asked at once come before
 * the controller's project informer held the project, and the run stopped 30 s later.
 */
export const PROJECT_REFRESHES = 6;

/** Whether a Job has ended: its Complete or Failed condition is True (batch/v1 JobConditionType). */
export function jobEnded(job: KubeObject | undefined): boolean {
  return ((job?.status?.conditions ?? []) as { type?: string; status?: string }[]).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/**
 * Ask Argo CD to refresh, as an operator's `argocd app get --refresh` does:
 * - each Application that `awaitsRefresh`, once per reconciliation;
 * - each Application whose running sync waits on a hook Job that has ended, once per Job.
 *   Argo CD looks at a running operation again 5 s after an object of it changed
 *   (v3.6.1 controller/appcontroller.go, `appOperationRequeueDelay`), and at once when the
 *   Application itself is updated (its informer's UpdateFunc), which the request is; a local
 *   run waits on three hooks one after another (the database's setup, then each
 *   application's migrations and smoke hook).
 * - each Application whose project Argo CD did not find, every `PROJECT_REFRESH_SECONDS`,
 *   at most `PROJECT_REFRESHES` times (`missingProject`);
 * - each Application showing a comparison error, once per message and at most
 *   `COMPARISON_REFRESHES` times, `REFRESH_AFTER_SECONDS` after its reconciliation
 *   (`comparisonErrors`): an error that lasts is shown again, and the judge's clock goes on.
 * Argo CD then judges the Application and its hooks itself, as it would a few seconds later:
 * it shortens a wait and decides nothing (docs/e2e.md, deviations).
 */
export class ProgressingRefresher {
  /** Each Application's `status.reconciledAt` when its refresh was asked for; each operation's hook Job that was. */
  private readonly asked = new Map<string, string>();
  /** How many refreshes each Application's comparison errors got asked. */
  private readonly comparisonRefreshes = new Map<string, number>();
  /** When each Application's refreshes for its missing project were asked. */
  private readonly projectRefreshes = new Map<string, number[]>();

  constructor(private readonly client: KubeClient) {}

  async poll(apps: readonly KubeObject[], now = Date.now()): Promise<void> {
    for (const app of apps) {
      const reconciledAt = String(app.status?.reconciledAt ?? '');
      if (missingProject(app)) {
        const asked = this.projectRefreshes.get(app.metadata.name) ?? [];
        const last = asked.at(-1);
        if (asked.length < PROJECT_REFRESHES && (last === undefined || now - last >= PROJECT_REFRESH_SECONDS * 1000)) {
          this.projectRefreshes.set(app.metadata.name, [...asked, now]);
          await this.refresh(app);
        }
        continue;
      }
      const unasked = comparisonErrors(app).filter((message) => !this.asked.has(`${app.metadata.name}\ncomparison\n${message}`));
      const comparisonRefreshes = this.comparisonRefreshes.get(app.metadata.name) ?? 0;
      if (unasked.length > 0 && comparisonRefreshes < COMPARISON_REFRESHES && reconciledLongEnoughAgo(app, now)) {
        for (const message of unasked) this.asked.set(`${app.metadata.name}\ncomparison\n${message}`, reconciledAt);
        this.comparisonRefreshes.set(app.metadata.name, comparisonRefreshes + 1);
        await this.refresh(app);
        continue;
      }
      if (awaitsRefresh(app, now) && this.asked.get(app.metadata.name) !== reconciledAt) {
        this.asked.set(app.metadata.name, reconciledAt);
        await this.refresh(app);
        continue;
      }
      for (const job of runningHookJobs(app)) {
        // Per operation: a later sync makes its hooks again under the same names.
        const key = `${app.metadata.name}\n${String(app.status?.operationState?.startedAt ?? '')}\n${job}`;
        if (this.asked.has(key)) continue;
        const [namespace, name] = job.split('/') as [string, string];
        if (!jobEnded(await this.client.get('batch/v1', 'Job', name, namespace).catch(() => undefined))) continue;
        this.asked.set(key, job);
        await this.refresh(app);
        break;
      }
    }
  }

  private async refresh(app: KubeObject): Promise<void> {
    // A request that fails (the Application deleted meanwhile) only leaves the periodic refresh.
    await this.client.mergePatch(app, { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } }).catch(() => undefined);
  }
}
