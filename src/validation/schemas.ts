import type { ErrorObject } from 'ajv';
import { type CompiledType, type CompiledValidators, loadCompiledValidators } from './compiled-validators';
import { projectRoot } from '../base/project-root';
import { CRD_DIR, isNode, KUBERNETES_VERSIONS, SCHEMA_DIR, type SchemaNode, typeKey } from './schema-catalog';

export { KUBERNETES_VERSIONS, kubernetesSchemaFile, SCHEMA_DIR } from './schema-catalog';

/**
 * Schema validation of rendered objects against the OpenAPI definitions of both ends of the
 * supported Kubernetes range (`schemas/kubernetes-<version>.json`, KUBERNETES_VERSIONS) and
 * the CRDs the platform uses (`schemas/crds/*.yaml`), with ajv. A built-in object must be
 * valid in every supported version, so an API removed or a field added in between is
 * caught (as kubeconform's `-kubernetes-version` would, run once per version). The schemas
 * are upstream's, adapted to what the API server enforces (`schema-catalog.ts`); their
 * validators are compiled ahead of time (`compiled-validators.ts`), so a run loads them.
 */

/**
 * The schemas of every type the gate knows, as compiled validators. `defaultRegistry()`
 * shares one per process.
 */
export class SchemaRegistry {
  private readonly validators: CompiledValidators;

  /**
   * @param root the repository root, whose `schemas/` the validators are compiled from
   * @param progress hears when the validators are compiled (a first run, changed schemas)
   */
  constructor(root: string, progress: (message: string) => void = () => {}) {
    this.validators = loadCompiledValidators(root, progress);
  }

  /** Problems of one object, `<field path>: <what is wrong>`; empty when it is valid. */
  validate(object: unknown): string[] {
    if (!isNode(object)) return ['(document): must be a Kubernetes object (a mapping with apiVersion and kind)'];
    const { apiVersion, kind } = object;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      return ['(object): apiVersion and kind are required strings'];
    }
    const key = typeKey(apiVersion, kind);
    const servedBy = KUBERNETES_VERSIONS.filter((minor) => this.validators.kubernetes.get(minor)!.has(key));
    if (servedBy.length > 0) {
      // Each version judges the object; a problem of only some versions says which.
      const byVersion = KUBERNETES_VERSIONS.map((minor) => ({ minor, problems: this.problemsIn(minor, object, key) }));
      const all = [...new Set(byVersion.flatMap((entry) => entry.problems))];
      return all.map((problem) => {
        const versions = byVersion.filter((entry) => entry.problems.includes(problem)).map((entry) => entry.minor);
        return versions.length === KUBERNETES_VERSIONS.length ? problem : `${problem} (Kubernetes ${versions.join(', ')} only)`;
      });
    }
    const validator = this.validators.crds.get(key);
    if (validator === undefined) {
      return [
        `(object): unknown kind ${key}: neither Kubernetes ${KUBERNETES_VERSIONS.join(' nor ')} nor a CRD in ${SCHEMA_DIR}/${CRD_DIR} defines it (check apiVersion and kind, or add the CRD)`,
      ];
    }
    return problemsOf(validator, object, key);
  }

  /** Whether the gate has a schema for this type. */
  knows(apiVersion: string, kind: string): boolean {
    const key = typeKey(apiVersion, kind);
    return KUBERNETES_VERSIONS.some((minor) => this.validators.kubernetes.get(minor)!.has(key)) || this.validators.crds.has(key);
  }

  /** Whether Kubernetes `<minor>` (one of KUBERNETES_VERSIONS) serves this built-in type. */
  servedBy(minor: (typeof KUBERNETES_VERSIONS)[number], apiVersion: string, kind: string): boolean {
    return this.validators.kubernetes.get(minor)!.has(typeKey(apiVersion, kind));
  }

  /** Problems of a built-in object in one Kubernetes version, or that the version does not serve it. */
  private problemsIn(minor: string, object: SchemaNode, key: string): string[] {
    const validator = this.validators.kubernetes.get(minor)!.get(key);
    if (validator === undefined) return [`(object): Kubernetes ${minor} does not serve ${key} (removed or not yet added: use an API version every supported release serves)`];
    return problemsOf(validator, object, key);
  }
}

/** The small validator decides; only an invalid object pays for collecting every error. */
function problemsOf(validator: CompiledType, object: unknown, key: string): string[] {
  return validator.check(object) ? [] : describeErrors(validator.explain(object), key);
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

/**
 * The project's schemas (`<repository>/schemas`), loaded once per process; a first run (or
 * one after the schemas changed) compiles them and says so on stderr.
 */
export function defaultRegistry(): SchemaRegistry {
  shared ??= new SchemaRegistry(projectRoot(), (message) => console.error(`schemas: ${message}`));
  return shared;
}

/**
 * Schema problems of one object against every supported Kubernetes version or its CRD, one line each
 * (`<field path>: <problem>`); empty when valid. An unknown kind is a problem.
 */
export function validateAgainstSchema(object: unknown): string[] {
  return defaultRegistry().validate(object);
}
