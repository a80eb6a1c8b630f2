import { stringify } from 'yaml';
import { DEPLOYMENT_NOTIFICATIONS } from '../contract/choices';
import { type ArgoCdSettings } from './argo-cd-values';
import { INFRASTRUCTURE_RELEASES, type ManifestsRelease, type ReleaseContext, argoCdReleaseValues, releaseIn, releaseKustomizationPath, releaseNamespace, releaseVersion } from './releases';

/**
 * Argo CD as the platform installs it: upstream's release manifests of the pinned tag
 * (ARGO_CD_RELEASE) as a kustomize remote base, and the platform's settings
 * (src/infrastructure/argo-cd-values.ts) as patches, rendered per environment into
 * `dist/<environment>/argocd/`. The Pulumi bootstrap applies that folder once and the
 * self-managed `argocd` Application syncs it from git afterwards, so both install the same
 * objects; the e2e syncs the same folder against the tag's manifests from the module its
 * toolchain builds Argo CD from.
 *
 * What upstream ships that the platform takes out (each a `$patch: delete`):
 * - every NetworkPolicy of upstream's (each component's `argocd-*-network-policy`): the
 *   platform's own policies guard the namespace (src/constructs/infrastructure-network-policies.ts),
 *   and allows add up, so upstream's (the repo server's 8081 from the notifications and
 *   ApplicationSet controllers, metrics from every namespace) would widen them;
 * - Dex (`argocd-dex-server*`): no single sign-on is configured, Dex would run for nothing;
 * - the empty `argocd-notifications-secret`: the platform delivers that Secret through SOPS
 *   (DEPLOYMENT_NOTIFICATIONS.secret), and two Applications must not own one object.
 */

/** The folder of the kustomization in the repository, per environment (`dist/<environment>/argocd`). */
export function argoCdKustomizationPath(environment: string): string {
  return releaseKustomizationPath(environment, INFRASTRUCTURE_RELEASES.argoCd);
}

/** Which of upstream's two installs an environment runs: `ha/cluster-install` where it asks for high availability. */
export function argoCdManifestsPath(context: ReleaseContext): string {
  const { paths } = INFRASTRUCTURE_RELEASES.argoCd.manifests;
  return context.environment.infrastructure.argoCd.highAvailability ? paths.highAvailability : paths.standard;
}

/**
 * The remote base: `<repository>//<folder>?ref=<tag>`, which kustomize fetches with git
 * (kustomize api/internal/git/repospec.go: `//` ends the repository, `ref` is the tag).
 */
export function argoCdRemoteBase(context: ReleaseContext): string {
  // The tag the environment's values name (infrastructure.versions.argocd), one the table knows.
  const { manifests } = releaseIn(INFRASTRUCTURE_RELEASES.argoCd, context.environment) as ManifestsRelease;
  return `${manifests.repoURL}//${argoCdManifestsPath(context)}?ref=${manifests.version}`;
}

/** The file names of the kustomization folder. */
export const ARGO_CD_KUSTOMIZATION_FILES = {
  kustomization: 'kustomization.yaml',
  pluginConfigMap: 'argocd-cmp-cm.yaml',
  cm: 'argocd-cm.patch.yaml',
  params: 'argocd-cmd-params-cm.patch.yaml',
  notifications: 'argocd-notifications-cm.patch.yaml',
  repoServer: 'argocd-repo-server.patch.yaml',
} as const;

/** The label upstream's manifests give every object of Argo CD (manifests/base/*). */
const PART_OF = { 'app.kubernetes.io/part-of': 'argocd' } as const;

/**
 * The Config Management Plugins of the settings (`configs.cmp.plugins`), each a
 * ConfigManagementPlugin named after its key: what the repository server's plugin sidecar
 * reads from argocd-cmp-cm (Argo CD docs, "Config Management Plugins": the sidecar mounts its
 * plugin.yaml from a ConfigMap).
 */
