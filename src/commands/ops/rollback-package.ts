import { RefusedError, UsageError } from '../../base/errors';
import { operationRuns, readApplication } from '../../cluster/argo-cd';
import { resourcesToPrune, startSync, waitForHealthy, waitForSync } from '../../cluster/argo-cd-sync';
import { type HelmSource, chartRevision, helmSource, helmSourceField, setChartVersion } from '../../cluster/helm-source';
import { type HistoryEntry, applicationHistory } from '../../cluster/application-history';
import type { LiveObject } from '../../cluster/connection';
import { WAITS_SECONDS } from '../../contract/contract';
import { type PlatformChartId, ROOT_APPLICATION } from '../../contract/platform-charts';
import { applicationChartId, RENDERED_DIR } from '../../contract/layout';
import type { Application, Environment } from '../../environments';
import { HELM_RELEASE_ROWS, type HelmRelease, RELEASE_ROWS, isHelmRelease, releaseIn, releaseVersion } from '../../infrastructure/releases';
import { environmentValuesPath } from '../../environments/values-file';
import { chartVersionsPath, projectChartVersions } from '../../synth/chart-versions';
import { pauseApplications } from './pause';
import type { OpsTarget } from './target';

/**
 * The platform chart that renders one Application per infrastructure release: a child of the
 * root, the parent of the releases' Applications, whose self-heal puts git's chart version back.
 */
const RELEASES_PARENT: PlatformChartId = 'infrastructure';

/**
 * The infrastructure release `--release` names (a Helm row of RELEASE_ROWS), or a usage error
 * listing them; a release installed from its upstream's manifests (Argo CD) has no chart version
 * to roll back.
 */
export function infrastructureRelease(name: string, environment: Environment): HelmRelease {
  const release = RELEASE_ROWS.find((row) => row.name === name);
  const charts = HELM_RELEASE_ROWS.map((row) => row.name).join(', ');
  if (release === undefined) throw new UsageError(`--release "${name}" is not an infrastructure release (src/infrastructure/releases.ts): one of ${charts}`);
  if (!isHelmRelease(release)) {
    throw new UsageError(`--release "${name}" installs ${release.manifests.repoURL} ${releaseVersion(releaseIn(release, environment))}'s manifests, not a Helm chart: the package level rolls back chart versions (one of ${charts}); its tag goes back through git: infrastructure.versions.${name} of ${environmentValuesPath(environment.name)} (npm run upgrade -- --env ${environment.name} --release ${name} --version <tag> --allow-downgrade), review, merge, then sync ${name} as an operator`);
  }
  return release;
}

/**
 * What the package level rolls back: a Helm chart an Argo CD Application installs, what must be
 * paused so that no parent puts git's version back, and where git's version is written.
 */
export interface PackageSubject {
  /** The Application that installs the chart (the release's or the application's name). */
  readonly name: string;
  /** How messages name it: `release <name>` or `application <name>`. */
  readonly label: string;
  /** Its parents, the root first: paused before it (each would put git's version back). */
  readonly parents: readonly string[];
  /** The chart version this checkout's git gives it. */
  readonly pin: string;
  /** Where that version is written: `<where> <pin>` reads as a sentence. */
  readonly pinnedIn: string;
  /** Why an Application without a Helm source cannot be rolled back at this level, and what applies instead. */
  readonly notAChart: string;
  /** Where a version the history does not have goes instead. */
  readonly neverDeployed: string;
  /** How git must follow once it runs `version` (not git's), before automated sync resumes. */
  readonly gitFollows: (version: string) => string;
  /** How the JSON result names it: `{ release }` or `{ application }`. */
  readonly result: Readonly<Record<string, string>>;
}

/** An infrastructure Helm release (a row of HELM_RELEASE_ROWS): the `infrastructure` Application is its parent, the environment's values its pin. */
export function releaseSubject(row: HelmRelease, environment: Environment): PackageSubject {
  const release = releaseIn(row, environment) as HelmRelease;
  const { name } = release;
  const file = environmentValuesPath(environment.name);
  return {
    name,
    label: `release ${name}`,
    parents: [ROOT_APPLICATION, RELEASES_PARENT],
    pin: release.chart.version,
    pinnedIn: `this checkout's ${file} pins ${name} to`,
    notAChart: `Application ${name} does not install a Helm chart (spec.source.chart or spec.sources[].chart): the package level rolls back chart versions`,
    neverDeployed: `infrastructure.versions.${name} of ${file}`,
    gitFollows: (version) =>
      `infrastructure.versions.${name} of ${file} to ${version} (this checkout pins ${release.chart.version}): npm run upgrade -- --env ${environment.name} --release ${name} --version ${version} --allow-downgrade, review, merge`,
    result: { release: name },
  };
}

