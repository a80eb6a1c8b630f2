import * as fs from 'node:fs';
import * as path from 'node:path';
import { contentFingerprint } from '../base/fingerprint.cjs';
import { crdVersions, isNode, KUBERNETES_VERSIONS, kubernetesSchemaFile, SCHEMA_DIR, type SchemaNode, schemaFiles } from '../validation/schema-catalog';

/**
 * The project's schemas (`schemas/kubernetes-<minor>.0.json`, `schemas/crds/*.yaml`) in the
 * layout kubeconform reads from a `-schema-location` template: one standalone JSON Schema
 * file per type, `<version folder>/{{.ResourceKind}}{{.KindSuffix}}.json`
 * (yannh/kubeconform v0.8.0 pkg/registry/registry.go, `schemaPath`), converted the way the
 * catalogs kubeconform users read are made:
 * - built-in types as openapi2jsonschema `--kubernetes --expanded --stand-alone --strict`
 *   makes yannh/kubernetes-json-schema's `<version>-standalone-strict` folders
 *   (instrumenta/openapi2jsonschema, openapi2jsonschema/command.py and util.py): references
 *   expanded; `additionalProperties: false` on the root and on every object schema with
 *   `properties` reached through mappings (not through lists: allOf/anyOf/oneOf branches
 *   stay open); `int-or-string` formats as a oneOf; every field that is not required
 *   accepts null; `apiVersion` and `kind` limited to the type's own;
 * - custom resources as kubeconform's openapi2jsonschema.py makes them, with
 *   `FILENAME_FORMAT={kind}-{group}-{version}` (the KindSuffix layout) and
 *   `DENY_ROOT_ADDITIONAL_PROPERTIES` set (the strict variant: the root refuses unknown
 *   fields too). Its `metadata` stays what the CRD says (`type: object`).
 * Written once per content of the inputs into a cache folder; kubeconform then runs with
 * `-strict -kubernetes-version <minor>.0 -schema-location <folder>/KUBECONFORM_TEMPLATE`.
 */

/** The `-schema-location` template, relative to the converted folder (kubeconform's default layout). */
export const KUBECONFORM_TEMPLATE = '{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json';

/** Kinds openapi2jsonschema refuses in stand-alone mode (their schemas are recursive): command.py. */
const UNSUPPORTED_STANDALONE = new Set([
  'jsonschemaprops',
  'jsonschemapropsorarray',
  'customresourcevalidation',
  'customresourcedefinition',
  'customresourcedefinitionspec',
  'customresourcedefinitionlist',
  'jsonschemapropsorstringarray',
  'jsonschemapropsorbool',
]);

/** kubeconform's `{{.NormalizedKubernetesVersion}}`: `v` + the `-kubernetes-version` given. */
export function kubeconformVersion(minor: string): string {
  return `${minor}.0`;
}

/** kubeconform's file name of a type: lower-case kind + KindSuffix (registry.go `schemaPath`). */
export function kubeconformFileName(apiVersion: string, kind: string): string {
  const groupParts = apiVersion.split('/');
  const versionParts = groupParts[0]!.split('.');
  let suffix = `-${versionParts[0]!.toLowerCase()}`;
  if (groupParts.length > 1) suffix += `-${groupParts[1]!.toLowerCase()}`;
  return `${kind.toLowerCase()}${suffix}.json`;
}

/** util.py `additional_properties`: every mapping value with `properties` refuses others; lists are not entered. */
function additionalProperties(data: unknown): void {
  if (!isNode(data)) return;
  for (const value of Object.values(data)) {
    if (isNode(value)) {
      if ('properties' in value && !('additionalProperties' in value)) value.additionalProperties = false;
      additionalProperties(value);
    }
  }
}

/** util.py `replace_int_or_string`: a schema with `format: int-or-string` becomes a string-or-integer oneOf. */
function replaceIntOrString(data: unknown): unknown {
  if (Array.isArray(data)) return data.map(replaceIntOrString);
  if (!isNode(data)) return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [
      key,
      isNode(value) && value.format === 'int-or-string' ? { oneOf: [{ type: 'string' }, { type: 'integer' }] } : replaceIntOrString(value),
    ]),
  );
}

/**
 * util.py `allow_null_optional_fields`: a `type` becomes `[type, "null"]` unless the field it
 * describes is in the `required` of the schema two levels up.
 */
function allowNullOptionalFields(data: unknown, parent?: unknown, grandParent?: unknown, key?: string): unknown {
  if (!isNode(data)) return data;
  const result: SchemaNode = {};
  for (const [name, value] of Object.entries(data)) {
    if (Array.isArray(value)) result[name] = value.map((item) => allowNullOptionalFields(item, value, parent, name));
    else if (isNode(value)) result[name] = allowNullOptionalFields(value, data, parent, name);
    else if (typeof value === 'string' && name === 'type' && value !== 'null') {
      const required = isNode(grandParent) && Array.isArray(grandParent.required) && key !== undefined && grandParent.required.includes(key);
      result[name] = required ? value : [value, 'null'];
    } else result[name] = value;
  }
  return result;
}

