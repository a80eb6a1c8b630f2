import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';

/**
 * The values files (contract 1.1 step 4: deployment configuration as values files per
 * application and environment), their layout below the project root, and reading and
 * editing them with the yaml library's document API, so that comments and layout survive
 * every command and every problem names a line.
 */

/** The folder of the values files, relative to the project root. */
export const VALUES_DIR = 'src/environments';
/** Per environment, the file of what is not an application's. */
export const ENVIRONMENT_VALUES_FILE = 'environment.yaml';
/** The JSON Schemas editors read (generated from the zod schemas by `npm run schemas`). */
export const JSON_SCHEMA_FILES = { environment: 'environment.schema.json', application: 'application.schema.json' } as const;

/** Project-relative path -> text of values files: what the loader reads (tests pass their own). */
export type ValuesTexts = ReadonlyMap<string, string>;

/** `src/environments/<environment>/environment.yaml`. */
export function environmentValuesPath(environment: string): string {
  return `${VALUES_DIR}/${environment}/${ENVIRONMENT_VALUES_FILE}`;
}

/** `src/environments/<environment>/<application>.yaml`. */
export function applicationValuesPath(environment: string, application: string): string {
  return `${VALUES_DIR}/${environment}/${application}.yaml`;
}

/** The modeline that points an editor (yaml-language-server) at the file's JSON Schema. */
export function schemaModeline(kind: keyof typeof JSON_SCHEMA_FILES): string {
  return `# yaml-language-server: $schema=../${JSON_SCHEMA_FILES[kind]}`;
}

/** Every values file below `root`: `src/environments/<folder>/<file>.yaml`, sorted. */
export function readValuesTexts(root: string): Map<string, string> {
  const dir = path.join(root, VALUES_DIR);
  const texts = new Map<string, string>();
  for (const folder of fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    for (const file of fs.readdirSync(path.join(dir, folder.name)).filter((name) => name.endsWith('.yaml')).sort()) {
      texts.set(`${VALUES_DIR}/${folder.name}/${file}`, fs.readFileSync(path.join(dir, folder.name, file), 'utf8'));
    }
  }
  return new Map([...texts].sort(([a], [b]) => a.localeCompare(b)));
}

/** One parsed values file: its document keeps comments, and positions for line numbers. */
export class ValuesFile {
  public readonly document: Document.Parsed;
  private readonly lineCounter = new LineCounter();

  constructor(
    /** Project-relative path, as messages name it. */
    public readonly file: string,
    public readonly text: string,
  ) {
    this.document = parseDocument(text, { lineCounter: this.lineCounter, keepSourceTokens: false });
  }

  /** `<file>:<line>: <message>` for each syntax error; empty when the file parses. */
  syntaxProblems(): string[] {
    return this.document.errors.map((error) => {
      const line = error.linePos?.[0]?.line ?? this.lineCounter.linePos(error.pos[0]).line;
      return `${this.file}:${line}: YAML syntax: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
    });
  }

  /** The file's data as plain values. */
  data(): unknown {
    return this.document.toJS();
  }

  /**
   * The line of the field at `path` (its key), or of the nearest enclosing field that is
   * written when it is missing; 1 for the file as a whole.
   */
  lineOf(fieldPath: readonly PropertyKey[]): number {
    let node: unknown = this.document.contents;
    let found: Node | null | undefined;
    for (const key of fieldPath) {
      if (isMap(node)) {
        const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === key);
        if (pair === undefined) break;
        found = isScalar(pair.key) ? pair.key : (pair.value as Node | null);
        node = pair.value;
      } else if (isSeq(node) && typeof key === 'number' && node.items[key] !== undefined) {
        found = node.items[key] as Node;
        node = node.items[key];
      } else {
        break;
      }
    }
    const offset = found?.range?.[0];
    return offset === undefined ? 1 : this.lineCounter.linePos(offset).line;
  }

  /** `<file>:<line>: <message>`, the line of `fieldPath`. */
  at(fieldPath: readonly PropertyKey[], message: string): string {
    return `${this.file}:${this.lineOf(fieldPath)}: ${message}`;
  }

  /** The text after `edit` changed the document; everything not edited stays as written. */
  edited(edit: (document: Document.Parsed) => void): string {
    const copy = parseDocument(this.text, { keepSourceTokens: false });
    edit(copy);
    return copy.toString({ lineWidth: 0 });
  }
}