/**
 * An application whose Application follows its published chart (the registry option): a
 * child of the root, its version what synth writes into dist/<env>/gitops.yaml from the
 * record src/environments/<env>/chart-versions.json (`pin`: this checkout's; undefined when it has none).
 */
export function applicationSubject(environment: Environment, application: Application, pin: string | undefined): PackageSubject {
  const name = applicationChartId(application.name);
  const versions = chartVersionsPath(environment.name);
  const release = `npm run release or promote (docs/releases.md), then npm run publish -- --env ${environment.name}`;
  return {
    name,
    label: `application ${application.name}`,
    parents: [ROOT_APPLICATION],
    pin: pin ?? 'none',
    pinnedIn: `this checkout's ${versions} gives ${application.name} chart version`,
    notAChart:
      `Application ${name} has no Helm chart source (spec.source.chart or spec.sources[].chart): ${environment.name} follows git (${RENDERED_DIR}/${environment.name}), ` +
      `not a published chart; roll ${application.name} back at the orchestrator or controller level (--level orchestrator|controller --app ${application.name})`,
    neverDeployed: `a release: ${release}`,
    gitFollows: (version) =>
      `${application.name}'s chart version is what synth writes into ${RENDERED_DIR}/${environment.name}/gitops.yaml from ${versions} (this checkout: ${pin ?? 'none'}), ` +
      `so going back to ${version} for good is a release of the previous tag or values (${release}) or a revert of the commit that moved it, review, merge`,
    result: { application: application.name },
  };
}

/**
 * What the package level rolls back, `--release` or `--app` (exactly one; a usage error
 * otherwise): the release's row, or the application with the chart version this checkout's
 * record (src/environments/<env>/chart-versions.json) gives it (`root`: the project; `target` holds that one
 * application).
 */
export function packageSubject(target: OpsTarget, release: string | undefined, app: string | undefined, root: string): PackageSubject {
  if (release !== undefined && app !== undefined) {
    throw new UsageError('--release and --app are mutually exclusive at --level package: --release <infrastructure release> rolls back a release, --app <application> an application\'s published chart');
  }
  if (release !== undefined) return releaseSubject(infrastructureRelease(release, target.environment), target.environment);
  if (app === undefined) {
    throw new UsageError(`--level package takes --release <infrastructure release> (one of ${HELM_RELEASE_ROWS.map((row) => row.name).join(', ')}) or --app <application> (whose Application installs its published chart)`);
  }
  const { environment, applications } = target;
  const application = applications[0]!;
  return applicationSubject(environment, application, projectChartVersions(root, environment.name)[application.name]?.version);
}

/** How the package level is asked for. */
export interface PackageRollback {
  /** What is rolled back: a release or an application, with its Application of the same name. */
  readonly subject: PackageSubject;
  /**
   * The chart version to go back to: one the Application's history has.
   * @default - the newest version of the history other than the deployed one
   */
  readonly to?: string;
  /**
   * The history entry (Argo CD's history id, `argocd app history`) whose chart version to go back to, instead of `to`.
   * @default - `to`
   */
  readonly toRevision?: number;
  /** Delete the live objects the target version does not have. */
  readonly prune: boolean;
  /** Argo CD's forced sync: what cannot be patched is deleted and re-created (the contract's forced upgrade). */
  readonly force: boolean;
  /** Who: recorded with the pause and as the sync's initiator. */
  readonly by: string;
  /** Why: recorded with the pause. */
  readonly reason: string;
  /** Bound of each wait, in seconds: each pause in force, the Application Healthy at the target version. */
  readonly timeoutSeconds: number;
}

/** The chart version a history entry deployed (only entries of a Helm chart are kept: see packageTarget). */
const versionOf = (entry: HistoryEntry): string => entry.chartVersion!;

