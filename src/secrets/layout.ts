import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { CHART_WAVES } from '../contract/choices';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import type { Environment } from '../environments';
import { compareText } from '../base/text-order';
import { encryptedFileName, secretsPath } from '../contract/layout';
import { type SecretSpec, secretCatalog } from './catalog';

/**
 * The secrets tree of every environment, derived from the catalog: per group folder one
 * key-only template per Secret (`<name>.template.yaml`) beside its encrypted manifest
 * (`<name>.sops.yaml`, written by `npm run secrets -- init` through sops). Argo CD's `sops`
 * plugin reads only `*.sops.yaml`, so the templates never reach a cluster.
 */

/** Template of a Secret: its keys with empty values, and how to create the encrypted file. */
export function templateFileName(name: string): string {
  return `${name}.template.yaml`;
}

function header(lines: readonly string[]): string {
  return lines.map((line) => `# ${line}`.trimEnd()).join('\n') + '\n';
}

/**
 * The Secret manifest of `secret` with `values` as its stringData: what the encrypted file
 * holds once decrypted. Secrets sync in the wave before the migrations hook (CHART_WAVES).
 */
export function secretManifest(secret: SecretSpec, values: Readonly<Record<string, string>>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: secret.name,
      namespace: secret.namespace,
      annotations: { [SYNC_WAVE_ANNOTATION]: String(CHART_WAVES.secrets) },
    },
    type: secret.type,
    stringData: Object.fromEntries(Object.keys(secret.keys).map((key) => [key, values[key] ?? ''])),
  };
}

function templateOf(environment: string, secret: SecretSpec): string {
  const target = `${secretsPath(environment, secret.group)}/${encryptedFileName(secret.name)}`;
  const keys = Object.entries(secret.keys);
  return (
    header([
      'TEMPLATE: keys only, NO VALUES. Never commit this file with a value filled in.',
      `Secret ${secret.name} (${secret.purpose}).`,
      ...keys.map(([key, spec]) => `  ${key}: ${spec.meaning}`),
      `The encrypted Secret is ${target}, written by`,
      `  npm run secrets -- init ${environment}`,
      '(docs/secrets.md); this template is never synced.',
    ]) + stringify(secretManifest(secret, {}), { lineWidth: 0 })
  );
}

/** Every generated file of the secrets tree (the templates), by path relative to the repository root. */
export function secretsLayout(environments: readonly Environment[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const environment of environments) {
    for (const secret of secretCatalog(environment)) {
      files.set(`${secretsPath(environment.name, secret.group)}/${templateFileName(secret.name)}`, templateOf(environment.name, secret));
    }
  }
  return new Map([...files.entries()].sort(([a], [b]) => compareText(a, b)));
}

/** Files of the secrets tree that no catalog version writes any more (the KSOPS generator), removed by `scaffold`. */
export const RETIRED_FILES = ['kustomization.yaml', 'secret-generator.yaml'] as const;

/** Every encrypted Secret file of the environments, by path relative to the repository root. */
export function expectedEncryptedFiles(environments: readonly Environment[]): string[] {
  return environments
    .flatMap((environment) =>
      secretCatalog(environment).map((secret) => `${secretsPath(environment.name, secret.group)}/${encryptedFileName(secret.name)}`),
    )
    .sort();
}

/**
 * Symbolic links at or below `secrets/` of `root` (relative paths, sorted): init would write
 * through one to its target, and check, scan and the plugin would read what it points at, which
 * review does not see. Each is refused.
 */
export function symbolicLinksUnder(root: string, folder = 'secrets'): string[] {
  const links: string[] = [];
  const walk = (relative: string): void => {
    const stat = fs.lstatSync(path.join(root, relative), { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isSymbolicLink()) links.push(relative);
    else if (stat.isDirectory()) for (const name of fs.readdirSync(path.join(root, relative)).sort()) walk(`${relative}/${name}`);
  };
  walk(folder);
  return links.sort();
}

/** The refusal of a symbolic link under secrets/. */
export function symbolicLinkProblem(file: string): string {
  return `${file}: is a symbolic link; secrets/ holds regular files only (a link writes and reads another file than the one reviewed): replace it with the file itself`;
}
