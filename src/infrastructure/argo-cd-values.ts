import { stringify } from 'yaml';
import { CHART_WAVES, DEPLOYMENT_NOTIFICATIONS, SOPS_AGE, SOPS_PLUGIN } from '../contract/choices';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import { restrictedContainer } from '../contract/security-context';
import { IMAGES } from '../contract/images';
import { healthCustomizations } from './argo-cd-health';

/**
 * The repository server's own volumes that a plugin's sidecar mounts, as upstream's manifests
 * name them (argo-cd v3.6.1 manifests/base/repo-server/argocd-repo-server-deployment.yaml: both
 * emptyDirs; the `copyutil` init container copies Argo CD's binary into var-files).
 */
export const REPO_SERVER_VOLUMES = { varFiles: 'var-files', plugins: 'plugins' } as const;

const CMP = {
  /** Argo CD's own binaries, shared with sidecars: the plugin server is `argocd-cmp-server` there. */
  varFiles: { volume: REPO_SERVER_VOLUMES.varFiles, mountPath: '/var/run/argocd' },
  /** The sockets the repository server finds plugins by. */
  plugins: { volume: REPO_SERVER_VOLUMES.plugins, mountPath: '/home/argocd/cmp-server/plugins' },
  /** The plugin's configuration, from the platform's argocd-cmp-cm ConfigMap (argo-cd-kustomization.ts). */
  config: { volume: 'argocd-cmp-cm', mountPath: '/home/argocd/cmp-server/config/plugin.yaml' },
  tmp: { volume: 'cmp-tmp', mountPath: '/tmp' },
} as const;

/**
 * What the plugin checks of each decrypted file before it emits anything (POSIX awk, as
 * busybox has it in the sops image): sops' JSON of the document, one key a line, each string
 * escaped on its line (github.com/getsops/sops/v3 stores/json/store.go, v3.13.3: `encodeTree`
 * writes each key and value with json.Marshal, `reindentJSON` runs json.Indent with a tab, and
 * EmitPlainFile emits the first YAML document only; run on the real sops in
 * test/sops-plugin.test.ts). The document must be exactly the catalog's Secret of its file
 * name, as the Application's plugin variable describes it (`<name> <namespace> <type>
 * <key>...` a line, SOPS_PLUGIN.expectationVariable): `v1`, `Secret`, the name, the namespace,
 * the sync wave, the type and, under `stringData` or `data`, exactly the keys, every value a
 * string; nothing else at any level. Then it prints the same document as YAML (each key and
 * value the JSON string, a YAML double-quoted scalar). On the first rule broken it names the
 * file and the rule on stderr and prints nothing.
 */
