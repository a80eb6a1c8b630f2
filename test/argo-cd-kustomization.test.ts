import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { argoCdModuleDir } from '../e2e/argo-cd-manifests';
import { ARGO_CD_RELEASE } from '../src/infrastructure/argo-cd-release';
import { ARGO_CD_KUSTOMIZATION_FILES, argoCdKustomization, argoCdManifestsPath, argoCdRemoteBase, notificationsData, pluginManifests } from '../src/infrastructure/argo-cd-kustomization';
import { knownVersions, type ReleaseName, versionFacts } from '../src/contract/release-versions';
import { INFRASTRUCTURE_RELEASES, argoCdReleaseValues, releaseKustomizationPath, releaseNamespace } from '../src/infrastructure/releases';
import { COMPONENT_SUPPORT } from '../src/infrastructure/supported-kubernetes';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { DEPLOYMENT_NOTIFICATIONS, SOPS_PLUGIN } from '../src/contract/choices';
import { builtArgoCd, builtObject } from './argo-cd-build';
import { ROOT, committedObjects, findObject } from './support';

const platform = loadPlatform();
const environments = loadEnvironments();
const contextOf = (name: string) => ({ environment: environments.find((environment) => environment.name === name)!, platform });
const { version } = ARGO_CD_RELEASE;
const release = INFRASTRUCTURE_RELEASES.argoCd;

describe('one Argo CD, the version the e2e runs', () => {
  const script = fs.readFileSync(path.join(ROOT, 'toolchain', 'build.sh'), 'utf8');

  it('is the tag of the release row, the toolchain build and its Go module', () => {
    expect(release.manifests.version).toBe(version);
    expect(/^ARGOCD_VERSION=(\S+)/m.exec(script)?.[1]).toBe(version);
    const requires = fs.readFileSync(path.join(ROOT, 'toolchain', 'argocd', 'go.mod'), 'utf8').split('\n').map((line) => line.trim().split(/\s+/));
    expect(requires.find(([module]) => module === ARGO_CD_RELEASE.module)?.[1]).toBe(version);
  });

  it("keeps the CRD schemas of that tag, byte for byte, and SOURCES.md says so", () => {
    const crds = path.join(argoCdModuleDir(ROOT), 'manifests', 'crds');
    for (const [schema, upstream] of [['argocd-application.yaml', 'application-crd.yaml'], ['argocd-appproject.yaml', 'appproject-crd.yaml']] as const) {
      expect(fs.readFileSync(path.join(ROOT, 'schemas', 'crds', schema), 'utf8'), schema).toBe(fs.readFileSync(path.join(crds, upstream), 'utf8'));
      const row = fs.readFileSync(path.join(ROOT, 'schemas', 'crds', 'SOURCES.md'), 'utf8').split('\n').find((line) => line.startsWith(`| ${schema} |`));
      expect(row, schema).toContain(`| ${version} (`);
    }
  });

  it('is the one version the release table knows, with the image its manifests deploy, and every environment names it', () => {
    expect(knownVersions(release.name)).toEqual([version]);
    expect(versionFacts(release.name, version)?.controllerImage).toBe(`quay.io/argoproj/argocd:${version}`);
    for (const environment of environments) expect(environment.infrastructure.versions[release.name as ReleaseName], environment.name).toBe(version);
  });

  it("renders the remote base at the tag the environment's values name", () => {
    const { environment } = contextOf('local');
    const moved = { ...environment, infrastructure: { ...environment.infrastructure, versions: { ...environment.infrastructure.versions, [release.name]: 'v9.9.9' } } };
    expect(argoCdRemoteBase({ environment: moved, platform })).toBe(`${release.manifests.repoURL}//${argoCdManifestsPath({ environment: moved, platform })}?ref=v9.9.9`);
    expect(argoCdKustomization({ environment: moved, platform }).get(ARGO_CD_KUSTOMIZATION_FILES.kustomization)).toContain('?ref=v9.9.9');
  });

  it('is the version the README support matrix names', () => {
    const row = COMPONENT_SUPPORT.find((support) => support.component === 'Argo CD')!;
    expect(row.pinned.startsWith(`${version} `)).toBe(true);
    expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain(`| Argo CD | ${row.pinned} |`);
  });
});

