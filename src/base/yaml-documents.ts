import { CORE_SCHEMA, loadAll } from 'js-yaml';

/** Where a YAML anchor may start. */
const MAYBE_ANCHOR = /(?:^|[\s[\]{},])&[^\s[\]{},]/;

/**
 * The documents of a YAML text as plain values, read with js-yaml and YAML 1.2's core schema:
 * the types the yaml library reads by default (no timestamps, no merge keys; YAML 1.1's
 * yes/no and sexagesimals stay strings), about thirteen times faster than that library on
 * rendered manifests (docs/performance.md, "The gate"). Undefined when js-yaml refuses the
 * text (a syntax error, a key twice in a mapping): the caller then reads it with the yaml
 * library, whose messages and lenient modes say more. test/manifests.test.ts holds both
 * parsers to the same values.
 *
 * Also undefined for a text that may hold an anchor (`&name` after a space, a line start or a
 * flow indicator; a quoted `&` may match too, which only costs speed): js-yaml shares an
 * aliased node instead of copying it, so an alias bomb parses in no time and then explodes in
 * whatever walks the value, while the yaml library bounds aliases (maxAliasCount) and refuses
 * it. Rendered manifests hold no anchors.
 */
export function readYamlDocuments(text: string): unknown[] | undefined {
  if (MAYBE_ANCHOR.test(text)) return undefined;
  try {
    const values: unknown[] = [];
    loadAll(text, (value) => values.push(value), { schema: CORE_SCHEMA });
    return values;
  } catch {
    return undefined;
  }
}