const SOPS_PLUGIN_CHECK = String.raw`function fail(rule) { printf "sops plugin: %s: %s; an encrypted file holds exactly the Secret the catalog names for it (docs/secrets.md)\n", file, rule > "/dev/stderr"; bad = 1; exit 1 }
function q(text) { return "\"" text "\"" }
function indent(d,   s) { s = ""; while (d-- > 0) s = s "  "; return s }
BEGIN {
  file = ENVIRON["SOPS_FILE"]; name = file; sub(/\.sops\.yaml$/, "", name)
  n = split(ENVIRON["ARGOCD_ENV_${SOPS_PLUGIN.expectationVariable}"], specs, "\n")
  for (i = 1; i <= n; i++) {
    m = split(specs[i], f, " ")
    if (m < 4 || f[1] != name) continue
    found = 1; keys = m - 3
    for (j = 4; j <= m; j++) key[q(f[j])] = 1
    want[q("apiVersion")] = q("v1"); want[q("kind")] = q("Secret"); want[q("type")] = q(f[3])
    want[q("metadata") "." q("name")] = q(f[1]); want[q("metadata") "." q("namespace")] = q(f[2])
  }
  want[q("metadata") "." q("annotations") "." q("${SYNC_WAVE_ANNOTATION}")] = q("${CHART_WAVES.secrets}")
  if (!found) fail("the catalog names no Secret " name " in this folder (the plugin variable ${SOPS_PLUGIN.expectationVariable} of the Application)")
  map[q("metadata")] = 1; map[q("metadata") "." q("annotations")] = 1; map[q("stringData")] = 1; map[q("data")] = 1
}
{ line = $0; sub(/^[ \t]+/, "", line); sub(/[ \t]+$/, "", line) }
NR == 1 { if (line != "{") fail("is not one mapping"); next }
ended { fail("holds more than one document") }
line == "}" || line == "}," { if (depth == 0) { if (line != "}") fail("is not one mapping"); ended = 1 } else depth--; next }
{
  if (!match(line, /^"([^"\\]|\\.)*": /)) fail("line " NR " is not a key of a mapping")
  k = substr(line, 1, RLENGTH - 2); rest = substr(line, RLENGTH + 1); at = depth == 0 ? k : path[depth] "." k
  if (at in seen) fail(at " appears twice")
  seen[at] = 1
  if (rest == "{" || rest == "{}" || rest == "{},") {
    if (!(at in map)) fail(at " is not allowed")
    if (rest != "{") { out = out indent(depth) k ": {}\n"; next }
    out = out indent(depth) k ":\n"; depth++; path[depth] = at; next
  }
  if (!match(rest, /^"([^"\\]|\\.)*",?$/)) fail(at " is not a string")
  v = rest; sub(/,$/, "", v)
  if (depth == 1 && (path[1] == q("stringData") || path[1] == q("data"))) {
    if (!(k in key)) fail(at " is not a key of the Secret " name " in the catalog")
    section[path[1]]++
  } else if (!(at in want)) fail(at " is not allowed")
  else if (want[at] != v) fail(at " is " v ", expected " want[at])
  out = out indent(depth) k ": " v "\n"
}
END {
  if (bad) exit 1
  if (!ended) fail("is not one mapping")
  for (w in want) if (!(w in seen)) fail(w " is missing, expected " want[w])
  if ((q("stringData") in section) + (q("data") in section) != 1 || section[q("stringData")] + section[q("data")] != keys) fail("stringData does not hold exactly the keys of the Secret " name " in the catalog")
  printf "%s", out
}`;

/**
 * The sops plugin's manifest generation: every encrypted Secret of the source folder, in name
 * order (a glob: no word splitting, any file name), decrypted with the age key and checked
 * (SOPS_PLUGIN_CHECK); all are emitted, one YAML document each, only once every one passed.
 * `set -eu`: a file that does not decrypt (wrong or missing key) or breaks a rule fails the
 * generation, and Argo CD shows the error naming the file. A symbolic link is refused.
 */
export const SOPS_PLUGIN_GENERATE = [
  'set -eu',
  // The awk program holds no single quote (asserted in test/argo-cd-plugin.test.ts).
  `check='${SOPS_PLUGIN_CHECK}'`,
  "out=''",
  `for file in ./${SOPS_PLUGIN.filePattern}; do`,
  '  [ -e "$file" ] || [ -L "$file" ] || continue',
  '  name=${file#./}',
  '  if [ -L "$file" ] || [ ! -f "$file" ]; then echo "sops plugin: $name: is not a regular file" >&2; exit 1; fi',
  '  json=$(sops decrypt --input-type yaml --output-type json "$file")',
  '  yaml=$(printf \'%s\\n\' "$json" | SOPS_FILE="$name" awk "$check")',
  "  out=\"$out---",
  '$yaml',
  '"',
  'done',
  "printf '%s' \"$out\"",
].join('\n');

/**
 * When each trigger of DEPLOYMENT_NOTIFICATIONS fires: expressions on the Application, Argo
 * CD's catalog's conditions for its own on-sync-succeeded, on-sync-failed and
 * on-health-degraded (notifications_catalog/triggers/*.yaml of the argo-cd module). Each is
 * sent once per synced revision (`oncePer`; notifications-engine pkg/triggers/service.go keys
 * the notified state on it), so a self-heal sync of the same revision posts nothing again.
 * The catalog's `syncResult.revision` is empty for an Application of several sources, as the
 * applications' are: their `revisions` first.
 */
