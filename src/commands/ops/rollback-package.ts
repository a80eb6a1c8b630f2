import { RefusedError, UsageError } from '../../base/errors';
import {
  type HistoryEntry,
  applicationHistory,
  helmSource,
  readApplication,
  resourcesToPrune,
  setChartVersion,
  startSync,
  waitForHealthy,
  waitForSync,
} from '../../cluster/argo-cd';
import type { LiveObject } from '../../cluster/connection';
import { WAITS_SECONDS } from '../../contract/contract';
import { type PlatformChartId, ROOT_APPLICATION } from '../../contract/platform-charts';
import { type InfrastructureRelease, RELEASE_ROWS } from '../../infrastructure/releases';
import { pauseApplications } from './pause';
import type { OpsTarget } from './target';

/**
 * The platform chart that renders one Application per infrastructure release: a child of the
 * root, the parent of the releases' Applications, whose self-heal puts git's chart version back.
 */
const RELEASES_PARENT: PlatformChartId = 'infrastructure';

/** The infrastructure release `--release` names (a row of RELEASE_ROWS), or a usage error listing them. */
export function infrastructureRelease(name: string | undefined): InfrastructureRelease {
  const names = RELEASE_ROWS.map((row) => row.name).join(', ');
  if (name === undefined) throw new UsageError(`--release <infrastructure release> is required for --level package: one of ${names}`);
  const release = RELEASE_ROWS.find((row) => row.name === name);
  if (release === undefined) throw new UsageError(`--release "${name}" is not an infrastructure release (src/infrastructure/releases.ts): one of ${names}`);
  return release;
}

/** How the package level is asked for. */
export interface PackageRollback {
  /** The release: its row of src/infrastructure/releases.ts; its Argo CD Application has its name. */
  readonly release: InfrastructureRelease;
  /**
   * The chart version to go back to: one the Application's history has.
   * @default - the newest version of the history other than the deployed one
   */
  readonly to?: string;
  /** Delete the live objects the target version does not have. */
  readonly prune: boolean;
  /** Argo CD's forced sync: what cannot be patched is deleted and re-created (the contract's forced upgrade). */
  readonly force: boolean;
  /** Who: recorded with the pause and as the sync's initiator. */
  readonly by: string;
  /** Why: recorded with the pause. */
  readonly reason: string;
  /** Bound of the wait for the Application Healthy at the target version, in seconds. */
  readonly healthTimeoutSeconds: number;
}

/** The chart version a history entry deployed. */
const versionOf = (entry: HistoryEntry): string => entry.chartVersion ?? entry.revision;

/**
 * The version deployed now (the newest history entry's) and the one to go back to: `to` when
 * the history has it (the deployed one too: a forced sync of it), else the newest version of
 * the history that differs from the deployed one. Refused, changing nothing, when there is none.
 */
export function packageTarget(name: string, history: readonly HistoryEntry[], to: string | undefined): { readonly deployed: string; readonly target: string } {
  const newest = history.at(-1);
  if (newest === undefined) throw new RefusedError(`Application ${name} has no sync history: there is no chart version to go back to`);
  const deployed = versionOf(newest);
  const versions = [...new Set(history.map(versionOf))];
  if (to !== undefined) {
    if (!versions.includes(to)) {
      throw new RefusedError(`--to ${to}: the history of Application ${name} has no chart version ${to} (its versions: ${versions.join(', ')}); a version never deployed goes through git: the release's row in src/infrastructure/releases.ts`);
    }
    return { deployed, target: to };
  }
  const earlier = history.findLast((entry) => versionOf(entry) !== deployed);
  if (earlier === undefined) throw new RefusedError(`release ${name}: its history has no chart version other than the deployed ${deployed}: give --to, or change the version in git`);
  return { deployed, target: versionOf(earlier) };
}

/**
 * 1.5's package level for a release Argo CD installs: its Application back to a chart
 * version of its history, with the root and the releases' parent paused so neither puts
 * git's version back; the sync awaited, then the health, then the version verified.
 */
