import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import { RE2JS } from 're2js';
import { parseAllDocuments } from 'yaml';

/**
 * Schema validation of rendered objects against the OpenAPI definitions of both ends of the
 * supported Kubernetes range (`schemas/kubernetes-<version>.json`, KUBERNETES_VERSIONS) and
 * the CRDs the platform uses (`schemas/crds/*.yaml`), with ajv. A built-in object must be
 * valid in every supported version, so an API removed or a field added in between is
 * caught (as kubeconform's `-kubernetes-version` would, run once per version). The schemas
 * are upstream's; this module only adapts them to what the API server enforces and ajv
 * does not know (see `adaptSchema`). Each kind's validator is compiled once per version,
 * the first time an object of that kind is seen.
 */

/** Where the project keeps its schemas (relative to the repository root). */
export const SCHEMA_DIR = 'schemas';
const CRD_DIR = 'crds';

/**
 * The supported Kubernetes range (README, "Supported stack"): the oldest and the newest minor
 * the platform's upstream components are tested on; the gate validates against both.
 */
export const KUBERNETES_VERSIONS = ['1.33', '1.36'] as const;

/** `schemas/kubernetes-<minor>.0.json`: the definitions of one Kubernetes minor. */
export function kubernetesSchemaFile(minor: string): string {
  return `kubernetes-${minor}.0.json`;
}

/** Each version's definitions are added to ajv under its own id; refs resolve against it. */
const kubernetesSchemaId = (minor: string) => `https://schemas.platform-gitops.invalid/${kubernetesSchemaFile(minor)}`;
/** Custom resources' metadata is checked as the newest version's ObjectMeta. */
const OBJECT_META_REF = `${kubernetesSchemaId(KUBERNETES_VERSIONS[KUBERNETES_VERSIONS.length - 1]!)}#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`;

type SchemaNode = Record<string, any>;

