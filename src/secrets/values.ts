import { randomBytes } from 'node:crypto';
import type { Environment } from '../environments';
import { type SecretSpec, type SecretValueSpec, keyId, secretCatalog, secretValues } from './catalog';

/**
 * The values of an environment's secrets: generated, given by people, or read back from the
 * encrypted files, each held once and copied into every key that refers to it.
 */

/**
 * Generated passwords: 32 characters drawn without bias (rejection sampling over
 * crypto.randomBytes) from the 66 URL-unreserved characters of RFC 3986 (`A-Z a-z 0-9 - . _ ~`),
 * about 193 bits. Every password holds an upper-case letter, a lower-case letter, a digit and
 * a symbol, so it meets SQL Server's password policy (8 to 128 characters, three of the four
 * kinds); none of the characters needs quoting in a URL, a connection string (no `;`, `=`,
 * quotes or braces), a T-SQL string literal, a shell's double quotes or a SCRAM user's
 * password.
 */
export const PASSWORD = {
  length: 32,
  alphabet: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~',
  symbols: '-._~',
} as const;

/** A fresh random password under PASSWORD's rules. */
export function generatePassword(random: (size: number) => Buffer = randomBytes): string {
  const { alphabet, length } = PASSWORD;
  // The largest multiple of the alphabet's size below 256: bytes above it are drawn again.
  const limit = 256 - (256 % alphabet.length);
  for (;;) {
    let password = '';
    while (password.length < length) {
      for (const byte of random(length * 2)) {
        if (byte < limit && password.length < length) password += alphabet[byte % alphabet.length];
      }
    }
    if (meetsPasswordPolicy(password)) return password;
  }
}

/** Whether `password` holds every kind of character PASSWORD promises. */
export function meetsPasswordPolicy(password: string): boolean {
  return (
    password.length === PASSWORD.length &&
    [...password].every((char) => PASSWORD.alphabet.includes(char)) &&
    /[A-Z]/.test(password) &&
    /[a-z]/.test(password) &&
    /[0-9]/.test(password) &&
    [...password].some((char) => PASSWORD.symbols.includes(char))
  );
}

/**
 * The environment variable a value may be given in: `PLATFORM_GITOPS_<SECRET>_<KEY>`, upper
 * case, every run of other characters one `_` (`chat-webhook.url` -> PLATFORM_GITOPS_CHAT_WEBHOOK_URL).
 */
export function variableName(id: string): string {
  return `PLATFORM_GITOPS_${id.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')}`;
}

/** Values a person gave, by value id; each remembers where it came from for messages. */
export type GivenValues = ReadonlyMap<string, { readonly value: string; readonly from: string }>;

/** A `SECRET.KEY` named on the command line, resolved to the value it sets. */
export function valueIdOfKey(environment: Environment, secretKey: string): { id?: string; problem?: string } {
  const catalog = secretCatalog(environment);
  const secret = catalog.find((candidate) => secretKey.startsWith(`${candidate.name}.`));
  const key = secret === undefined ? undefined : secretKey.slice(secret.name.length + 1);
  const spec = secret === undefined || key === undefined ? undefined : secret.keys[key];
  if (secret === undefined || spec === undefined) {
    const known = catalog.flatMap((candidate) => Object.keys(candidate.keys).map((name) => keyId(candidate.name, name)));
    return { problem: `"${secretKey}" is no key of ${environment.name}'s Secrets (${known.join(', ')})` };
  }
  if ('fixed' in spec.holds) return { problem: `${secretKey} is "${spec.holds.fixed}", a name from the values files; change it there` };
  if ('from' in spec.holds) return { problem: `${secretKey} is built from ${spec.holds.from.join(', ')}; set that instead` };
  return { id: spec.holds.value };
}

/**
 * SQL Server's password policy (https://learn.microsoft.com/sql/relational-databases/security/password-policy):
 * at least eight characters, at most 128, from three of the four categories Latin upper-case
 * letters, Latin lower-case letters, base-10 digits and non-alphanumeric characters. The
 * database administrator's password and every SQL login's must meet it, whoever chose them:
 * SQL Server refuses a weaker one when the setup hook sets it, long after init said yes.
 */
export const SQL_SERVER_PASSWORD_POLICY = {
  minLength: 8,
  maxLength: 128,
  kinds: 3,
  rule: "SQL Server's password policy: at least 8 and at most 128 characters, from three of upper-case letters, lower-case letters, digits and symbols",
} as const;