describe.each(ENVIRONMENT_ORDER)('the kustomization of Argo CD in %s', (name) => {
  const context = contextOf(name);
  const folder = path.join(ROOT, releaseKustomizationPath(name, release));

  it('is committed in dist/ as synth renders it', () => {
    const files = argoCdKustomization(context);
    expect(fs.readdirSync(folder).sort()).toEqual([...files.keys()].sort());
    for (const [file, text] of files) expect(fs.readFileSync(path.join(folder, file), 'utf8'), file).toBe(text);
  });

  it('is what its argocd Application syncs, from this repository, server-side, by an operator', () => {
    const application = findObject(committedObjects(name), 'Application', release.name);
    expect(application.spec.source).toEqual({ repoURL: platform.repository.url, targetRevision: platform.repository.targetRevision, path: releaseKustomizationPath(name, release) });
    expect(application.spec.syncPolicy.syncOptions).toContain('ServerSideApply=true');
    expect(application.spec.syncPolicy.automated).toBeUndefined();
  });

  it("builds, with the real kustomize, upstream's manifests of the pinned tag in the controller's namespace", () => {
    const objects = builtArgoCd(name);
    const kustomization = fs.readFileSync(path.join(folder, ARGO_CD_KUSTOMIZATION_FILES.kustomization), 'utf8');
    expect(kustomization).toContain(`- ${release.manifests.repoURL}//${argoCdManifestsPath(context)}?ref=${version}\n`);
    const namespace = releaseNamespace(release, context);
    for (const object of objects.filter((o) => o.metadata.namespace !== undefined)) expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe(namespace);
    const images = objects.flatMap((object) => ((object as any).spec?.template?.spec?.containers ?? []).map((container: { image: string }) => container.image));
    expect(images).toContain(`quay.io/argoproj/argocd:${version}`);
    for (const crd of ['applications.argoproj.io', 'appprojects.argoproj.io', 'applicationsets.argoproj.io']) builtObject(objects, 'CustomResourceDefinition', crd);
  });

  it("runs upstream's high-availability install exactly where the environment asks for it", () => {
    const objects = builtArgoCd(name);
    const ha = context.environment.infrastructure.argoCd.highAvailability;
    expect(objects.some((object) => object.kind === 'StatefulSet' && object.metadata.name === 'argocd-redis-ha-server')).toBe(ha);
    expect(objects.some((object) => object.kind === 'Deployment' && object.metadata.name === 'argocd-redis')).toBe(!ha);
  });

  it("carries the platform's settings: health checks, the sync timeout, notifications, upstream's keys kept", () => {
    const objects = builtArgoCd(name);
    const settings = argoCdReleaseValues();
    const cm = builtObject(objects, 'ConfigMap', 'argocd-cm').data as Record<string, string>;
    expect(cm).toMatchObject(settings.configs.cm);
    // Merged into upstream's, not replacing it.
    expect(Object.keys(cm)).toContain('resource.exclusions');
    expect(builtObject(objects, 'ConfigMap', 'argocd-cmd-params-cm').data).toMatchObject(settings.configs.params);
    expect(builtObject(objects, 'ConfigMap', 'argocd-notifications-cm').data).toEqual(notificationsData(settings));
    const plugins = builtObject(objects, 'ConfigMap', 'argocd-cmp-cm').data as Record<string, string>;
    expect(Object.keys(plugins)).toEqual([...pluginManifests(settings).keys()].map((plugin) => `${plugin}.yaml`));
  });

  it('runs the sops plugin beside the repository server, every mount naming a volume of the pod', () => {
    const pod = (builtObject(builtArgoCd(name), 'Deployment', 'argocd-repo-server') as any).spec.template.spec;
    const names = pod.containers.map((container: { name: string }) => container.name);
    expect([...names].sort()).toEqual(['argocd-repo-server', SOPS_PLUGIN.name].sort());
    const volumes = new Set(pod.volumes.map((volume: { name: string }) => volume.name));
    for (const container of pod.containers) {
      for (const mount of container.volumeMounts ?? []) expect(volumes.has(mount.name), `${container.name} mounts ${mount.name}`).toBe(true);
    }
    const sidecar = pod.containers.find((container: { name: string }) => container.name === SOPS_PLUGIN.name);
    expect(sidecar).toEqual(argoCdReleaseValues().repoServer.extraContainers.find((container) => container.name === SOPS_PLUGIN.name));
  });

  it("leaves out upstream's NetworkPolicies, Dex and empty notifications Secret", () => {
    const objects = builtArgoCd(name);
    expect(objects.filter((object) => object.kind === 'NetworkPolicy')).toEqual([]);
    expect(objects.filter((object) => object.metadata.name.startsWith('argocd-dex-server'))).toEqual([]);
    expect(objects.filter((object) => object.kind === 'Secret' && object.metadata.name === DEPLOYMENT_NOTIFICATIONS.secret.name)).toEqual([]);
    // What else upstream ships stays: its configuration objects and every component but Dex.
    builtObject(objects, 'Secret', 'argocd-secret');
    for (const deployment of ['argocd-server', 'argocd-repo-server', 'argocd-applicationset-controller', 'argocd-notifications-controller']) builtObject(objects, 'Deployment', deployment);
    builtObject(objects, 'StatefulSet', 'argocd-application-controller');
  });
});

