/**
 * The layout of the files the program writes into the repository: the rendered tree
 * `dist/<environment>/<chart>.yaml`, the marker that says synth created a folder, and the
 * encrypted Secrets `secrets/<environment>/<group>/<name>.sops.yaml`.
 */

/** The committed rendering, relative to the project root. */
export const RENDERED_DIR = 'dist';

/** Rendered manifests end in `.yaml`; one file per chart, named after the chart. */
export const MANIFEST_EXTENSION = '.yaml';

/**
 * The file synth writes into every output folder it creates. Synth replaces a folder only
 * when it holds this file (or is empty or absent): a mistyped `--outdir` never deletes work.
 */
export const RENDER_MARKER = '.platform-gitops-render';
export const RENDER_MARKER_TEXT = 'Written by `npm run synth`: this folder is replaced as a whole on every render.\n';

/**
 * The prefix of the temporary folder synth renders an output folder into, beside it
 * (`.dist-render-XXXXXX` for dist/; the old folder is `<that>-previous` during the swap).
 */
export function renderStagingPrefix(outdirName: string): string {
  return `.${outdirName}-render-`;
}

/**
 * The \`output\` of cdk8s.yaml: \`npx cdk8s synth\` deletes it before running the program, so
 * it is a scratch folder, never dist/; the program renders dist/ itself (src/main.ts).
 */
export const CDK8S_CLI_OUTPUT = 'build/cdk8s-cli';

/** An application's chart: `dist/<env>/<application>.yaml`, its Argo CD Application and its secrets group share the name. */
export function applicationChartId(application: string): string {
  return application;
}

/** `<chart>.yaml`: a chart's file in its environment's folder. */
export function chartFileName(chart: string): string {
  return `${chart}${MANIFEST_EXTENSION}`;
}

/** `<environment>/<chart>.yaml`, relative to an output folder. */
export function chartFile(environment: string, chart: string): string {
  return `${environment}/${chartFileName(chart)}`;
}

/** `dist/<environment>`: where an environment's manifests live in the repository. */
export function manifestsPath(environment: string): string {
  return `${RENDERED_DIR}/${environment}`;
}

/**
 * Where an environment's application charts are published: the OCI repository path
 * `oci://<registry path>/<environment>`, holding one chart per application (`<application>`).
 */
export function publishedChartsRepository(registry: string, environment: string): string {
  return `${registry}/${environment}`;
}

/**
 * Argo CD's Helm-over-OCI `repoURL` for an `oci://` location: the same without the scheme
 * (argo-cd v3.6.1 util/helm/client.go `IsHelmOciRepo`: a URL without a scheme is an OCI
 * registry; docs/user-guide/helm.md: "the oci:// syntax is not included").
 */
export function helmOciRepoURL(location: string): string {
  return location.replace(/^oci:\/\//, '');
}

/** Folder of a group's encrypted secrets, relative to the repository root. */
export function secretsPath(environment: string, group: string): string {
  return `secrets/${environment}/${group}`;
}

/** File name of an encrypted Secret. */
export function encryptedFileName(name: string): string {
  return `${name}.sops.yaml`;
}
