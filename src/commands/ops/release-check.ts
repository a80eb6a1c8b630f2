import type { LiveObject } from '../../cluster/connection';
import { waitForPodsReady } from '../../cluster/readiness';
import { WAITS_SECONDS } from '../../contract/contract';
import type { Environment } from '../../environments';
import { RELEASE_NAMES, type ReleaseName, versionFacts } from '../../contract/release-versions';
import { RELEASE_ROWS, releaseIn, releaseNamespace, releaseVersion } from '../../infrastructure/releases';
import type { OpsTarget } from './target';

/**
 * `ops check --component <release>`, contract 1.3 step 7 after an infrastructure upgrade
 * ("verify pods and controller image"): the pods of the release's namespace ready within
 * WAITS_SECONDS.infrastructurePodsReady, and its controller's containers running the image
 * the release table says the environment's version ships (src/contract/release-versions.ts).
 */

/** One part of a check: what, whether it holds, and the detail. */
export interface ReleasePart {
  readonly part: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** Whether `--component` names an infrastructure release. */
export function isReleaseName(name: string | undefined): name is ReleaseName {
  return name !== undefined && (RELEASE_NAMES as readonly string[]).includes(name);
}

/** `registry/path/name` of an image reference, without its tag or digest. */
export function imageRepository(image: string): string {
  const withoutDigest = image.split('@')[0]!;
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  return colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
}

/** Every container (init containers too) of `pods` whose image is of `repository`, as `Pod <ns>/<pod> <container>: <image>`. */
export function containersOf(pods: readonly LiveObject[], repository: string): { where: string; image: string }[] {
  return pods.flatMap((pod) => {
    const spec = (pod as { spec?: { containers?: { name: string; image: string }[]; initContainers?: { name: string; image: string }[] } }).spec;
    return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]
      .filter((container) => imageRepository(container.image) === repository)
      .map((container) => ({ where: `Pod ${pod.metadata.namespace}/${pod.metadata.name} ${container.name}`, image: container.image }));
  });
}

/** The parts of `release`'s check in `environment`: its pods ready, then its controller image. */
export async function releaseParts(target: OpsTarget, environment: Environment, name: ReleaseName): Promise<ReleasePart[]> {
  const release = releaseIn(RELEASE_ROWS.find((row) => row.name === name)!, environment);
  const namespace = releaseNamespace(release, { environment, platform: target.platform });
  const version = releaseVersion(release);
  const pods = await waitForPodsReady(target.cluster, namespace, WAITS_SECONDS.infrastructurePodsReady, target.say);
  const parts: ReleasePart[] = [{ part: `${name}: pods of ${namespace} ready`, ok: pods.ok, detail: pods.ok ? pods.state : pods.reason! }];
  const expected = versionFacts(name, version)?.controllerImage;
  if (expected === undefined) return [...parts, { part: `${name} ${version}: controller image`, ok: true, detail: 'the release runs no controller of its own (the table names no image)' }];
  const running = containersOf(await target.cluster.list('v1', 'Pod', namespace), imageRepository(expected));
  const wrong = running.filter((container) => container.image !== expected);
  const part = `${name} ${version}: controller image ${expected}`;
  if (running.length === 0) return [...parts, { part, ok: false, detail: `no container in ${namespace} runs ${imageRepository(expected)}` }];
  return [
    ...parts,
    { part, ok: wrong.length === 0, detail: wrong.length === 0 ? `${running.length} container(s): ${running.map((container) => container.where).join(', ')}` : wrong.map((container) => `${container.where} runs ${container.image}`).join('; ') },
  ];
}