/** What a history entry deployed, as the history is printed: its chart version, or the commit of a source without a chart and what the entry recorded. */
const deployedBy = (entry: HistoryEntry): string => entry.chartVersion ?? `${entry.revision} (no chart: ${entry.recorded})`;

/**
 * The version deployed now (the newest history entry's) and the one to go back to: `to` when
 * the history has it (the deployed one too: a forced sync of it), else the newest version of
 * the history that differs from the deployed one. Only the entries that deployed a Helm chart
 * count: an Application that followed git before (an environment that moved to its published
 * charts) keeps those entries, whose revisions are commits, never chart versions. Refused,
 * changing nothing, when there is none.
 */
export function packageTarget(subject: PackageSubject, history: readonly HistoryEntry[], to: string | undefined, toRevision?: number): { readonly deployed: string; readonly target: string } {
  const { name } = subject;
  const charted = history.filter((entry) => entry.chartVersion !== undefined);
  const newest = history.at(-1);
  if (newest === undefined) throw new RefusedError(`Application ${name} has no sync history: there is no chart version to go back to`);
  if (newest.chartVersion === undefined) {
    throw new RefusedError(`Application ${name}: its newest sync (history entry ${newest.id}, revision ${newest.revision}) deployed no Helm chart, so there is no chart version to go back from`);
  }
  const deployed = versionOf(newest);
  const versions = [...new Set(charted.map(versionOf))];
  if (toRevision !== undefined) {
    const entry = history.find((candidate) => candidate.id === toRevision);
    if (entry === undefined) throw new RefusedError(`--to-revision ${toRevision}: the history of Application ${name} has no entry ${toRevision} (its entries: ${history.map((candidate) => candidate.id).join(', ')})`);
    if (entry.chartVersion === undefined) throw new RefusedError(`--to-revision ${toRevision}: history entry ${toRevision} of Application ${name} deployed no Helm chart (${entry.recorded})`);
    return { deployed, target: versionOf(entry) };
  }
  if (to !== undefined) {
    if (!versions.includes(to)) {
      throw new RefusedError(`--to ${to}: the history of Application ${name} has no chart version ${to} (its versions: ${versions.join(', ')}); a version never deployed goes through git: ${subject.neverDeployed}`);
    }
    return { deployed, target: to };
  }
  const earlier = charted.findLast((entry) => versionOf(entry) !== deployed);
  if (earlier === undefined) throw new RefusedError(`${subject.label}: its history has no chart version other than the deployed ${deployed}: give --to, or change the version in git`);
  return { deployed, target: versionOf(earlier) };
}

/**
 * 1.5's package level for a chart Argo CD installs (an infrastructure release, or an
 * application's published chart): its Application back to a chart version of its history,
 * with its parents paused first so none puts git's version back; the sync awaited, then the
 * health, then the version verified.
 */
