import { RefusedError, UsageError } from '../base/errors';
import { RELEASE_ENVIRONMENTS } from '../contract/choices';
import { ENVIRONMENT_ORDER, type Environment, environmentNamed } from '../environments';
import { environmentValuesPath } from '../environments/values-file';
import { compareReleaseVersions, knownVersions, RELEASE_NAMES, type ReleaseName } from '../infrastructure/release-versions';
import { checkPromotionOrder, type ValuesEdit } from './release';

/**
 * Infrastructure upgrades environment by environment (1.3 step 7, 9.2: an explicit chart
 * version): each environment's values name the version of every infrastructure release
 * (`infrastructure.versions` in src/environments/<env>/environment.yaml), one the release
 * table knows (src/infrastructure/release-versions.ts). A new version enters where a new
 * image tag does (local, testing) and moves on along the environment order, as a tag does:
 * `npm run upgrade` sets it in one environment, `npm run promote -- --release` copies it to
 * the next. Each is one edit of one values file, applied like the release commands' (yaml
 * document API, validated and rendered before anything is written).
 */

/** The field of an environment's values that names `release`'s version. */
export function versionPath(release: ReleaseName): readonly string[] {
  return ['infrastructure', 'versions', release];
}

/** The release `--release` names, or a usage error listing them. */
export function releaseNamed(name: string, option = '--release'): ReleaseName {
  if (!(RELEASE_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`${option} "${name}" is not an infrastructure release (src/infrastructure/releases.ts): one of ${RELEASE_NAMES.join(', ')}`);
  }
  return name as ReleaseName;
}

/** The version `environment` runs of `release` (its values'). */
export function runningVersion(environment: Environment, release: ReleaseName): string {
  return environment.infrastructure.versions[release];
}

/** The edit of `environment`'s values that makes it run `version` of `release`. */
function versionEdit(environment: Environment, release: ReleaseName, version: string, summary: string): ValuesEdit {
  const running = runningVersion(environment, release);
  return {
    environment: environment.name,
    application: release,
    file: environmentValuesPath(environment.name),
    path: versionPath(release),
    value: version,
    unchanged: running === version,
    summary,
  };
}

export interface UpgradeOptions {
  /**
   * Allow a version older than the one the environment runs.
   * @default false
   */
  readonly allowDowngrade?: boolean;
}

/**
 * `npm run upgrade`: `environment` runs `version` of `release`. Refused: a version the table
 * does not know (bad argument), a downgrade without `allowDowngrade`, and a newer version in
 * an environment that receives versions by promotion (staging, production) before the
 * environment ahead of it in the order runs it.
 */
export function planUpgrade(environments: readonly Environment[], name: string, releaseName: string, version: string, options: UpgradeOptions = {}): ValuesEdit {
  const environment = environmentNamed(environments, name, '--env');
  const release = releaseNamed(releaseName);
  const known = knownVersions(release);
  if (!known.includes(version)) {
    throw new UsageError(`--version "${version}" is not a version of ${release} the release table knows (src/infrastructure/release-versions.ts): one of ${known.join(', ')}`);
  }
  const running = runningVersion(environment, release);
  const order = ENVIRONMENT_ORDER as readonly string[];
  const direction = compareReleaseVersions(version, running);
  if (direction < 0 && options.allowDowngrade !== true) {
    throw new RefusedError(`${version} is older than the ${release} ${running} ${environment.name} runs; pass --allow-downgrade to move ${environment.name} back to it`);
  }
  if (direction > 0 && !(RELEASE_ENVIRONMENTS as readonly string[]).includes(environment.name)) {
    const previous = environments.find((candidate) => candidate.name === order[order.indexOf(environment.name) - 1])!;
    const ahead = runningVersion(previous, release);
    if (ahead !== version) {
      throw new RefusedError(
        `${environment.name} runs a version after ${previous.name} runs it (${order.join(' -> ')}): ${previous.name} runs ${release} ${ahead}, not ${version}; ` +
          `upgrade ${previous.name} first (npm run upgrade -- --env ${previous.name} --release ${release} --version ${version})`,
      );
    }
  }
  return versionEdit(environment, release, version, `${environment.name}: ${release} ${running} -> ${version}`);
}

export interface VersionPromotionOptions {
  /**
   * Allow moving `to` to a version older than the one it runs.
   * @default false
   */
  readonly allowOlder?: boolean;
}

/**
 * `npm run promote -- --release <name>`: copy the version of `release` that `from` runs to
 * `to`, the next environment in the order (the order's checks are planPromotion's, made first).
 */
export function planVersionPromotion(environments: readonly Environment[], from: string, to: string, releaseName: string, options: VersionPromotionOptions = {}): ValuesEdit {
  const release = releaseNamed(releaseName);
  const source = checkPromotionOrder(environments, from, to);
  const target = environmentNamed(environments, to, '--to');
  const version = runningVersion(source, release);
  const running = runningVersion(target, release);
  if (options.allowOlder !== true && compareReleaseVersions(version, running) < 0) {
    throw new RefusedError(
      `${from} runs ${release} ${version}, older than the ${running} ${to} runs; promotion moves ${to} forward only. ` +
        `Pass --allow-older to move ${to} back to ${version}, or use \`npm run upgrade -- --env ${to} --release ${release} --version ${version} --allow-downgrade\``,
    );
  }
  return versionEdit(target, release, version, `${to}: ${release} ${running} -> ${version} (promoted from ${from})`);
}
