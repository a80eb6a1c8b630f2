import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { ConfigError } from '../base/errors';
import { isWithin } from '../base/paths';
import { compareText } from '../base/text-order';

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
/**
 * Per environment, the record of its applications' chart versions (src/synth/chart-versions.ts):
 * kept beside the values it was decided from, written by synth, and not a values file.
 */
export const CHART_VERSIONS_FILE = 'chart-versions.json';
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

/**
 * The most a values file may hold: the largest here is a few kilobytes, so a file this large
 * is a mistake (a log, a dump) that would only slow every command down.
 */
export const MAX_VALUES_FILE_BYTES = 256 * 1024;

/** What a file that is not a regular file or folder is, for messages. */
function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a named pipe';
  if (stat.isSocket()) return 'a socket';
  if (stat.isBlockDevice() || stat.isCharacterDevice()) return 'a device';
  return 'not a file';
}

/** The offset of the first byte that is not part of well-formed UTF-8, or -1. */
function firstNonUtf8Byte(bytes: Buffer): number {
  for (let at = 0; at < bytes.length; ) {
    const lead = bytes[at]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || at + length > bytes.length) return at;
    for (let next = 1; next < length; next++) if ((bytes[at + next]! & 0xc0) !== 0x80) return at;
    if (length > 1 && Buffer.from(bytes.subarray(at, at + length).toString('utf8'), 'utf8').length !== length) return at;
    at += length;
  }
  return -1;
}

/**
 * The text of one values file, or the problem that keeps it from being one: a regular UTF-8
 * file of the repository (a link may point inside the project, never outside: a fresh clone
 * would not have its target), at most MAX_VALUES_FILE_BYTES. Never quotes what it refuses.
 */
function readValuesFile(root: string, file: string, full: string, stat: fs.Stats): { text: string } | { problem: string } {
  if (fs.lstatSync(full).isSymbolicLink() && !isWithin(fs.realpathSync(full), fs.realpathSync(root))) {
    return { problem: `${file}: a link to ${fs.readlinkSync(full)}, outside the project (a fresh clone would not have it); a values file must be a file of the repository` };
  }
  if (!stat.isFile()) return { problem: `${file}: not a regular file (${kindOf(stat)}); a values file must be a file of the repository` };
  if (stat.size > MAX_VALUES_FILE_BYTES) return { problem: `${file}: ${stat.size} bytes, more than a values file may have (${MAX_VALUES_FILE_BYTES})` };
  const bytes = fs.readFileSync(full);
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return { problem: `${file}: UTF-16 text (it starts with a UTF-16 byte order mark); save the file as UTF-8` };
  }
  const bad = firstNonUtf8Byte(bytes);
  if (bad >= 0) {
    const line = bytes.subarray(0, bad).filter((byte) => byte === 0x0a).length + 1;
    return { problem: `${file}:${line}: not UTF-8 (byte 0x${bytes[bad]!.toString(16).padStart(2, '0')}); save the file as UTF-8` };
  }
  return { text: bytes.toString('utf8') };
}

/**
 * Every entry of every environment folder below `root`, sorted: `src/environments/<folder>/<file>`
 * with its text, a folder inside as `<folder>/<name>/` with none. Not only `*.yaml`: validation
 * refuses any other entry (a `webapp.yml` skipped here would drop that application from dist/);
 * only the chart version record (CHART_VERSIONS_FILE, a regular file) is not a values file.
 * Files beside the folders (the generated JSON Schemas, the code) are not values files. An
 * entry that cannot be a values file (readValuesFile) is refused with every other such entry.
 */
export function readValuesTexts(root: string): Map<string, string> {
  const dir = path.join(root, VALUES_DIR);
  const texts = new Map<string, string>();
  const broken: string[] = [];
  for (const folder of fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    for (const name of fs.readdirSync(path.join(dir, folder.name))) {
      const file = `${VALUES_DIR}/${folder.name}/${name}`;
      const full = path.join(dir, folder.name, name);
      let stat: fs.Stats;
      try {
        stat = fs.statSync(full);
      } catch (error) {
        // Only a link can name what is not there (it is listed, so it exists itself).
        if (!fs.lstatSync(full).isSymbolicLink()) throw error;
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'which does not exist' : `which cannot be followed (${code})`;
        broken.push(`${file}: a link to ${fs.readlinkSync(full)}, ${why}; restore its target or remove the link`);
        continue;
      }
      if (stat.isDirectory()) {
        texts.set(`${file}/`, '');
        continue;
      }
      if (name === CHART_VERSIONS_FILE && stat.isFile()) continue;
      const read = readValuesFile(root, file, full, stat);
      if ('problem' in read) broken.push(read.problem);
      else texts.set(file, read.text);
    }
  }
  if (broken.length > 0) throw new ConfigError(broken.sort(compareText));
  return new Map([...texts].sort(([a], [b]) => compareText(a, b)));
}