const NOTIFICATION_CONDITIONS: Readonly<Record<keyof typeof DEPLOYMENT_NOTIFICATIONS.triggers, string>> = {
  'on-sync-succeeded': "app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']",
  'on-sync-failed': "app.status.operationState != nil and app.status.operationState.phase in ['Error', 'Failed']",
  'on-health-degraded': "app.status.health.status == 'Degraded'",
};
const NOTIFICATION_ONCE_PER = 'app.status.operationState?.syncResult?.revisions ?? app.status.operationState?.syncResult?.revision';

/**
 * The variables every template sets first (Go templates of notifications-engine, with
 * sprig): `$path`, where the manifests come from (the first source's: its folder,
 * `dist/<environment>`, or for a published chart `<registry path>/<chart>`), and `$revision`,
 * what the last sync applied (a commit, or the chart's version).
 */
const FIRST_SOURCE_PATH = '{{ $path = .path }}{{ if .chart }}{{ $path = printf "%s/%s" .repoURL .chart }}{{ end }}';
const NOTIFICATION_VARIABLES = [
  `{{ $path := "" }}{{ with .app.spec.source }}${FIRST_SOURCE_PATH}{{ end }}{{ with .app.spec.sources }}{{ with index . 0 }}${FIRST_SOURCE_PATH}{{ end }}{{ end }}`,
  '{{ $revision := "" }}{{ with .app.status.operationState }}{{ with .syncResult }}{{ $revision = default "" .revision }}{{ with .revisions }}{{ $revision = index . 0 }}{{ end }}{{ end }}{{ end }}',
].join('');

/**
 * What each template posts: a Slack-compatible `{"text": ...}` naming the Application and
 * its manifests' folder, built with sprig's `toJson` so a message with quotes stays valid
 * JSON, and `default ""` where Argo CD leaves a message out.
 */
const NOTIFICATION_TEXT: Readonly<Record<string, string>> = {
  'app-sync-succeeded': 'printf "%s (%s): deployed, sync succeeded at revision %s" .app.metadata.name $path $revision',
  'app-sync-failed': 'printf "%s (%s): deployment FAILED at revision %s: %s" .app.metadata.name $path $revision (default "" .app.status.operationState.message)',
  'app-health-degraded': 'printf "%s (%s): health Degraded: %s" .app.metadata.name $path (default "" .app.status.health.message)',
};

/**
 * The notifications (1.6): the team chat as a webhook service whose address is `$<key>` of
 * the controller's Secret, one template and one trigger per event, each a key of
 * argocd-notifications-cm. The Secret is the platform's own: the kustomization deletes
 * upstream's empty one (argo-cd-kustomization.ts).
 */
function notificationValues(): ArgoCdSettings['notifications'] {
  const { service, secret, triggers } = DEPLOYMENT_NOTIFICATIONS;
  return {
    notifiers: {
      [`service.webhook.${service}`]: stringify({ url: `$${secret.key}`, headers: [{ name: 'Content-Type', value: 'application/json' }] }),
    },
    templates: Object.fromEntries(
      Object.values(triggers).map((template) => [
        `template.${template}`,
        stringify({ webhook: { [service]: { method: 'POST', body: `${NOTIFICATION_VARIABLES}{"text": {{ ${NOTIFICATION_TEXT[template]} | toJson }}}` } } }, { lineWidth: 0 }),
      ]),
    ),
    triggers: Object.fromEntries(
      Object.entries(triggers).map(([trigger, template]) => [`trigger.${trigger}`, stringify([{ when: NOTIFICATION_CONDITIONS[trigger as keyof typeof triggers], oncePer: NOTIFICATION_ONCE_PER, send: [template] }], { lineWidth: 0 })]),
    ),
  };
}

/**
 * Restricted-profile security context for the containers the platform adds: Argo CD's own
 * user, so the plugin server shares files with the repository server.
 */
const RESTRICTED_CONTAINER = restrictedContainer(999);

/** A container or volume of a Pod spec, as Kubernetes reads it. */
type PodSpecItem = Record<string, unknown> & { readonly name: string };

/**
 * The platform's settings of Argo CD, which the kustomization's patches write into upstream's
 * objects (src/infrastructure/argo-cd-kustomization.ts).
 */