export async function rollbackPackage(target: OpsTarget, request: PackageRollback): Promise<number> {
  const { cluster, controllerNamespace: namespace, say, environment } = target;
  const { subject } = request;
  const { name, pin } = subject;
  const app = await readApplication(cluster, namespace, name);
  const source = helmSource(app);
  if (source === undefined) throw new RefusedError(subject.notAChart);
  // Argo CD writes the history entry when a sync operation ends (PostSync hooks included): while
  // one runs, the newest version deployed is not in the history yet, so what to go back to is unknown.
  const running = app['status']?.operationState;
  if (operationRuns(running)) {
    throw new RefusedError(`Application ${name} has a sync operation ${running.phase === 'Running' ? 'running' : 'terminating'} (started ${running.startedAt ?? 'recently'}): its history lacks what it deploys until it ends; wait for it (npm run ops -- status --env ${environment.name}), then roll back`);
  }
  const history = applicationHistory(app);
  say(`ops rollback (package): ${subject.label}, chart ${source.chart} of ${source.repoURL}, in ${environment.name} on ${cluster.server}; ${subject.pinnedIn} ${pin}`);
  say(`Application ${name} history:`);
  for (const entry of history) say(`  ${entry.id}  ${deployedBy(entry)}  ${entry.deployedAt}  ${entry.initiatedBy}`);
  const { deployed, target: version } = packageTarget(subject, history, request.to, request.toRevision);
  const chosen = request.toRevision !== undefined ? ` (history entry ${request.toRevision})` : request.to === undefined ? ' (the newest other version of the history)' : '';
  say(`deployed ${deployed}; going back to ${version}${chosen}`);

  const order = [...subject.parents, name];
  const apps = await Promise.all(order.map((application) => (application === name ? app : readApplication(cluster, namespace, application))));
  const pauses = await pauseApplications(target, apps, request.by, request.reason, request.timeoutSeconds);
  for (const { application, result } of pauses) say(`Application ${application}: ${result}`);
  // An Application without automated sync (production's) had nothing to pause.
  const paused = pauses.filter((outcome) => outcome.paused).map(({ application }) => application);
  const resume = `npm run ops -- resume --env ${environment.name}`;
  const finish = (ok: boolean, detail: string, left: readonly string[] = []) => {
    say(`ops rollback (package): ${ok ? 'done' : 'FAILED'}: ${detail}`);
    say(paused.length > 0 ? `automated sync stays paused (${paused.join(', ')}).` : `none of ${order.join(', ')} syncs automatically: nothing was paused.`);
    if (!ok) say(`run the rollback again once that is mended, or ${resume} to return ${name} to git's pin (${pin} in this checkout)`);
    else if (version === pin) say(`git's pin: ${subject.pinnedIn} ${version} already; once the merged branch does too, ${resume}`);
    else say(`git's pin must follow: ${subject.gitFollows(version)}; then ${resume} (resuming before that syncs git's version again)`);
    target.result({ environment: environment.name, ...subject.result, level: 'package', from: deployed, to: version, passed: ok, detail, leftToPrune: left });
    return ok ? 0 : 1;
  };

  // Once anything changed, a refusal ends as a failure that says what is left paused.
  const outcome = await moveTo(target, app, source, version, request).catch((error: unknown) => {
    if (error instanceof RefusedError) return { ok: false, detail: error.message, left: [] };
    throw error;
  });
  return finish(outcome.ok, outcome.ok ? `${subject.label} back on chart version ${version} (from ${deployed})` : outcome.detail, outcome.left);
}

/**
 * Set the Application's Helm source to `version`, sync it and wait for the sync, then for its
 * health; verify its Helm source's synced revision and its newest history entry. What the sync
 * left to prune.
 */
async function moveTo(target: OpsTarget, app: LiveObject, source: HelmSource, version: string, request: PackageRollback): Promise<{ ok: boolean; detail: string; left: readonly string[] }> {
  const { cluster, controllerNamespace: namespace, say } = target;
  const name = app.metadata.name;
  await setChartVersion(cluster, namespace, app, version);
  say(`Application ${name}: ${helmSourceField(source)}.targetRevision ${source.targetRevision} -> ${version}`);
  const started = await startSync(cluster, namespace, name, { by: request.by, prune: request.prune, force: request.force });
  const sync = await waitForSync(cluster, namespace, name, started, WAITS_SECONDS.controllerSync, say);
  if (!sync.ok) return { ok: false, detail: `sync of ${name} to ${version}: ${sync.reason}`, left: [] };
  const health = await waitForHealthy(cluster, namespace, name, version, request.timeoutSeconds, say);
  if (!health.ok) return { ok: false, detail: `Application ${name} at ${version}: ${health.reason}`, left: [] };

  const after = await readApplication(cluster, namespace, name);
  const synced = chartRevision(after, source);
  const newest = applicationHistory(after).at(-1);
  const problems = [
    ...(synced === version ? [] : [`its synced revision is ${synced || 'none'}, not ${version}`]),
    ...(newest !== undefined && newest.chartVersion === version ? [] : [`its newest history entry is ${newest === undefined ? 'none' : `${newest.id} at ${deployedBy(newest)}`}, not ${version}`]),
  ];
  if (problems.length > 0) return { ok: false, detail: `Application ${name}: ${problems.join('; ')}`, left: [] };
  say(`PASS synced revision: ${synced}`);
  say(`PASS newest history entry ${newest!.id}: ${version}`);
  const left = resourcesToPrune(after);
  if (left.length > 0) say(`left in the cluster, not in ${version} (--prune deletes them, as automated sync does after resume where its policy prunes): ${left.join(', ')}`);
  return { ok: true, detail: '', left };
}