/** `apps/v1` + `Deployment` -> `apps/v1 Deployment`; core types have no group (`v1`). */
function typeKey(apiVersion: string, kind: string): string {
  return `${apiVersion} ${kind}`;
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Kubernetes, like Go, matches `pattern` with RE2; JavaScript's RegExp rejects some of the
 * CRDs' patterns (`(?i)` in prometheusrule and alertmanagerconfig) and would read others
 * differently. RE2JS is a port of Go's engine; its `test` is an unanchored search, as
 * JSON Schema's `pattern` is.
 */
const re2: RegExpEngine = Object.assign((pattern: string) => RE2JS.compile(pattern), {
  code: 'require("re2js").RE2JS.compile',
});

/**
 * Formats the API server checks; every other format it ignores, and so do we (see
 * `registerFormat`). `byte` is base64 (Go's StdEncoding), `date-time` is RFC 3339.
 */
const KNOWN_FORMATS = {
  int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
  float: { type: 'number', validate: () => true },
  double: { type: 'number', validate: () => true },
  byte: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/,
} as const;

/** One CRD file, its `<group> <kind>` as scanned, and whether its schemas are loaded. */
interface CrdEntry {
  readonly file: string;
  readonly header: string | undefined;
  loaded: boolean;
}

/**
 * The schemas of every type the gate knows, compiled on demand. One instance holds one
 * ajv instance; `defaultRegistry()` shares one per process.
 */
export class SchemaRegistry {
  private readonly ajv: Ajv;
  /** Per supported version, `<apiVersion> <kind>` -> definition name. */
  private readonly kubernetesTypes = new Map<string, Map<string, string>>();
  private readonly crdSchemas = new Map<string, SchemaNode>();
  /** Group/kind hints from a cheap scan of each CRD file; confirmed when the file is read. */
  private readonly crdFiles: CrdEntry[];
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly keywords = new Set<string>();

  constructor(private readonly schemaDir: string) {
    this.ajv = new Ajv({
      allErrors: true,
      verbose: true,
      // Unknown keywords and formats fail loudly; upstream's own vocabulary is registered
      // below as it is met. Type and tuple hints are advice ajv logs, not errors, and
      // structural schemas put `required` in oneOf branches without `properties` by design.
      strict: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      code: { regExp: re2 },
    });
    for (const [name, format] of Object.entries(KNOWN_FORMATS)) this.ajv.addFormat(name, format as any);
    this.registerKeyword('example');

    for (const minor of KUBERNETES_VERSIONS) {
      const kubernetes = JSON.parse(fs.readFileSync(path.join(schemaDir, kubernetesSchemaFile(minor)), 'utf8')) as SchemaNode;
      const types = new Map<string, string>();
      for (const [name, definition] of Object.entries<SchemaNode>(kubernetes.definitions)) {
        this.adaptSchema(definition, true);
        for (const gvk of definition['x-kubernetes-group-version-kind'] ?? []) {
          const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
          types.set(typeKey(apiVersion, gvk.kind), name);
        }
      }
      this.kubernetesTypes.set(minor, types);
      this.ajv.addSchema({ $id: kubernetesSchemaId(minor), definitions: kubernetes.definitions });
    }

    const crdDir = path.join(schemaDir, CRD_DIR);
    this.crdFiles = fs
      .readdirSync(crdDir)
      .filter((file) => file.endsWith('.yaml'))
      .sort()
      .map((file) => ({ file: path.join(crdDir, file), header: scanCrdHeader(path.join(crdDir, file)), loaded: false }));
  }

  /** Problems of one object, `<field path>: <what is wrong>`; empty when it is valid. */
  validate(object: unknown): string[] {
    if (!isNode(object)) return ['(document): must be a Kubernetes object (a mapping with apiVersion and kind)'];
    const { apiVersion, kind } = object;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      return ['(object): apiVersion and kind are required strings'];
    }
    const key = typeKey(apiVersion, kind);
    const servedBy = KUBERNETES_VERSIONS.filter((minor) => this.kubernetesTypes.get(minor)!.has(key));
    if (servedBy.length > 0) {
      // Each version judges the object; a problem of only some versions says which.
      const byVersion = KUBERNETES_VERSIONS.map((minor) => ({ minor, problems: this.problemsIn(minor, object, key) }));
      const all = [...new Set(byVersion.flatMap((entry) => entry.problems))];
      return all.map((problem) => {
        const versions = byVersion.filter((entry) => entry.problems.includes(problem)).map((entry) => entry.minor);
        return versions.length === KUBERNETES_VERSIONS.length ? problem : `${problem} (Kubernetes ${versions.join(', ')} only)`;
      });
    }
    const validator = this.crdValidatorFor(apiVersion, kind);
    if (validator === undefined) {
      return [
        `(object): unknown kind ${key}: neither Kubernetes ${KUBERNETES_VERSIONS.join(' nor ')} nor a CRD in ${SCHEMA_DIR}/${CRD_DIR} defines it (check apiVersion and kind, or add the CRD)`,
      ];
    }
    if (validator(object)) return [];
    return describeErrors(validator.errors ?? [], key);
  }

  /** Whether the gate has a schema for this type (without compiling it). */
  knows(apiVersion: string, kind: string): boolean {
    const key = typeKey(apiVersion, kind);
    return KUBERNETES_VERSIONS.some((minor) => this.kubernetesTypes.get(minor)!.has(key)) || this.crdSchemaFor(apiVersion, kind) !== undefined;
  }

  /** Whether Kubernetes `<minor>` (one of KUBERNETES_VERSIONS) serves this built-in type. */
  servedBy(minor: (typeof KUBERNETES_VERSIONS)[number], apiVersion: string, kind: string): boolean {
    return this.kubernetesTypes.get(minor)!.has(typeKey(apiVersion, kind));
  }

  /** Problems of a built-in object in one Kubernetes version, or that the version does not serve it. */
  private problemsIn(minor: string, object: SchemaNode, key: string): string[] {
    const definition = this.kubernetesTypes.get(minor)!.get(key);
    if (definition === undefined) return [`(object): Kubernetes ${minor} does not serve ${key} (removed or not yet added: use an API version every supported release serves)`];
    const cacheKey = `${minor} ${key}`;
    let validator = this.compiled.get(cacheKey);
    if (validator === undefined) {
      validator = this.ajv.compile({ $ref: `${kubernetesSchemaId(minor)}#/definitions/${definition}` });
      this.compiled.set(cacheKey, validator);
    }
    if (validator(object)) return [];
    return describeErrors(validator.errors ?? [], key);
  }

  private crdValidatorFor(apiVersion: string, kind: string): ValidateFunction | undefined {
    const key = typeKey(apiVersion, kind);
    const cached = this.compiled.get(key);
    if (cached !== undefined) return cached;
    const schema = this.crdSchemaFor(apiVersion, kind);
    if (schema === undefined) return undefined;
    const validator = this.ajv.compile(schema);
    this.compiled.set(key, validator);
    return validator;
  }

  private crdSchemaFor(apiVersion: string, kind: string): SchemaNode | undefined {
    const key = typeKey(apiVersion, kind);
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    // Read the file the scan points at first; only an unknown type pays for reading them all.
    for (const entry of this.crdFiles) {
      if (entry.header === `${group} ${kind}`) this.loadCrdFile(entry);
    }
    if (!this.crdSchemas.has(key)) for (const entry of this.crdFiles) this.loadCrdFile(entry);
    return this.crdSchemas.get(key);
  }

  private loadCrdFile(entry: CrdEntry): void {
    if (entry.loaded) return;
    entry.loaded = true;
    for (const document of parseAllDocuments(fs.readFileSync(entry.file, 'utf8'))) {
      const crd = document.toJS() as SchemaNode | null;
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      for (const version of crd.spec.versions ?? []) {
        const schema = version.schema?.openAPIV3Schema as SchemaNode | undefined;
        if (!version.served || schema === undefined) continue;
        const apiVersion = `${crd.spec.group}/${version.name}`;
        this.adaptSchema(schema, true);
        // The API server checks a custom resource's metadata as ObjectMeta; CRDs say only `type: object`.
        schema.properties = { ...schema.properties, metadata: { $ref: OBJECT_META_REF } };
        this.crdSchemas.set(typeKey(apiVersion, crd.spec.names.kind), schema);
      }
    }
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
  private adaptSchema(node: unknown, structural: boolean): void {
    if (!isNode(node)) return;
    for (const key of Object.keys(node)) if (key.startsWith('x-')) this.registerKeyword(key);
    if (typeof node.format === 'string') this.registerFormat(node.format);
    if (node['x-kubernetes-int-or-string'] === true && node.type === undefined && node.anyOf === undefined && node.oneOf === undefined) {
      node.anyOf = [{ type: 'integer' }, { type: 'string' }];
    }
    if (node['x-kubernetes-embedded-resource'] === true && isNode(node.properties)) {
      node.properties = { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: OBJECT_META_REF }, ...node.properties };
    }
    if (
      structural &&
      isNode(node.properties) &&
      node.additionalProperties === undefined &&
      node['x-kubernetes-preserve-unknown-fields'] !== true
    ) {
      node.additionalProperties = false;
    }
    for (const child of Object.values(node.properties ?? {})) this.adaptSchema(child, structural);
    for (const child of Array.isArray(node.items) ? node.items : [node.items]) this.adaptSchema(child, structural);
    this.adaptSchema(node.additionalProperties, structural);
    for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
      for (const branch of node[keyword] ?? []) this.adaptSchema(branch, false);
    }
    this.adaptSchema(node.not, false);
  }

  private registerKeyword(keyword: string): void {
    if (this.keywords.has(keyword)) return;
    this.keywords.add(keyword);
    this.ajv.addKeyword({ keyword });
  }

  private registerFormat(format: string): void {
    if (this.ajv.formats[format] === undefined) this.ajv.addFormat(format, true);
  }
}

