import { SOPS_AGE, WAITS_SECONDS } from '../constants';
import { TOOL_IMAGES } from '../chart-versions';
import { restrictedContainer } from '../pod-security';

/** The Helm release name of Argo CD: the Pulumi bootstrap and the self-managed Application agree on it. */
export const ARGO_CD_RELEASE = 'argocd';

/** Where the KSOPS init container puts the plugin, shared with the repository server. */
const CUSTOM_TOOLS = { volume: 'custom-tools', mountPath: '/custom-tools' } as const;

/**
 * Argo CD's health of a child Application, for the app of apps: Argo CD stopped
 * assessing Applications by default (1.8), so a parent would move past a sync wave
 * before its children are ready. Healthy only when the child is synced, not mid-sync,
 * and healthy itself; otherwise the child's own status.
 */
export const APPLICATION_HEALTH_LUA = [
  'local hs = { status = "Progressing", message = "waiting for the application to report health" }',
  'local st = obj.status',
  'if st == nil or st.health == nil or st.health.status == nil then return hs end',
  'if st.operationState ~= nil and st.operationState.phase == "Running" then',
  '  hs.message = "sync operation running"',
  '  return hs',
  'end',
  'if st.health.status == "Healthy" and (st.sync == nil or st.sync.status ~= "Synced") then',
  '  hs.message = "healthy but not synced yet"',
  '  return hs',
  'end',
  'hs.status = st.health.status',
  'if st.health.message ~= nil then hs.message = st.health.message else hs.message = "" end',
  'return hs',
  '',
].join('\n');

/**
 * Restricted-profile security context for the containers the platform adds: Argo CD's own
 * user, so the copied plugin is owned by the repository server's user.
 */
const RESTRICTED_CONTAINER = restrictedContainer(999);

/**
 * Values of the argo-cd chart, the same for every environment, used by the Pulumi
 * bootstrap (first install) and by the self-managed `argocd` Application (afterwards),
 * so the two never disagree:
 * - KSOPS (5.3): kustomize may run exec plugins; an init container copies the pinned
 *   `ksops` binary next to the repository server's kustomize; the age key Secret is
 *   mounted read-only and named by SOPS_AGE_KEY_FILE.
 * - 300 s (1.3.3, 8): `controller.sync.timeout.seconds` ends any sync operation (and its
 *   wait for the health of each wave) after WAITS_SECONDS.controllerSync.
 * - the app of apps waits on its children's health (APPLICATION_HEALTH_LUA).
 */
export function argoCdValues(): Record<string, unknown> {
  return {
    configs: {
      cm: {
        'kustomize.buildOptions': '--enable-alpha-plugins --enable-exec',
        'resource.customizations.health.argoproj.io_Application': APPLICATION_HEALTH_LUA,
      },
      params: {
        'controller.sync.timeout.seconds': String(WAITS_SECONDS.controllerSync),
      },
    },
    // No single sign-on is configured; Dex would run for nothing.
    dex: { enabled: false },
    repoServer: {
      env: [{ name: SOPS_AGE.keyFileVariable, value: `${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey}` }],
      initContainers: [
        {
          name: 'install-ksops',
          image: TOOL_IMAGES.ksops,
          command: ['/usr/local/bin/ksops', 'install', CUSTOM_TOOLS.mountPath],
          securityContext: RESTRICTED_CONTAINER,
          resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
          volumeMounts: [{ name: CUSTOM_TOOLS.volume, mountPath: CUSTOM_TOOLS.mountPath }],
        },
      ],
      volumes: [
        { name: CUSTOM_TOOLS.volume, emptyDir: {} },
        { name: SOPS_AGE.secretName, secret: { secretName: SOPS_AGE.secretName } },
      ],
      volumeMounts: [
        { name: CUSTOM_TOOLS.volume, mountPath: '/usr/local/bin/ksops', subPath: 'ksops' },
        { name: SOPS_AGE.secretName, mountPath: SOPS_AGE.mountPath, readOnly: true },
      ],
    },
  };
}