/** JsonRef.replace_refs: each `{$ref: "#/definitions/X"}` is replaced by X, expanded. */
function expand(node: unknown, definitions: Readonly<Record<string, SchemaNode>>, stack: readonly string[]): unknown {
  if (Array.isArray(node)) return node.map((item) => expand(item, definitions, stack));
  if (!isNode(node)) return node;
  if (typeof node.$ref === 'string') {
    const name = node.$ref.replace(/^#\/definitions\//, '');
    if (stack.includes(name)) throw new Error(`${name} refers to itself; openapi2jsonschema cannot expand it`);
    return expand(definitions[name], definitions, [...stack, name]);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, expand(value, definitions, stack)]));
}

/** One built-in type as command.py writes it with `--kubernetes --expanded --stand-alone --strict`. */
function builtInSchema(name: string, definitions: Readonly<Record<string, SchemaNode>>, apiVersions: readonly string[], kinds: readonly string[]): SchemaNode {
  const definition = structuredClone(definitions[name]!);
  // command.py appends each x-kubernetes-group-version-kind's apiVersion and kind as an enum.
  if (isNode(definition.properties?.apiVersion)) definition.properties.apiVersion.enum = [...apiVersions];
  if (isNode(definition.properties?.kind)) definition.properties.kind.enum = [...kinds];
  const specification = expand(definition, definitions, [name]) as SchemaNode;
  specification.$schema = 'http://json-schema.org/schema#';
  specification.type ??= 'object';
  specification.additionalProperties = false;
  if (isNode(specification.properties)) {
    additionalProperties(specification.properties);
    specification.properties = allowNullOptionalFields(replaceIntOrString(specification.properties));
  }
  return specification;
}

/** One CRD version's schema as kubeconform's openapi2jsonschema.py writes it (deny-root set). */
function customResourceSchema(schema: SchemaNode): SchemaNode {
  const copy = structuredClone(schema);
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  additionalProperties(copy);
  return replaceIntOrString(copy) as SchemaNode;
}

/** The files this conversion reads, relative to the repository root. */
function inputFiles(root: string): string[] {
  return [...schemaFiles(root), 'src/bench/kubeconform-schemas.ts'];
}

/**
 * The converted folder for the schemas of `root` (`<cacheDir>/kubeconform-schemas-<hash>`),
 * written first when absent; `progress` hears about it.
 */
export function kubeconformSchemas(root: string, cacheDir: string, progress: (message: string) => void = () => {}): string {
  const folder = path.join(cacheDir, `kubeconform-schemas-${contentFingerprint(inputFiles(root), root).slice(0, 16)}`);
  if (fs.existsSync(folder)) return folder;
  progress(`converting schemas/ into kubeconform's layout in ${folder}`);
  const temporary = `${folder}.${process.pid}.tmp`;
  fs.rmSync(temporary, { recursive: true, force: true });
  const crds: { file: string; schema: SchemaNode }[] = [];
  for (const { group, kind, version, schema } of crdVersions(path.join(root, SCHEMA_DIR))) {
    const name = `${kind}-${group.split('.')[0]}-${version}`.toLowerCase();
    crds.push({ file: `${name}.json`, schema: customResourceSchema(schema) });
  }
  let written = 0;
  for (const minor of KUBERNETES_VERSIONS) {
    const names = new Set<string>();
    // Two types with one file name (groups sharing a first label) would read each other's schema.
    const write = (file: string, text: string) => {
      if (names.has(file)) throw new Error(`kubeconform's layout gives two types of Kubernetes ${minor} one file, ${file}`);
      names.add(file);
      fs.writeFileSync(path.join(dir, file), text);
    };
    const dir = path.join(temporary, `v${kubeconformVersion(minor)}-standalone-strict`);
    fs.mkdirSync(dir, { recursive: true });
    const definitions = (JSON.parse(fs.readFileSync(path.join(root, SCHEMA_DIR, kubernetesSchemaFile(minor)), 'utf8')) as SchemaNode).definitions as Record<
      string,
      SchemaNode
    >;
    for (const [name, definition] of Object.entries(definitions)) {
      const gvks = (definition['x-kubernetes-group-version-kind'] ?? []) as { group: string; version: string; kind: string }[];
      if (gvks.length === 0 || UNSUPPORTED_STANDALONE.has(name.split('.').at(-1)!.toLowerCase())) continue;
      const apiVersions = [...new Set(gvks.map((gvk) => (gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version)))];
      const schema = JSON.stringify(builtInSchema(name, definitions, apiVersions, [...new Set(gvks.map((gvk) => gvk.kind))]), null, 2);
      for (const gvk of gvks) {
        write(kubeconformFileName(gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version, gvk.kind), schema);
        written += 1;
      }
    }
    for (const crd of crds) write(crd.file, JSON.stringify(crd.schema, null, 2));
  }
  try {
    fs.renameSync(temporary, folder);
  } catch (error) {
    // Another process converted the same content first.
    fs.rmSync(temporary, { recursive: true, force: true });
    if (!fs.existsSync(folder)) throw error;
  }
  for (const stale of fs.readdirSync(cacheDir).filter((name) => /^kubeconform-schemas-[0-9a-f]+$/.test(name) && path.join(cacheDir, name) !== folder)) {
    fs.rmSync(path.join(cacheDir, stale), { recursive: true, force: true });
  }
  progress(`wrote ${written} built-in and ${crds.length * KUBERNETES_VERSIONS.length} custom resource schema files`);
  return folder;
}
