import * as z from 'zod';
import { applicationValuesSchema, environmentValuesSchema } from './schema';
import { JSON_SCHEMA_FILES, VALUES_DIR } from './values-file';

/**
 * The JSON Schemas of the values files, generated from the zod schemas (zod's own
 * `z.toJSONSchema`) for editors: the yaml-language-server modeline at the top of each
 * values file points at one. Refinements spanning fields are zod's alone; the schema
 * covers shapes, types, enums and patterns, and each field's `.meta({ description })`,
 * which z.toJSONSchema emits as `description` (zod.dev/metadata) and the editor shows on
 * hover (redhat-developer/yaml-language-server, its languageservice's yamlHover.ts).
 */
export function valuesJsonSchemas(): ReadonlyMap<string, string> {
  const generate = (schema: z.ZodType, title: string) =>
    `${JSON.stringify({ title, ...z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) }, null, 2)}\n`;
  return new Map([
    [`${VALUES_DIR}/${JSON_SCHEMA_FILES.environment}`, generate(environmentValuesSchema, 'src/environments/<environment>/environment.yaml')],
    [`${VALUES_DIR}/${JSON_SCHEMA_FILES.application}`, generate(applicationValuesSchema, 'src/environments/<environment>/<application>.yaml')],
  ]);
}
