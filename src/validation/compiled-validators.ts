import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import Ajv, { _, type ErrorObject, type ValidateFunction } from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import type { RegExpEngine } from 'ajv/dist/types';
import equal from 'ajv/dist/runtime/equal';
import ucs2length from 'ajv/dist/runtime/ucs2length';
import uri from 'ajv/dist/runtime/uri';
import ValidationError from 'ajv/dist/runtime/validation_error';
import { RE2JS } from 're2js';
import { contentFingerprint, statFingerprint } from '../base/fingerprint.cjs';
import { isNode, KNOWN_FORMATS, KUBERNETES_VERSIONS, kubernetesSchemaId, readSchemaCatalog, SCHEMA_DIR, type SchemaNode, schemaFiles } from './schema-catalog';

/**
 * The gate's validators, compiled ahead of time. ajv compiling the Kubernetes and CRD schemas
 * costs seconds (the Kafka and AlertmanagerConfig validators about one each); its standalone
 * code (https://ajv.js.org/standalone.html) is the same validators as JavaScript source. The
 * source of every type of both Kubernetes versions and every CRD is generated once per content
 * of its inputs (the schemas, this module and the catalog's adaptation, the ajv and re2js
 * versions) into `node_modules/.cache/platform-gitops/`, so a fresh clone's first run builds it
 * and later runs only load it (with V8's code cache beside it).
 */

/** Folder of the cache, relative to the repository root (the usual place for tools' caches). */
export const VALIDATOR_CACHE_DIR = path.join('node_modules', '.cache', 'platform-gitops');

/** The stat fingerprint and content key of the last inputs seen. */
const STAMP_FILE = 'gate-validators.stamp';

/** Sources whose content decides the compiled code, besides the schemas themselves. */
const GENERATOR_SOURCES = ['src/validation/schema-catalog.ts', 'src/validation/compiled-validators.ts'];
/** Packages whose version decides the compiled code. */
const GENERATOR_PACKAGES = ['ajv', 're2js'];

/** A type's compiled validators. */
export interface CompiledType {
  /** Whether the object is valid: the small validator, which stops at the first error. */
  readonly check: (object: unknown) => boolean;
  /** Every error of an invalid object, as ajv reports them with `allErrors` and `verbose`. */
  readonly explain: (object: unknown) => readonly ErrorObject[];
}

/** The compiled validators of one content of `schemas/`. */
export interface CompiledValidators {
  /** Per supported version, `<apiVersion> <kind>` -> its validators. */
  readonly kubernetes: ReadonlyMap<string, ReadonlyMap<string, CompiledType>>;
  /** `<apiVersion> <kind>` of a custom resource -> its validators. */
  readonly crds: ReadonlyMap<string, CompiledType>;
}

/**
 * Two modules per content: `verdict` validators say valid or not and stop at the first error
 * (the common case, the committed dist/, loads only these); `explain` validators collect every
 * error with its schema and data for the report, generated and loaded on the first invalid object.
 */
type Mode = 'verdict' | 'explain';

/** What the generated module names: export name per type, per version and for the CRDs. */
interface TypeIndex {
  readonly kubernetes: Record<string, Record<string, string>>;
  readonly crds: Record<string, string>;
}

/** The module id the generated code requires its run-time helpers by. */
const RUNTIME_MODULE = 'platform-gitops/gate-runtime';

/**
 * Kubernetes, like Go, matches `pattern` with RE2; JavaScript's RegExp rejects some of the
 * CRDs' patterns (`(?i)` in prometheusrule and alertmanagerconfig) and would read others
 * differently. RE2JS is a port of Go's engine; its `test` is an unanchored search, as
 * JSON Schema's `pattern` is.
 */
const re2: RegExpEngine = Object.assign((pattern: string) => RE2JS.compile(pattern), {
  code: `require(${JSON.stringify(RUNTIME_MODULE)}).re2`,
});