export interface ArgoCdSettings {
  readonly configs: {
    /** argocd-cm's data added to upstream's: health checks. */
    readonly cm: Record<string, string>;
    /** argocd-cmd-params-cm's data. */
    readonly params: Record<string, string>;
    /** The Config Management Plugins (argocd-cmp-cm), by name: each one's ConfigManagementPlugin spec. */
    readonly cmp: { readonly plugins: Record<string, Record<string, unknown>> };
  };
  /** argocd-notifications-cm's keys: services, templates and triggers. */
  readonly notifications: {
    readonly notifiers: Record<string, string>;
    readonly templates: Record<string, string>;
    readonly triggers: Record<string, string>;
  };
  /** What the repository server's Deployment gets beside upstream's: the plugins' sidecars and their volumes. */
  readonly repoServer: { readonly extraContainers: readonly PodSpecItem[]; readonly volumes: readonly PodSpecItem[] };
}

/** What the settings of Argo CD are built from. */
export interface ArgoCdValuesOptions {
  /** Seconds after which Argo CD ends any sync operation (orderedSyncSeconds). */
  readonly syncTimeoutSeconds: number;
}

/**
 * The settings of Argo CD, the same for every environment, in the kustomization the Pulumi
 * bootstrap applies (first install) and the self-managed `argocd` Application syncs
 * (afterwards), so the two never disagree:
 * - Secrets (5.3): the `sops` Config Management Plugin (SOPS_PLUGIN) runs as a sidecar
 *   of the repository server, upstream's sops image with Argo CD's plugin server, and
 *   alone holds the age key (mounted read-only, named by SOPS_AGE_KEY_FILE). Kustomize
 *   exec plugins stay disabled, so no commit can run code beside the key.
 * - `controller.sync.timeout.seconds` ends a sync operation, its retries included, only
 *   after the contract's waits along the root's walk of every wave (`syncTimeoutSeconds`,
 *   orderedSyncSeconds); each Application's retries' waits keep the contract's span.
 * - the app of apps waits on its children's health, and a starting Prometheus or
 *   Alertmanager, a Certificate not issued yet and a Gateway waiting for its certificate's
 *   Secret are not Degraded (argo-cd-health.ts).
 * - 1.6: the applications' deployments announced in the team chat (notificationValues).
 */
export function argoCdValues(options: ArgoCdValuesOptions): ArgoCdSettings {
  return {
    configs: {
      cm: healthCustomizations(),
      params: {
        'controller.sync.timeout.seconds': String(options.syncTimeoutSeconds),
      },
      cmp: {
        plugins: {
          [SOPS_PLUGIN.name]: { generate: { command: ['sh', '-c', SOPS_PLUGIN_GENERATE] } },
        },
      },
    },
    notifications: notificationValues(),
    // Dex and upstream's NetworkPolicies: deleted by the kustomization (argo-cd-kustomization.ts).
    repoServer: {
      extraContainers: [
        {
          name: SOPS_PLUGIN.name,
          image: IMAGES.sops,
          command: [`${CMP.varFiles.mountPath}/argocd-cmp-server`],
          env: [{ name: SOPS_AGE.keyFileVariable, value: `${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey}` }],
          securityContext: RESTRICTED_CONTAINER,
          resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          volumeMounts: [
            { name: CMP.varFiles.volume, mountPath: CMP.varFiles.mountPath },
            { name: CMP.plugins.volume, mountPath: CMP.plugins.mountPath },
            { name: CMP.config.volume, mountPath: CMP.config.mountPath, subPath: `${SOPS_PLUGIN.name}.yaml` },
            { name: CMP.tmp.volume, mountPath: CMP.tmp.mountPath },
            { name: SOPS_AGE.secretName, mountPath: SOPS_AGE.mountPath, readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: CMP.config.volume, configMap: { name: 'argocd-cmp-cm' } },
        { name: CMP.tmp.volume, emptyDir: {} },
        { name: SOPS_AGE.secretName, secret: { secretName: SOPS_AGE.secretName } },
      ],
    },
  };
}
