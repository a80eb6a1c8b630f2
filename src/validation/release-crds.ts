import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Environment } from '../environments';
import { versionFacts } from '../infrastructure/release-versions';
import type { LocatedObject } from './manifests';
import { CRD_DIR, crdFileNames } from './schema-catalog';

/**
 * The CRD schemas follow the versions an environment runs: an object of a custom resource is
 * valid in an environment only when a release version its values name installs that CRD
 * (src/infrastructure/release-versions.ts `crdSchemas`), so a version that drops or renames a
 * CRD, or an environment still on a version without it, is refused by the gate before a sync
 * would fail on an unknown kind.
 */

/** `spec.group` and `spec.names.kind` of a CRD file (one CRD a file: schemas/crds/SOURCES.md), read without parsing its schema. */
const GROUP = /^ {2}group: ['"]?([^'"\s]+)/m;
const KIND = /^ {2}names:\n(?: {4}.*\n)*? {4}kind: ['"]?([^'"\s]+)/m;

let cached: { dir: string; kinds: Map<string, string[]> } | undefined;

/** `<group>/<kind>` of every CRD file of `<schemaDir>/crds/`, by file name (read once per process and folder). */
export function crdKindsByFile(schemaDir: string): Map<string, string[]> {
  if (cached?.dir === schemaDir) return cached.kinds;
  const kinds = new Map<string, string[]>();
  for (const file of crdFileNames(schemaDir)) {
    const text = fs.readFileSync(path.join(schemaDir, CRD_DIR, file), 'utf8');
    const [group, kind] = [GROUP.exec(text)?.[1], KIND.exec(text)?.[1]];
    if (group !== undefined && kind !== undefined) kinds.set(file, [`${group}/${kind}`]);
  }
  cached = { dir: schemaDir, kinds };
  return kinds;
}

/** The CRD schema files the release versions `environment` runs install. */
export function environmentCrdFiles(environment: Environment): Set<string> {
  return new Set(Object.entries(environment.infrastructure.versions).flatMap(([release, version]) => versionFacts(release, version)?.crdSchemas ?? []));
}

/** `<group>` of an apiVersion (`cert-manager.io/v1` -> `cert-manager.io`; the core group is ''). */
function groupOf(apiVersion: unknown): string {
  const text = String(apiVersion ?? '');
  return text.includes('/') ? text.slice(0, text.indexOf('/')) : '';
}

/**
 * The objects of `objects` whose kind is a CRD of `kinds` that none of `installed` (the files
 * the environment's versions install) holds, each with the message of its finding.
 */
export function uninstalledCrdObjects(objects: readonly LocatedObject[], kinds: ReadonlyMap<string, readonly string[]>, installed: ReadonlySet<string>, versions: string): { subject: LocatedObject; message: string }[] {
  const fileOf = new Map([...kinds].flatMap(([file, list]) => list.map((kind) => [kind, file] as const)));
  return objects.flatMap((subject) => {
    const kind = `${groupOf(subject.object.apiVersion)}/${String(subject.object.kind)}`;
    const file = fileOf.get(kind);
    if (file === undefined || installed.has(file)) return [];
    return [{ subject, message: `${kind} is a CRD (schemas/${CRD_DIR}/${file}) that no release version this environment runs installs (${versions})` }];
  });
}
