import { describe, expect, it } from 'vitest';
import { valuesJsonSchemas } from '../src/environments/json-schema';
import { JSON_SCHEMA_FILES, VALUES_DIR } from '../src/environments/values-file';

// That the committed files are what the generator writes is checked in environments.test.ts
// ('commits the JSON Schemas the zod schemas generate'); this file checks what it writes.

interface JsonSchemaNode {
  readonly description?: string;
  readonly properties?: Record<string, JsonSchemaNode>;
  readonly required?: readonly string[];
  readonly items?: JsonSchemaNode;
  readonly anyOf?: readonly JsonSchemaNode[];
  readonly oneOf?: readonly JsonSchemaNode[];
  readonly allOf?: readonly JsonSchemaNode[];
}

interface Property {
  /** `a.b[].c`, variants of a union transparent: the path a person writes. */
  readonly path: string;
  readonly description: string | undefined;
  readonly optional: boolean;
}

/** Every property of `node`, recursively: nested objects, array items and union variants. */
function propertiesOf(node: JsonSchemaNode, prefix = ''): Property[] {
  const found: Property[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    found.push({ path, description: child.description, optional: !(node.required ?? []).includes(name) });
    found.push(...propertiesOf(child, path));
  }
  if (node.items !== undefined) found.push(...propertiesOf(node.items, `${prefix}[]`));
  for (const variant of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) found.push(...propertiesOf(variant, prefix));
  return found;
}

const generated = (file: string): JsonSchemaNode => JSON.parse(valuesJsonSchemas().get(`${VALUES_DIR}/${file}`)!) as JsonSchemaNode;
const SCHEMAS = { environment: generated(JSON_SCHEMA_FILES.environment), application: generated(JSON_SCHEMA_FILES.application) };

describe('the JSON Schemas of the values files document every field for editors', () => {
  it('walks nested objects, array items and union variants', () => {
    const paths = (schema: JsonSchemaNode) => propertiesOf(schema).map((property) => property.path);
    expect(paths(SCHEMAS.environment)).toEqual(
      expect.arrayContaining(['infrastructure.issuer.email', 'broker.topics[].replicas', 'broker.users[].acls[].operations']),
    );
    expect(paths(SCHEMAS.application)).toEqual(
      expect.arrayContaining(['strategy.blueGreen.active', 'strategy.blueGreen.units.green.tag', 'strategy.canary.loadTest', 'broker.acls[].topic']),
    );
    const undocumented = { properties: { a: { properties: { b: {} } }, c: { items: { anyOf: [{ properties: { d: { description: '' } } }] } } } };
    expect(propertiesOf(undocumented).filter((property) => !property.description).map((property) => property.path)).toEqual(['a', 'a.b', 'c', 'c[].d']);
  });

  it.each(Object.entries(SCHEMAS))('gives every property of %s.schema.json a description', (_kind, schema) => {
    const undescribed = propertiesOf(schema).filter((property) => (property.description ?? '').trim() === '');
    expect(undescribed.map((property) => property.path)).toEqual([]);
  });

  it.each(Object.entries(SCHEMAS))('says of every optional property of %s.schema.json its default or when it is required', (_kind, schema) => {
    const silent = propertiesOf(schema).filter((property) => property.optional && !/Default: |required with/.test(property.description ?? ''));
    expect(silent.map((property) => property.path)).toEqual([]);
  });

  it.each(Object.entries(SCHEMAS))('describes the %s values file as a whole', (_kind, schema) => {
    expect(schema.description?.trim()).toBeTruthy();
  });
});