export function pluginManifests(settings: ArgoCdSettings = argoCdReleaseValues()): Map<string, Record<string, unknown>> {
  return new Map(
    Object.entries(settings.configs.cmp.plugins).map(([name, spec]) => [
      name,
      { apiVersion: 'argoproj.io/v1alpha1', kind: 'ConfigManagementPlugin', metadata: { name }, spec },
    ]),
  );
}

/**
 * argocd-notifications-cm's data from the settings' notifications: every notifier, template
 * and trigger as a key of its own (notifications-engine pkg/api/config.go reads
 * `service.<type>.<name>`, `template.<name>`, `trigger.<name>`).
 */
export function notificationsData(settings: ArgoCdSettings = argoCdReleaseValues()): Record<string, string> {
  const { notifiers, templates, triggers } = settings.notifications;
  return { ...notifiers, ...templates, ...triggers };
}

/** A strategic merge patch of one of upstream's ConfigMaps: its data, merged key by key. */
function configMapPatch(name: string, data: Readonly<Record<string, string>>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
}

/** What the kustomization deletes of upstream's objects, by kustomize patch target (see the module comment). */
export const ARGO_CD_REMOVED = [
  { target: { kind: 'NetworkPolicy' }, reason: "the platform's own NetworkPolicies guard the namespace" },
  { target: { name: '^argocd-dex-server.*$' }, reason: 'no single sign-on is configured: Dex would run for nothing' },
  { target: { kind: 'Secret', name: `^${DEPLOYMENT_NOTIFICATIONS.secret.name}$` }, reason: 'the platform delivers it through SOPS' },
] as const;

/** A `$patch: delete` for every object a target selects (kustomize applies a targeted patch to each match, names aside). */
function deletion(target: Readonly<Record<string, string>>): Record<string, unknown> {
  return {
    target,
    patch: stringify({ $patch: 'delete', apiVersion: 'v1', kind: target.kind ?? 'Any', metadata: { name: 'selected-by-target' } }),
  };
}

/**
 * The kustomization of one environment, file name to content: the remote base, the plugin's
 * ConfigMap, the settings' patches (argocd-cm, argocd-cmd-params-cm, argocd-notifications-cm,
 * the repository server's sops sidecar and volumes) and the deletions.
 */
export function argoCdKustomization(context: ReleaseContext, settings: ArgoCdSettings = argoCdReleaseValues()): ReadonlyMap<string, string> {
  const namespace = releaseNamespace(INFRASTRUCTURE_RELEASES.argoCd, context);
  const files = ARGO_CD_KUSTOMIZATION_FILES;
  const header = `# Rendered by npm run synth from src/infrastructure/argo-cd-kustomization.ts: Argo CD ${releaseVersion(releaseIn(INFRASTRUCTURE_RELEASES.argoCd, context.environment))}.\n`;
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    namespace,
    resources: [argoCdRemoteBase(context), files.pluginConfigMap],
    patches: [
      { path: files.cm },
      { path: files.params },
      { path: files.notifications },
      { path: files.repoServer },
      ...ARGO_CD_REMOVED.map(({ target }) => deletion(target)),
    ],
  };
  const plugins = Object.fromEntries([...pluginManifests(settings)].map(([name, manifest]) => [`${name}.yaml`, stringify(manifest, { lineWidth: 0 })]));
  const pluginConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cmp-cm', labels: { 'app.kubernetes.io/name': 'argocd-cmp-cm', ...PART_OF } }, data: plugins };
  const repoServer = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'argocd-repo-server' },
    spec: { template: { spec: { containers: settings.repoServer.extraContainers, volumes: settings.repoServer.volumes } } },
  };
  const documents: [string, unknown][] = [
    [files.kustomization, kustomization],
    [files.pluginConfigMap, pluginConfigMap],
    [files.cm, configMapPatch('argocd-cm', settings.configs.cm)],
    [files.params, configMapPatch('argocd-cmd-params-cm', settings.configs.params)],
    [files.notifications, configMapPatch('argocd-notifications-cm', notificationsData(settings))],
    [files.repoServer, repoServer],
  ];
  return new Map(documents.map(([file, content]) => [file, header + stringify(content, { lineWidth: 0 })]));
}