export async function rollbackPackage(target: OpsTarget, request: PackageRollback): Promise<number> {
  const { cluster, controllerNamespace: namespace, say, environment } = target;
  const { release } = request;
  const name = release.name;
  const app = await readApplication(cluster, namespace, name);
  const source = helmSource(app);
  if (source === undefined) throw new RefusedError(`Application ${name} does not install a Helm chart (spec.source.chart): the package level rolls back chart versions`);
  const history = applicationHistory(app);
  say(`ops rollback (package): release ${name}, chart ${source.chart} of ${source.repoURL}, in ${environment.name} on ${cluster.server}; this checkout pins ${release.chart.version}`);
  say(`Application ${name} history:`);
  for (const entry of history) say(`  ${entry.id}  ${versionOf(entry)}  ${entry.deployedAt}  ${entry.initiatedBy}`);
  const { deployed, target: version } = packageTarget(name, history, request.to);
  say(`deployed ${deployed}; going back to ${version}${request.to === undefined ? ' (the newest other version of the history)' : ''}`);

  const order = [ROOT_APPLICATION, RELEASES_PARENT, name];
  const apps = await Promise.all(order.map((application) => (application === name ? app : readApplication(cluster, namespace, application))));
  const pauses = await pauseApplications(target, apps, request.by, request.reason);
  for (const { application, result } of pauses) say(`Application ${application}: ${result}`);
  // An Application without automated sync (production's) had nothing to pause.
  const paused = pauses.filter(({ result }) => !result.startsWith('manual')).map(({ application }) => application);
  const resume = `npm run ops -- resume --env ${environment.name}`;
  const pin = release.chart.version;
  const finish = (ok: boolean, detail: string, left: readonly string[] = []) => {
    say(`ops rollback (package): ${ok ? 'done' : 'FAILED'}: ${detail}`);
    say(paused.length > 0 ? `automated sync stays paused (${paused.join(', ')}).` : `none of ${order.join(', ')} syncs automatically: nothing was paused.`);
    if (!ok) say(`run the rollback again once that is mended, or ${resume} to return ${name} to git's pin (${pin} in this checkout)`);
    else if (version === pin) say(`git's pin: this checkout's src/infrastructure/releases.ts pins ${name} to ${version} already; once the merged branch does too, ${resume}`);
    else say(`git's pin must follow: the ${name} row's version in src/infrastructure/releases.ts to ${version} (this checkout pins ${pin}), npm run synth, review, merge; then ${resume} (resuming before that syncs git's version again)`);
    target.result({ environment: environment.name, release: name, level: 'package', from: deployed, to: version, passed: ok, detail, leftToPrune: left });
    return ok ? 0 : 1;
  };

  // Once anything changed, a refusal ends as a failure that says what is left paused.
  const outcome = await moveTo(target, app, version, request).catch((error: unknown) => {
    if (error instanceof RefusedError) return { ok: false, detail: error.message, left: [] };
    throw error;
  });
  return finish(outcome.ok, outcome.ok ? `release ${name} back on chart version ${version} (from ${deployed})` : outcome.detail, outcome.left);
}

/**
 * Set the release's Application to `version`, sync it and wait for the sync, then for its
 * health; verify its synced revision and newest history entry. What the sync left to prune.
 */
async function moveTo(target: OpsTarget, app: LiveObject, version: string, request: PackageRollback): Promise<{ ok: boolean; detail: string; left: readonly string[] }> {
  const { cluster, controllerNamespace: namespace, say } = target;
  const name = app.metadata.name;
  await setChartVersion(cluster, namespace, app, version);
  say(`Application ${name}: spec.source.targetRevision ${helmSource(app)!.targetRevision} -> ${version}`);
  const started = await startSync(cluster, namespace, name, { by: request.by, prune: request.prune, force: request.force });
  const sync = await waitForSync(cluster, namespace, name, started, WAITS_SECONDS.controllerSync, say);
  if (!sync.ok) return { ok: false, detail: `sync of ${name} to ${version}: ${sync.reason}`, left: [] };
  const health = await waitForHealthy(cluster, namespace, name, version, request.healthTimeoutSeconds, say);
  if (!health.ok) return { ok: false, detail: `Application ${name} at ${version}: ${health.reason}`, left: [] };

  const after = await readApplication(cluster, namespace, name);
  const synced = String(after['status']?.sync?.revision ?? '');
  const newest = applicationHistory(after).at(-1);
  const problems = [
    ...(synced === version ? [] : [`its synced revision is ${synced || 'none'}, not ${version}`]),
    ...(newest !== undefined && versionOf(newest) === version ? [] : [`its newest history entry is ${newest === undefined ? 'none' : `${newest.id} at ${versionOf(newest)}`}, not ${version}`]),
  ];
  if (problems.length > 0) return { ok: false, detail: `Application ${name}: ${problems.join('; ')}`, left: [] };
  say(`PASS synced revision: ${synced}`);
  say(`PASS newest history entry ${newest!.id}: ${version}`);
  const left = resourcesToPrune(after);
  if (left.length > 0) say(`left in the cluster, not in ${version} (--prune deletes them, as automated sync does after resume where its policy prunes): ${left.join(', ')}`);
  return { ok: true, detail: '', left };
}