/** How many of SQL Server's four kinds of character `password` holds. */
function characterKinds(password: string): number {
  return [/[A-Z]/, /[a-z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((kind) => kind.test(password)).length;
}

/**
 * Control characters (C0, DEL, C1) and the Unicode line and paragraph separators: a value
 * holding one would break the line of an environment variable, an HTTP header or a URL it
 * ends up in (a smoke credential, a webhook address), or smuggle another header in.
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

/** How a control character reads in a message: `a line feed (U+000A)`. */
function describeCharacter(char: string): string {
  const names: Record<string, string> = { '\n': 'a line feed', '\r': 'a carriage return', '\t': 'a tab', '\0': 'a NUL character', '\u2028': 'a line separator', '\u2029': 'a paragraph separator' };
  const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return `${names[char] ?? 'a control character'} (${code})`;
}

/**
 * Problems with a value, by what the value is (its format), one line each in the form
 * `<from>: <id> <rule>`; `from` says where the value came from (`--set`, `--from-file <path>`,
 * `PLATFORM_GITOPS_<SECRET>_<KEY>`, `generated`, or the encrypted file it was read back from).
 */
export function valueProblems(spec: SecretValueSpec, value: string, from: string): string[] {
  const problem = (rule: string) => [`${from}: ${spec.id} ${rule}`];
  if (value === '') return problem('is empty');
  if (spec.format === 'docker-config') {
    // JSON: line breaks only between tokens, never inside a string (JSON.parse refuses those).
    try {
      const parsed = JSON.parse(value) as unknown;
      if (parsed === null || typeof parsed !== 'object' || typeof (parsed as { auths?: unknown }).auths !== 'object') {
        return problem('must be a docker config JSON object with "auths", e.g. {"auths":{"registry.example.com":{"auth":"..."}}}');
      }
    } catch {
      return problem('is not JSON (a docker config, {"auths":{...}})');
    }
    return [];
  }
  const control = CONTROL_CHARACTER.exec(value);
  if (control !== null) {
    const at = [...value.slice(0, control.index)].length + 1;
    return problem(
      `holds ${describeCharacter(control[0])} at character ${at}: a value must be one line without control characters (it ends up in an environment variable, a header or a URL)`,
    );
  }
  if (spec.format === 'webhook-url' && !/^https?:\/\/[^\s/]+/.test(value)) return problem('must be an http:// or https:// address');
  const problems: string[] = [];
  if (spec.source === 'generated' && /[;'"{}=\s]/.test(value)) {
    problems.push(...problem('holds a character the connection string or SQL cannot carry unquoted (; \' " { } = or a space)'));
  }
  if (spec.format === 'kafka-password') {
    const other = /[^\u0020-\u007e]/u.exec(value);
    if (other !== null) {
      const at = [...value.slice(0, other.index)].length + 1;
      problems.push(...problem(`holds ${JSON.stringify(other[0])} at character ${at}: a Kafka password must be printable ASCII (Kafka's tools read a client's properties file as ISO 8859-1, so the smoke test's broker step would send another password)`));
    }
  }
  if (spec.format === 'sql-password') {
    const { minLength, maxLength, kinds, rule } = SQL_SERVER_PASSWORD_POLICY;
    const length = [...value].length;
    const held = characterKinds(value);
    if (length < minLength || length > maxLength || held < kinds) {
      problems.push(...problem(`does not meet ${rule} (it has ${length} characters, ${held} ${held === 1 ? 'kind' : 'kinds'})`));
    }
  }
  return problems;
}

/** What resolving an environment's values decided, value by value. */
export interface ResolvedValues {
  /** Every value that has one, by id. */
  readonly values: ReadonlyMap<string, string>;
  /** Supplied values nobody gave, by id. */
  readonly missing: readonly SecretValueSpec[];
  /** Ids whose value was generated or defaulted in this run. */
  readonly created: readonly string[];
}

/**
 * Each value, in this order of precedence: given by a person; read back from the encrypted
 * files (unless its Secret is rotated and the platform generates it); generated; its default.
 */
export function resolveValues(
  specs: readonly SecretValueSpec[],
  existing: ReadonlyMap<string, string>,
  given: GivenValues,
  rotated: ReadonlySet<string>,
  generate: () => string = generatePassword,
): ResolvedValues {
  const values = new Map<string, string>();
  const missing: SecretValueSpec[] = [];
  const created: string[] = [];
  for (const spec of specs) {
    const person = given.get(spec.id);
    const kept = existing.get(spec.id);
    if (person !== undefined) values.set(spec.id, person.value);
    else if (kept !== undefined && kept !== '' && !(spec.source === 'generated' && rotated.has(spec.id))) values.set(spec.id, kept);
    else if (spec.source === 'generated') {
      values.set(spec.id, generate());
      created.push(spec.id);
    } else if (spec.default !== undefined) {
      values.set(spec.id, spec.default);
      created.push(spec.id);
    } else missing.push(spec);
  }
  return { values, missing, created };
}

/** The value ids a Secret's keys hold, directly or composed: what `--rotate <secret>` replaces. */
export function valueIdsOf(secret: SecretSpec): string[] {
  return Object.values(secret.keys).flatMap((spec) => ('value' in spec.holds ? [spec.holds.value] : 'from' in spec.holds ? [...spec.holds.from] : []));
}

/** A Secret's stringData from the resolved values; undefined when a value it needs is missing. */
export function stringDataOf(secret: SecretSpec, values: ReadonlyMap<string, string>): Record<string, string> | undefined {
  const data: Record<string, string> = {};
  for (const [key, spec] of Object.entries(secret.keys)) {
    if ('fixed' in spec.holds) data[key] = spec.holds.fixed;
    else if ('value' in spec.holds) {
      const value = values.get(spec.holds.value);
      if (value === undefined) return undefined;
      data[key] = value;
    } else {
      if (spec.holds.from.some((id) => !values.has(id))) return undefined;
      data[key] = spec.holds.compose((id) => values.get(id)!);
    }
  }
  return data;
}

export { secretValues };