/** What `require` gives the generated code: ajv's run-time helpers, RE2 and the formats. */
const RUNTIME: Record<string, unknown> = {
  [RUNTIME_MODULE]: { re2, formats: KNOWN_FORMATS },
  'ajv/dist/runtime/equal': { default: equal },
  'ajv/dist/runtime/ucs2length': { default: ucs2length },
  'ajv/dist/runtime/uri': { default: uri },
  'ajv/dist/runtime/validation_error': { default: ValidationError },
};

function runtimeRequire(id: string): unknown {
  if (!(id in RUNTIME)) throw new Error(`compiled validators require ${id}, which the gate does not provide (regenerate them: delete ${VALIDATOR_CACHE_DIR})`);
  return RUNTIME[id];
}

/** The ajv options of the gate; the same for every type. */
function gateAjv(mode: Mode): Ajv {
  const explain = mode === 'explain';
  return new Ajv({
    allErrors: explain,
    verbose: explain,
    messages: explain,
    // Unknown keywords and formats fail loudly; upstream's own vocabulary is registered as
    // the catalog met it. Type and tuple hints are advice ajv logs, not errors, and
    // structural schemas put `required` in oneOf branches without `properties` by design.
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    // Each definition is one function that every type calling it shares (ajv inlines a
    // definition without references of its own into each caller, which multiplies the code).
    inlineRefs: false,
    code: { source: true, regExp: re2, formats: _`require(${RUNTIME_MODULE}).formats` },
  });
}

/** The generated module's source for the schemas below `schemaDir`. */
export function generateValidatorSource(schemaDir: string, mode: Mode, progress: (message: string) => void = () => {}): string {
  const catalog = readSchemaCatalog(schemaDir);
  // Annotations never decide a verdict; the explaining validators keep the schemas whole
  // because their errors carry them (a oneOf's branches name its alternatives).
  if (mode === 'verdict') {
    for (const definitions of catalog.definitions.values()) withoutAnnotations(definitions);
    for (const type of catalog.crds) withoutAnnotations(type.schema);
  }
  const canonical = shareDefinitions(catalog.definitions);
  const ajv = gateAjv(mode);
  for (const [name, format] of Object.entries(KNOWN_FORMATS)) ajv.addFormat(name, format as any);
  for (const format of catalog.formats) ajv.addFormat(format, true);
  for (const keyword of catalog.keywords) ajv.addKeyword({ keyword });
  for (const [minor, definitions] of catalog.definitions) {
    rewriteRefs(definitions, kubernetesSchemaId(minor), canonical);
    ajv.addSchema({ $id: kubernetesSchemaId(minor), definitions });
  }
  for (const type of catalog.crds) rewriteRefs(type.schema, '', canonical);
  for (const types of catalog.kubernetes.values()) for (const type of types) rewriteRefs(type.schema, '', canonical);

  const exports: Record<string, string> = {};
  let count = 0;
  const add = (schema: object): string => {
    const name = `t${count++}`;
    ajv.addSchema(schema, name);
    exports[name] = name;
    return name;
  };
  const index: TypeIndex = {
    kubernetes: Object.fromEntries([...catalog.kubernetes].map(([minor, types]) => [minor, Object.fromEntries(types.map((type) => [type.key, add(type.schema)]))])),
    crds: Object.fromEntries(catalog.crds.map((type) => [type.key, add(type.schema)])),
  };
  progress(`compiling ${count} ${mode} validators (Kubernetes ${KUBERNETES_VERSIONS.join(' and ')}, ${catalog.crds.length} custom resource versions)`);
  // ASCII only (string literals escape the rest), so loading reads it as latin1, a plain copy.
  const code = standaloneCode(ajv, exports).replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${code}\nexports.index = ${JSON.stringify(index)};\n`;
}

/**
 * Definitions the newer versions share with the oldest: a definition is the same when its
 * text and every definition it reaches are the same. Returns, per absolute reference of a
 * newer version's shared definition, the oldest version's, so both versions call one
 * compiled function (about half of the code); the errors are the same, their paths relative.
 */
function shareDefinitions(definitions: ReadonlyMap<string, SchemaNode>): Map<string, string> {
  const [base, ...others] = KUBERNETES_VERSIONS;
  const baseDefinitions = definitions.get(base)!;
  const canonical = new Map<string, string>();
  for (const minor of others) {
    const own = definitions.get(minor)!;
    const verdicts = new Map<string, boolean>();
    const same = (name: string): boolean => {
      const known = verdicts.get(name);
      if (known !== undefined) return known;
      verdicts.set(name, true); // a cycle back to this definition does not make it differ
      const text = JSON.stringify(own[name]);
      const result =
        baseDefinitions[name] !== undefined &&
        text === JSON.stringify(baseDefinitions[name]) &&
        [...text.matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g)].every((match) => same(match[1]!));
      verdicts.set(name, result);
      return result;
    };
    for (const name of Object.keys(own)) {
      if (same(name)) canonical.set(`${kubernetesSchemaId(minor)}#/definitions/${name}`, `${kubernetesSchemaId(base)}#/definitions/${name}`);
    }
  }
  return canonical;
}