/**
 * Where a validated values file's fields are written, as plain data: it travels with what
 * was validated (an Application), so that a later rule (a blue-green step) names the line.
 */
export interface ValuesSource {
  /** Project-relative path, as messages name it. */
  readonly file: string;
  /** The line of each written field, keyed by `sourceKey(path)`. */
  readonly lines: Readonly<Record<string, number>>;
}

function sourceKey(fieldPath: readonly PropertyKey[]): string {
  return JSON.stringify(fieldPath.map((key) => (typeof key === 'number' ? key : String(key))));
}

/** The line of the field at `fieldPath` (its key), or of the nearest enclosing field written; 1 for the file as a whole. */
export function sourceLine(source: ValuesSource, fieldPath: readonly PropertyKey[]): number {
  for (let length = fieldPath.length; length > 0; length--) {
    const line = source.lines[sourceKey(fieldPath.slice(0, length))];
    if (line !== undefined) return line;
  }
  return 1;
}

/** `<file>:<line>: <message>`, the line of `fieldPath` (see sourceLine). */
export function sourceAt(source: ValuesSource, fieldPath: readonly PropertyKey[], message: string): string {
  return `${source.file}:${sourceLine(source, fieldPath)}: ${message}`;
}

/** One parsed values file: its document keeps comments, and positions for line numbers. */
export class ValuesFile {
  public readonly document: Document.Parsed;
  private readonly lineCounter = new LineCounter();
  private cachedSource: ValuesSource | undefined;

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
      if (error.code === 'MULTIPLE_DOCS') return `${this.file}:${line}: the file holds several YAML documents (---); a values file is one document`;
      return `${this.file}:${line}: YAML syntax: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
    });
  }

  /**
   * Why the parsed file is not a mapping of fields, if it is not: empty, a list or a single
   * value at its root, or more aliases than the yaml library expands (a "billion laughs"
   * file). `schema` names the JSON Schema that describes the file.
   */
  shapeProblems(schema: string): string[] {
    const contents = this.document.contents;
    const holds = contents === null || (isScalar(contents) && contents.value === null) ? 'the file is empty' : isSeq(contents) ? 'the file holds a list' : isMap(contents) ? undefined : 'the file holds a single value';
    if (holds !== undefined) return [`${this.file}:${this.lineOf([])}: ${holds}; it must be a mapping of fields (see ${VALUES_DIR}/${schema})`];
    try {
      this.data();
    } catch (error) {
      const line = this.lineOf([]);
      return [`${this.file}:${line}: too many YAML aliases (${(error as Error).message}); write the values out`];
    }
    return [];
  }

  /** The file's data as plain values (the yaml library's alias limit applies: see shapeProblems). */
  data(): unknown {
    return this.document.toJS();
  }

  /**
   * The line of the field at `path` (its key), or of the nearest enclosing field that is
   * written when it is missing; 1 for the file as a whole.
   */
  lineOf(fieldPath: readonly PropertyKey[]): number {
    return sourceLine(this.source(), fieldPath);
  }

  /** The file and the line of every field written in it, as plain data (see ValuesSource). */
  source(): ValuesSource {
    if (this.cachedSource !== undefined) return this.cachedSource;
    const lines: Record<string, number> = {};
    const visit = (node: unknown, fieldPath: readonly PropertyKey[]) => {
      if (isMap(node)) {
        for (const pair of node.items) {
          const key = isScalar(pair.key) ? pair.key.value : pair.key;
          if (typeof key !== 'string' && typeof key !== 'number') continue;
          const offset = (isScalar(pair.key) ? pair.key : (pair.value as Node | null))?.range?.[0];
          if (offset !== undefined) lines[sourceKey([...fieldPath, key])] = this.lineCounter.linePos(offset).line;
          visit(pair.value, [...fieldPath, key]);
        }
      } else if (isSeq(node)) {
        node.items.forEach((item, index) => {
          const offset = (item as Node | null)?.range?.[0];
          if (offset !== undefined) lines[sourceKey([...fieldPath, index])] = this.lineCounter.linePos(offset).line;
          visit(item, [...fieldPath, index]);
        });
      }
    };
    visit(this.document.contents, []);
    this.cachedSource = { file: this.file, lines };
    return this.cachedSource;
  }

  /** `<file>:<line>: <message>`, the line of `fieldPath`. */
  at(fieldPath: readonly PropertyKey[], message: string): string {
    return `${this.file}:${this.lineOf(fieldPath)}: ${message}`;
  }

  /** The text after `edit` changed the document; everything not edited stays as written. */
  edited(edit: (document: Document.Parsed) => void): string {
    const copy = parseDocument(this.text, { keepSourceTokens: false });
    edit(copy);
    const text = copy.toString({ lineWidth: 0 });
    // The yaml library writes LF; a file written with CRLF keeps them, so an edit changes only its lines.
    return /^[^\n]*\r\n/.test(this.text) ? text.replace(/\r?\n/g, '\r\n') : text;
  }
}