/**
 * `<group> <kind>` of a one-CRD file from its first lines (`spec.group`, `spec.names.kind`),
 * without parsing the whole file; undefined when the text does not have the usual shape.
 */
function scanCrdHeader(file: string): string | undefined {
  const text = fs.readFileSync(file, 'utf8');
  const versions = text.search(/^ {2}versions:/m);
  const head = versions >= 0 ? text.slice(0, versions) : text;
  const group = /^ {2}group: ['"]?([^'"\s]+)/m.exec(head)?.[1];
  const names = head.search(/^ {2}names:/m);
  const kind = names >= 0 ? /^ {4}kind: ['"]?([^'"\s]+)/m.exec(head.slice(names))?.[1] : undefined;
  return group !== undefined && kind !== undefined ? `${group} ${kind}` : undefined;
}

/** `/spec/template/0/x` -> `spec.template[0].x`; keys with dots or slashes in brackets. */
export function formatPointer(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((key, index) => {
      if (/^\d+$/.test(key)) return `[${key}]`;
      if (/^[A-Za-z_$][\w$-]*$/.test(key)) return index === 0 ? key : `.${key}`;
      return `[${JSON.stringify(key)}]`;
    })
    .join('');
}

function join(base: string, key: string): string {
  return formatPointer(`${base}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Readable problems from ajv's errors: one line each, the field path first. */
function describeErrors(errors: readonly ErrorObject[], type: string): string[] {
  // A failed oneOf/anyOf explains itself; its branches' own complaints are noise.
  const combinators = errors.filter((error) => error.keyword === 'oneOf' || error.keyword === 'anyOf');
  const relevant = errors.filter(
    (error) =>
      !combinators.some(
        (combinator) =>
          combinator !== error &&
          error.instancePath.startsWith(combinator.instancePath) &&
          error.schemaPath.includes(`/${combinator.keyword}/`),
      ),
  );
  const lines = relevant.map((error) => {
    const where = formatPointer(error.instancePath) || '(object)';
    switch (error.keyword) {
      case 'additionalProperties':
        return `${join(error.instancePath, String(error.params.additionalProperty))}: unknown field: the ${type} schema has no such field (misspelt or misplaced?)`;
      case 'required':
        return `${join(error.instancePath, String(error.params.missingProperty))}: is required`;
      case 'type':
        return `${where}: must be ${error.params.type} (got ${shown(error.data)})`;
      case 'enum':
        return `${where}: must be one of ${(error.params.allowedValues as unknown[]).map(shown).join(', ')} (got ${shown(error.data)})`;
      case 'pattern':
        return `${where}: must match ${error.params.pattern} (got ${shown(error.data)})`;
      case 'oneOf':
      case 'anyOf': {
        const branches = error.schema as SchemaNode[];
        const types = branches.map((branch) => branch.type).filter((type) => type !== undefined);
        if (types.length === branches.length) return `${where}: must be ${types.join(' or ')} (got ${shown(error.data)})`;
        // Structural schemas say "these fields together" as branches of bare `required` lists.
        if (branches.every((branch) => Object.keys(branch).length === 1 && Array.isArray(branch.required))) {
          const sets = branches.map((branch) => (branch.required as string[]).join(' + ')).join(' | ');
          return `${where}: must have ${error.keyword === 'oneOf' ? 'exactly' : 'at least'} one of these sets of fields: ${sets}`;
        }
        return `${where}: ${error.message} (got ${shown(error.data)})`;
      }
      default:
        return `${where}: ${error.message}`;
    }
  });
  return [...new Set(lines)];
}

let shared: SchemaRegistry | undefined;

/** The project's schemas (`<repository>/schemas`), loaded once per process. */
export function defaultRegistry(): SchemaRegistry {
  shared ??= new SchemaRegistry(path.join(repositoryRoot(), SCHEMA_DIR));
  return shared;
}

/** The repository root: the nearest folder above this module that has `schemas/`. */
function repositoryRoot(): string {
  const marker = kubernetesSchemaFile(KUBERNETES_VERSIONS[0]);
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, SCHEMA_DIR, marker))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no ${SCHEMA_DIR}/${marker} above ${__dirname}`);
  }
}

/**
 * Schema problems of one object against every supported Kubernetes version or its CRD, one line each
 * (`<field path>: <problem>`); empty when valid. An unknown kind is a problem.
 */
export function validateAgainstSchema(object: unknown): string[] {
  return defaultRegistry().validate(object);
}
