import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * The gate's schemas as ajv compiles them: the OpenAPI definitions of both ends of the
 * supported Kubernetes range (`schemas/kubernetes-<version>.json`, KUBERNETES_VERSIONS) and
 * the served versions of the CRDs the platform uses (`schemas/crds/*.yaml`), adapted to what
 * the API server enforces and ajv does not know (see `adaptSchema`). Only the ahead-of-time
 * compilation (`compiled-validators.ts`) reads this module: a run of the gate loads the
 * compiled validators and never parses the schemas.
 */

/** Where the project keeps its schemas (relative to the repository root). */
export const SCHEMA_DIR = 'schemas';
/** The CRDs' folder inside SCHEMA_DIR. */
export const CRD_DIR = 'crds';

/**
 * The two ends of the supported Kubernetes range (README, "Supported stack"), which
 * src/infrastructure/supported-kubernetes.ts computes from upstream's end of life and every
 * pinned component's tested range (a test keeps the two equal); the gate validates against both.
 */
export const KUBERNETES_VERSIONS = ['1.35', '1.36'] as const;

/** `schemas/kubernetes-<minor>.0.json`: the definitions of one Kubernetes minor. */
export function kubernetesSchemaFile(minor: string): string {
  return `kubernetes-${minor}.0.json`;
}

/** The CRD files below `<schemaDir>/crds/`, by name, sorted. */
export function crdFileNames(schemaDir: string): string[] {
  return fs
    .readdirSync(path.join(schemaDir, CRD_DIR))
    .filter((file) => file.endsWith('.yaml'))
    .sort();
}

/** One version of a CustomResourceDefinition of `<schemaDir>/crds/`. */
export interface CrdVersion {
  /** `spec.group`. */
  readonly group: string;
  /** `spec.names.kind`. */
  readonly kind: string;
  /** The version's name (`v1`, `v1beta2`). */
  readonly version: string;
  /** Whether the API server serves it. */
  readonly served: boolean;
  /** Its `schema.openAPIV3Schema`, parsed afresh for each call (callers adapt it in place). */
  readonly schema: SchemaNode;
}

/** Every version with a schema of every CRD below `<schemaDir>/crds/`, file by file (crdFileNames), in the order written. */
export function crdVersions(schemaDir: string): CrdVersion[] {
  const versions: CrdVersion[] = [];
  for (const file of crdFileNames(schemaDir)) {
    for (const document of parseAllDocuments(fs.readFileSync(path.join(schemaDir, CRD_DIR, file), 'utf8'))) {
      const crd = document.toJS() as SchemaNode | null;
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      for (const version of crd.spec.versions ?? []) {
        const schema = version.schema?.openAPIV3Schema as SchemaNode | undefined;
        if (schema === undefined) continue;
        versions.push({ group: crd.spec.group, kind: crd.spec.names.kind, version: version.name, served: version.served === true, schema });
      }
    }
  }
  return versions;
}

/** Every schema file, relative to the repository root: each supported minor's definitions, then the CRDs. */
export function schemaFiles(root: string): string[] {
  return [
    ...KUBERNETES_VERSIONS.map((minor) => path.join(SCHEMA_DIR, kubernetesSchemaFile(minor))),
    ...crdFileNames(path.join(root, SCHEMA_DIR)).map((file) => path.join(SCHEMA_DIR, CRD_DIR, file)),
  ];
}

/** Each version's definitions are added to ajv under its own id; refs resolve against it. */
export const kubernetesSchemaId = (minor: string) => `https://schemas.platform-gitops.invalid/${kubernetesSchemaFile(minor)}`;
/** Custom resources' metadata is checked as the newest version's ObjectMeta. */
const OBJECT_META_REF = `${kubernetesSchemaId(KUBERNETES_VERSIONS[KUBERNETES_VERSIONS.length - 1]!)}#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`;

export type SchemaNode = Record<string, any>;

/** `apps/v1` + `Deployment` -> `apps/v1 Deployment`; core types have no group (`v1`). */
export function typeKey(apiVersion: string, kind: string): string {
  return `${apiVersion} ${kind}`;
}

