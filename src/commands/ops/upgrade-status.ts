import { applicationHistory } from '../../cluster/application-history';
import { chartRevision, helmSource } from '../../cluster/helm-source';
import type { LiveObject } from '../../cluster/connection';
import { environmentValuesPath } from '../../environments/values-file';
import { knownVersions, versionFacts } from '../../contract/release-versions';
import { type InfrastructureRelease, RELEASE_ROWS, isHelmRelease, releaseIn, releaseNamespace, releaseVersion } from '../../infrastructure/releases';
import type { CommandDefinition } from '../../tooling/cli';
import { containersOf, imageRepository } from './release-check';
import { type OpsTarget, TARGET_OPTIONS, TARGET_USAGE, opsTarget } from './target';

const USAGE = `usage: npm run ops -- upgrade-status --env <environment> [options]

Contract 1.3 step 7, "list releases and available versions": for each infrastructure release,
the chart version its Argo CD Application last deployed (its newest sync history entry, else
the revision it was last compared at, status.sync.revision), the version git wants (the
environment's values, infrastructure.versions) and the versions the release table knows
(src/contract/release-versions.ts), with its sync and health. A release installed from
its upstream's manifests (argocd) syncs a folder of this repository, whose revision names no
tag: its deployed version is the tag of the controller image its pods run. Reads only.
${TARGET_USAGE}
Exit code: 0 every release runs the version git wants, 1 one does not (or has no
Application), 2 bad arguments.`;

/** One release as the cluster and git see it. */
export interface ReleaseVersionState {
  readonly release: string;
  /** The chart version last deployed; null when the Application has deployed nothing (or does not exist). */
  readonly deployed: string | null;
  /** The chart version the environment's values name. */
  readonly wanted: string;
  /** The versions the table knows, oldest first. */
  readonly known: readonly string[];
  /** `Synced`/`OutOfSync` and `Healthy`/..., as Argo CD reports them; null without an Application. */
  readonly sync: string | null;
  readonly health: string | null;
  /** Whether the deployed version is the wanted one. */
  readonly current: boolean;
}

/**
 * The version an Application deployed: its newest history entry's chart version, or for a
 * source without a chart the targetRevision the entry recorded (argo-cd v3.6.1
 * pkg/apis/application/v1alpha1/types.go, RevisionHistory); without history, the revision it
 * was last compared at, which for a Helm source is the chart version (SyncStatus).
 */
export function deployedVersion(app: LiveObject): string | null {
  const newest = applicationHistory(app).at(-1);
  // A source that is not a chart (a git tag's manifests) deployed the targetRevision its entry recorded.
  const recorded = ((app['status'] as any)?.history ?? []).at(-1) as { source?: { targetRevision?: string }; sources?: { targetRevision?: string }[] } | undefined;
  if (newest !== undefined) return newest.chartVersion ?? recorded?.source?.targetRevision ?? recorded?.sources?.[0]?.targetRevision ?? newest.revision;
  const source = helmSource(app);
  const compared = source === undefined ? String((app['status'] as any)?.sync?.revision ?? '') : chartRevision(app, source);
  return compared === '' ? null : compared;
}

/**
 * The tag a release installed from its upstream's manifests runs: its Application syncs a
 * folder of this repository at the platform's branch (the kustomization whose remote base is
 * the tag), so no revision of the Application names the tag; the controller image the tag's
 * manifests deploy (the table's controllerImage) does. The one tag every such container of its
 * namespace runs, the tags joined when they differ, null when none runs it.
 */
async function manifestsDeployedVersion(target: OpsTarget, release: InfrastructureRelease): Promise<string | null> {
  const image = versionFacts(release.name, releaseVersion(release))?.controllerImage;
  if (image === undefined) return null;
  const repository = imageRepository(image);
  const namespace = releaseNamespace(release, { environment: target.environment, platform: target.platform });
  const tags = [...new Set(containersOf(await target.cluster.list('v1', 'Pod', namespace), repository).map((container) => container.image.slice(repository.length + 1)))].sort();
  return tags.length === 0 ? null : tags.join(', ');
}

/** `npm run ops -- upgrade-status`. */
export const UPGRADE_STATUS: CommandDefinition<typeof TARGET_OPTIONS> = {
  name: 'ops upgrade-status',
  usage: USAGE,
  options: TARGET_OPTIONS,
  async run(values, _positionals, context) {
    const target = opsTarget(values, context);
    const { environment } = target;
    const states: ReleaseVersionState[] = [];
    for (const row of RELEASE_ROWS) {
      const release = releaseIn(row, environment);
      const app = await target.cluster.get('argoproj.io/v1alpha1', 'Application', release.name, target.controllerNamespace);
      const deployed = app === undefined ? null : isHelmRelease(release) ? deployedVersion(app) : await manifestsDeployedVersion(target, release);
      const status = app?.['status'] as { sync?: { status?: string }; health?: { status?: string } } | undefined;
      const state: ReleaseVersionState = {
        release: release.name,
        deployed,
        wanted: releaseVersion(release),
        known: knownVersions(release.name),
        sync: app === undefined ? null : (status?.sync?.status ?? 'Unknown'),
        health: app === undefined ? null : (status?.health?.status ?? 'Unknown'),
        current: deployed === releaseVersion(release),
      };
      states.push(state);
      const where = app === undefined ? `no Application ${target.controllerNamespace}/${release.name}` : `${state.sync}, ${state.health}`;
      target.say(
        `${release.name}  deployed ${deployed ?? 'none'}  git wants ${state.wanted}${state.current ? '' : ' (DIFFERS)'}  known ${state.known.join(', ')}  (${where})`,
      );
    }
    const behind = states.filter((state) => !state.current);
    target.say(
      behind.length === 0
        ? `${environment.name}: every release runs the version ${environmentValuesPath(environment.name)} names`
        : `${environment.name}: ${behind.map((state) => `${state.release} runs ${state.deployed ?? 'nothing'}, git wants ${state.wanted}`).join('; ')} (sync the Application, then npm run ops -- check --env ${environment.name} --component <release>)`,
    );
    target.result({ environment: environment.name, releases: states });
    return behind.length === 0 ? 0 : 1;
  },
};