/** Point every `$ref` (relative ones resolved against `id`) at its shared definition, in place. */
function rewriteRefs(node: unknown, id: string, canonical: ReadonlyMap<string, string>): void {
  if (Array.isArray(node)) for (const item of node) rewriteRefs(item, id, canonical);
  if (!isNode(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      const shared = canonical.get(value.startsWith('#') ? `${id}${value}` : value);
      if (shared !== undefined) node.$ref = shared;
    } else if (key !== 'enum' && key !== 'const') rewriteRefs(value, id, canonical);
  }
}

/** Keywords that never decide a verdict (annotations; the catalog has applied `x-kubernetes-*`). */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'example', 'examples']);

/** Drop annotations from a schema tree, in place (fields of those names in `properties` stay). */
function withoutAnnotations(node: unknown): void {
  if (Array.isArray(node)) for (const item of node) withoutAnnotations(item);
  if (!isNode(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (ANNOTATIONS.has(key) || key.startsWith('x-')) delete node[key];
    else if (key === 'properties' && isNode(value)) for (const child of Object.values(value)) withoutAnnotations(child);
    else if (key !== 'enum' && key !== 'const') withoutAnnotations(value);
  }
}

/** The files whose content decides the compiled code, relative to the repository root. */
function inputFiles(root: string): string[] {
  const packages = GENERATOR_PACKAGES.map((name) => path.join('node_modules', name, 'package.json'));
  return [...schemaFiles(root), ...GENERATOR_SOURCES, ...packages];
}

/** Content hash of the inputs; a stat fingerprint (path, size, mtime) answers when nothing changed. */
function contentKey(root: string, cacheDir: string): string {
  const files = inputFiles(root);
  const stat = statFingerprint(files, root);
  const stampFile = path.join(cacheDir, STAMP_FILE);
  try {
    const stamp = JSON.parse(fs.readFileSync(stampFile, 'utf8')) as { stat?: string; content?: string };
    if (stamp.stat === stat && typeof stamp.content === 'string') return stamp.content;
  } catch {
    // No stamp yet: hash the contents.
  }
  const content = contentFingerprint(files, root).slice(0, 16);
  writeAtomically(stampFile, JSON.stringify({ stat, content }));
  return content;
}

function writeAtomically(file: string, data: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, data);
  fs.renameSync(temporary, file);
}

/** A loaded module: its exports, and `called(name)` to say which validators ran. */
interface LoadedModule {
  readonly exports: { index: TypeIndex; [name: string]: unknown };
  readonly called: (name: string) => void;
}

/**
 * Run the generated source. V8 compiles a function when it is first called, and the Kafka
 * validator alone is megabytes of code, so V8's code cache beside the source holds the
 * functions of the validators runs have called (listed beside it): it is rewritten when the
 * process ends only if this run called a validator the list does not have.
 */