export function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Formats the API server checks; every other format it ignores, and so do we (see
 * `SchemaCatalog.formats`). `byte` is base64 (Go's StdEncoding), `date-time` is RFC 3339.
 * The compiled validators read them by name at run time (`compiled-validators.ts`).
 */
export const KNOWN_FORMATS = {
  int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
  float: { type: 'number', validate: () => true },
  double: { type: 'number', validate: () => true },
  byte: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/,
} as const;

/** A type the gate can check: its key (`apps/v1 Deployment`) and the schema ajv compiles. */
export interface CatalogType {
  readonly key: string;
  /** A schema ajv compiles: a `$ref` into a version's definitions, or a CRD's openAPIV3Schema. */
  readonly schema: SchemaNode;
}

/** Every schema of the gate, adapted, with the vocabulary ajv must be told about. */
export interface SchemaCatalog {
  /** Per supported version, its definitions (added to ajv under `kubernetesSchemaId`). */
  readonly definitions: ReadonlyMap<string, SchemaNode>;
  /** Per supported version, the built-in types it serves. */
  readonly kubernetes: ReadonlyMap<string, readonly CatalogType[]>;
  /** Custom resources, one per served version of each CRD; a later file's type replaces an earlier one. */
  readonly crds: readonly CatalogType[];
  /** Keywords that are annotations to ajv (`example`, `x-kubernetes-*`). */
  readonly keywords: ReadonlySet<string>;
  /** Formats met in the schemas that the API server does not check (ignored). */
  readonly formats: ReadonlySet<string>;
}

/** Read and adapt every schema below `schemaDir` (the project's `schemas/`). */
export function readSchemaCatalog(schemaDir: string): SchemaCatalog {
  const vocabulary = { keywords: new Set<string>(['example']), formats: new Set<string>() };
  const definitions = new Map<string, SchemaNode>();
  const kubernetes = new Map<string, CatalogType[]>();
  for (const minor of KUBERNETES_VERSIONS) {
    const document = JSON.parse(fs.readFileSync(path.join(schemaDir, kubernetesSchemaFile(minor)), 'utf8')) as SchemaNode;
    const types = new Map<string, CatalogType>();
    for (const [name, definition] of Object.entries<SchemaNode>(document.definitions)) {
      adaptSchema(definition, true, vocabulary);
      for (const gvk of definition['x-kubernetes-group-version-kind'] ?? []) {
        const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
        const key = typeKey(apiVersion, gvk.kind);
        types.set(key, { key, schema: { $ref: `${kubernetesSchemaId(minor)}#/definitions/${name}` } });
      }
    }
    definitions.set(minor, document.definitions);
    kubernetes.set(minor, [...types.values()]);
  }

  const crds = new Map<string, CatalogType>();
  for (const { group, kind, version, served, schema } of crdVersions(schemaDir)) {
    if (!served) continue;
    adaptSchema(schema, true, vocabulary);
    // The API server checks a custom resource's metadata as ObjectMeta; CRDs say only `type: object`.
    schema.properties = { ...schema.properties, metadata: { $ref: OBJECT_META_REF } };
    const key = typeKey(`${group}/${version}`, kind);
    crds.set(key, { key, schema });
  }
  for (const format of Object.keys(KNOWN_FORMATS)) vocabulary.formats.delete(format);
  return { definitions, kubernetes, crds: [...crds.values()], keywords: vocabulary.keywords, formats: vocabulary.formats };
}

/**
 * Make an upstream schema say what the API server enforces (in place):
 * - unknown fields are refused: an object schema with `properties` and without
 *   `x-kubernetes-preserve-unknown-fields` gets `additionalProperties: false` (the server
 *   prunes or, with strict field validation, rejects them; a misspelt field is a bug);
 *   branches of allOf/anyOf/oneOf/not only add checks to fields named elsewhere, so they
 *   are left open;
 * - `x-kubernetes-int-or-string` without a type accepts an integer or a string;
 * - an `x-kubernetes-embedded-resource` also has apiVersion, kind and metadata;
 * - `x-kubernetes-*` keywords are annotations to ajv (CEL rules in
 *   `x-kubernetes-validations` are not evaluated); unknown formats are ignored, as the
 *   API server ignores them.
 */
function adaptSchema(node: unknown, structural: boolean, vocabulary: { keywords: Set<string>; formats: Set<string> }): void {
  if (!isNode(node)) return;
  for (const key of Object.keys(node)) if (key.startsWith('x-')) vocabulary.keywords.add(key);
  if (typeof node.format === 'string') vocabulary.formats.add(node.format);
  if (node['x-kubernetes-int-or-string'] === true && node.type === undefined && node.anyOf === undefined && node.oneOf === undefined) {
    node.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (node['x-kubernetes-embedded-resource'] === true && isNode(node.properties)) {
    node.properties = { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: OBJECT_META_REF }, ...node.properties };
  }
  if (structural && isNode(node.properties) && node.additionalProperties === undefined && node['x-kubernetes-preserve-unknown-fields'] !== true) {
    node.additionalProperties = false;
  }
  for (const child of Object.values(node.properties ?? {})) adaptSchema(child, structural, vocabulary);
  for (const child of Array.isArray(node.items) ? node.items : [node.items]) adaptSchema(child, structural, vocabulary);
  adaptSchema(node.additionalProperties, structural, vocabulary);
  for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
    for (const branch of node[keyword] ?? []) adaptSchema(branch, false, vocabulary);
  }
  adaptSchema(node.not, false, vocabulary);
}
