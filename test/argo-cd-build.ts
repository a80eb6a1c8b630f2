import * as fs from 'node:fs';
import * as path from 'node:path';
import { inject } from 'vitest';
import { parse } from 'yaml';
import { argoCdManifestsRepository, argoCdModuleDir, buildArgoCdKustomization } from '../e2e/argo-cd-manifests';
import type { KubeObject } from '../e2e/kube-client';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath } from '../src/infrastructure/releases';
import { locateToolchain } from '../toolchain';
import { ARGO_CD_KUSTOMIZATION_FILES } from '../src/infrastructure/argo-cd-kustomization';
import type { ArgoCdSettings } from '../src/infrastructure/argo-cd-values';
import { ROOT, treeContents } from './support';
import { memoized } from './engine-memo';

/**
 * The committed kustomization of Argo CD of an environment, built by the toolchain's real
 * kustomize against the pinned release's manifests from the argo-cd Go module (the same
 * route as the e2e, e2e/argo-cd-manifests.ts), once per worker and environment (in the README
 * flows' unit runs, once for their five states while its files stay the same: test/engine-memo.ts). The release's
 * repository is made in the test run's folder (test/global-setup.ts), which goes with the run.
 */
let moduleDir: string | undefined;
let repository: string | undefined;
const built = new Map<string, KubeObject[]>();

export function builtArgoCd(environment: string): KubeObject[] {
  const cached = built.get(environment);
  if (cached !== undefined) return cached;
  moduleDir ??= argoCdModuleDir(ROOT);
  const kustomize = locateToolchain(ROOT).bin('kustomize', 'kustomize');
  const folder = path.join(ROOT, releaseKustomizationPath(environment, INFRASTRUCTURE_RELEASES.argoCd));
  // The remote base is the release's manifests, read from the module's folder (its path names its version).
  const objects = memoized(['kustomize build', kustomize, moduleDir, ...[...treeContents(folder)].flat()], () => {
    repository ??= argoCdManifestsRepository(moduleDir!, fs.mkdtempSync(path.join(inject('runFolder'), 'argo-cd-manifests-')));
    return buildArgoCdKustomization(kustomize, folder, repository);
  });
  built.set(environment, objects);
  return objects;
}

/** The one object of a kind and name in a build; throws naming it when there is not exactly one. */
export function builtObject(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.filter((object) => object.kind === kind && object.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name} in the build, found ${found.length}`);
  return found[0]!;
}

/**
 * The platform's settings of Argo CD as committed in an environment's kustomization
 * (dist/<environment>/argocd/): the ConfigMaps' data, the plugins and the repository
 * server's sidecars and volumes, read back from the patches synth wrote.
 */
export function committedArgoCdSettings(environment: string): ArgoCdSettings {
  const folder = path.join(ROOT, releaseKustomizationPath(environment, INFRASTRUCTURE_RELEASES.argoCd));
  const read = (file: string) => parse(fs.readFileSync(path.join(folder, file), 'utf8'));
  const files = ARGO_CD_KUSTOMIZATION_FILES;
  const notifications = read(files.notifications).data as Record<string, string>;
  const pick = (prefix: string) => Object.fromEntries(Object.entries(notifications).filter(([key]) => key.startsWith(prefix)));
  const pod = read(files.repoServer).spec.template.spec;
  const plugins = read(files.pluginConfigMap).data as Record<string, string>;
  return {
    configs: {
      cm: read(files.cm).data,
      params: read(files.params).data,
      cmp: { plugins: Object.fromEntries(Object.entries(plugins).map(([file, text]) => [file.replace(/\.yaml$/, ''), parse(text).spec])) },
    },
    notifications: { notifiers: pick('service.'), templates: pick('template.'), triggers: pick('trigger.') },
    repoServer: { extraContainers: pod.containers, volumes: pod.volumes },
  };
}