function evaluate(file: string): LoadedModule {
  const source = fs.readFileSync(file, 'latin1');
  const cacheFile = `${file}.v8-${process.version}`;
  const listFile = `${cacheFile}.json`;
  let cachedData: Buffer | undefined;
  let covered = new Set<string>();
  try {
    cachedData = fs.readFileSync(cacheFile);
    covered = new Set(JSON.parse(fs.readFileSync(listFile, 'utf8')) as string[]);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(`(function (require, module, exports) {${source}\n})`, { filename: file, cachedData });
  if (script.cachedDataRejected === true) covered = new Set();
  const module = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as (r: typeof runtimeRequire, m: typeof module, e: object) => void)(runtimeRequire, module, module.exports);
  const fresh = new Set<string>();
  const called = (name: string) => {
    if (covered.has(name) || fresh.has(name)) return;
    if (fresh.size === 0) {
      process.once('exit', () => {
        try {
          writeAtomically(cacheFile, script.createCachedData());
          writeAtomically(listFile, JSON.stringify([...covered, ...fresh].sort()));
        } catch {
          // A read-only cache only costs the compilation.
        }
      });
    }
    fresh.add(name);
  };
  return { exports: module.exports as LoadedModule['exports'], called };
}

/** The module of one mode for the current inputs, generated first when absent (older ones removed). */
function loadModule(root: string, mode: Mode, progress: (message: string) => void): LoadedModule {
  const cacheDir = path.join(root, VALIDATOR_CACHE_DIR);
  const key = contentKey(root, cacheDir);
  const file = path.join(cacheDir, `gate-${mode}-${key}.js`);
  if (!fs.existsSync(file)) {
    progress(`schemas or their adaptation changed: compiling the ${mode} validators once into ${path.relative(root, file)}`);
    const started = Date.now();
    writeAtomically(file, generateValidatorSource(path.join(root, SCHEMA_DIR), mode, progress));
    for (const stale of fs.readdirSync(cacheDir).filter((name) => name.startsWith('gate-') && !name.includes(key) && name !== STAMP_FILE)) {
      fs.rmSync(path.join(cacheDir, stale), { force: true });
    }
    progress(`compiled in ${((Date.now() - started) / 1000).toFixed(1)} s; later runs load them`);
  }
  return evaluate(file);
}

/**
 * The validators of the schemas in `<root>/schemas`: loaded from the cache, or generated
 * there first (once per content of the inputs; `progress` hears about it).
 */
export function loadCompiledValidators(root: string, progress: (message: string) => void = () => {}): CompiledValidators {
  const verdicts = loadModule(root, 'verdict', progress);
  let explaining: LoadedModule | undefined;
  const explainer = (find: (index: TypeIndex) => string) => (object: unknown): readonly ErrorObject[] => {
    explaining ??= loadModule(root, 'explain', progress);
    const name = find(explaining.exports.index);
    explaining.called(name);
    const validate = explaining.exports[name] as ValidateFunction;
    return validate(object) ? [] : (validate.errors ?? []);
  };
  const types = (names: Record<string, string>, find: (index: TypeIndex, key: string) => string) =>
    new Map(
      Object.entries(names).map(([key, name]) => {
        const validate = verdicts.exports[name] as ValidateFunction;
        const check = (object: unknown) => {
          verdicts.called(name);
          return validate(object) as boolean;
        };
        return [key, { check, explain: explainer((index) => find(index, key)) }];
      }),
    );
  const index = verdicts.exports.index;
  return {
    kubernetes: new Map(Object.entries(index.kubernetes).map(([minor, names]) => [minor, types(names, (other, key) => other.kubernetes[minor]![key]!)])),
    crds: types(index.crds, (other, key) => other.crds[key]!),
  };
}

/** Generate both modules when absent (test setup: parallel workers then only load them). */
export function prepareCompiledValidators(root: string, progress: (message: string) => void = () => {}): void {
  for (const mode of ['verdict', 'explain'] as const) loadModule(root, mode, progress);
}
