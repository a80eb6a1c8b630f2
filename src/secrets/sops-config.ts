import * as path from 'node:path';
import { RE2JS } from 're2js';
import { type Document, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { TooLargeError, readBoundedText } from './limits';

/**
 * `.sops.yaml` at the repository root, read and resolved the way sops does. sops takes the
 * FIRST creation rule whose `path_regex` matches a file's path relative to the folder of
 * `.sops.yaml` (a rule without `path_regex` matches every file): "creation rules are
 * evaluated sequentially, the first match wins" (https://getsops.io/docs/usage/identities/config-file/;
 * `parseCreationRuleForFile` in github.com/getsops/sops/v3 config/config.go, v3.13.3). Its
 * regular expressions are Go's (RE2), matched as a search, not anchored: RE2JS is a port of
 * that engine. So an earlier rule that matches an environment's files decides their
 * recipients and what is encrypted, whatever the environment's own rule says.
 */

/** The file, at the repository root. */
export const SOPS_CONFIG_FILE = '.sops.yaml';

/** The path_regex of an environment's creation rule in `.sops.yaml`. */
export function creationRulePath(environment: string): string {
  return `secrets/${environment}/.+\\.sops\\.yaml$`;
}

/** The only keys SOPS encrypts: names, namespaces and types stay reviewable. */
export const ENCRYPTED_REGEX = '^(data|stringData)$';

/** Key sources a creation rule may name besides age (sops' creationRule); an environment's rule names its age key only. */
const OTHER_KEY_FIELDS = ['pgp', 'kms', 'gcp_kms', 'hckms', 'azure_keyvault', 'hc_vault_transit_uri', 'key_groups'] as const;

const EXPECTED_CONFIG = 'expected a mapping with creation_rules, a list of one rule per environment (docs/secrets.md)';
const EXPECTED_RULES = 'expected a list of one rule per environment (docs/secrets.md)';

/** One creation rule, as sops reads it. */
export interface CreationRule {
  /** Its place in creation_rules, from 0. */
  readonly index: number;
  /** Its path_regex; '' when it has none (it matches every file). */
  readonly pathRegex: string;
  /** Its encrypted_regex, if any. */
  readonly encryptedRegex: string | undefined;
  /** The age recipients it names. */
  readonly age: readonly string[];
  /** The other key sources it names (pgp, kms, key_groups, ...). */
  readonly otherKeys: readonly string[];
  readonly matcher: RE2JS | undefined;
}

/** A `.sops.yaml` that sops can read: its document (for edits) and its rules in order. */
export interface SopsConfig {
  readonly document: Document;
  readonly rules: readonly CreationRule[];
}

/** How a value's type reads in a message. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

/** `creation_rules[1] (path_regex "secrets/")`: a rule as messages name it. */
export function ruleLabel(rule: CreationRule): string {
  return `creation_rules[${rule.index}] ${rule.pathRegex === '' ? '(no path_regex: every file)' : `(path_regex "${rule.pathRegex}")`}`;
}

/** The key a duplicate-key error points at (a quoted or plain scalar at `offset`). */
export function keyAt(text: string, offset: number): string {
  const quote = text[offset];
  if (quote === '"' || quote === "'") {
    const end = text.indexOf(quote, offset + 1);
    return text.slice(offset + 1, end < 0 ? undefined : end);
  }
  return /^[^:\s,{}[\]]*/.exec(text.slice(offset))![0];
}

/** Age recipients of a rule's `age`: a comma-separated string or a list of strings (sops' parseKeyField). */
function ageKeys(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.split(',').map((key) => key.trim()).filter((key) => key !== '');
  if (Array.isArray(value) && value.every((key) => typeof key === 'string')) return value as string[];
  return undefined;
}

/**
 * `.sops.yaml`'s text read as sops reads it: its rules, or every problem found (each without
 * the file's name) when it is not a mapping with a `creation_rules` list of rules sops can use.
 */
export function parseSopsConfig(text: string): { config?: SopsConfig; problems: string[] } {
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    return {
      problems: document.errors.map((error) => {
        const line = error.linePos?.[0].line;
        const what = error.code === 'DUPLICATE_KEY' ? `key "${keyAt(text, error.pos[0])}" appears twice` : error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
        return `${line === undefined ? '' : `line ${line}: `}${what}`;
      }),
    };
  }
  const contents: unknown = document.toJS();
  if (contents === null || contents === undefined) return { problems: [`is empty; ${EXPECTED_CONFIG}`] };
  if (!isMap(document.contents)) return { problems: [`is ${kindOf(contents)}; ${EXPECTED_CONFIG}`] };
  if (!document.has('creation_rules')) return { problems: [`creation_rules is missing; ${EXPECTED_RULES}`] };
  const list = document.get('creation_rules', true);
  if (!isSeq(list)) {
    const value = isScalar(list) ? list.value : (list as { toJSON?: () => unknown } | undefined)?.toJSON?.();
    return { problems: [`creation_rules is ${kindOf(value)}; ${EXPECTED_RULES}`] };
  }
  const problems: string[] = [];
  const rules: CreationRule[] = [];
  (contents as { creation_rules: unknown[] }).creation_rules.forEach((item, index) => {
    const at = `creation_rules[${index}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(`${at} is ${kindOf(item)}; expected a mapping with path_regex, encrypted_regex and age`);
      return;
    }
    const rule = item as Record<string, unknown>;
    const pathRegex = rule.path_regex ?? '';
    let matcher: RE2JS | undefined;
    if (typeof pathRegex !== 'string') problems.push(`${at}.path_regex is ${kindOf(pathRegex)}; expected a string (a Go regular expression)`);
    else if (pathRegex !== '') {
      try {
        matcher = RE2JS.compile(pathRegex);
      } catch (error) {
        problems.push(`${at}.path_regex "${pathRegex}" is no regular expression sops can compile (${(error as Error).message}); sops stops at it`);
      }
    }
    const encryptedRegex = rule.encrypted_regex ?? undefined;
    if (encryptedRegex !== undefined && typeof encryptedRegex !== 'string') problems.push(`${at}.encrypted_regex is ${kindOf(encryptedRegex)}; expected a string`);
    const age = ageKeys(rule.age);
    if (age === undefined) problems.push(`${at}.age is ${kindOf(rule.age)}; expected age public keys, separated by commas or as a list`);
    const otherKeys = OTHER_KEY_FIELDS.filter((field) => {
      const value = rule[field];
      return value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0);
    });
    rules.push({
      index,
      pathRegex: typeof pathRegex === 'string' ? pathRegex : '',
      encryptedRegex: typeof encryptedRegex === 'string' ? encryptedRegex : undefined,
      age: age ?? [],
      otherKeys,
      matcher,
    });
  });
  return problems.length > 0 ? { problems } : { config: { document, rules }, problems };
}

/** `.sops.yaml` below `root`, read within its bound: the config, or every problem found, each naming the file. */
export function loadSopsConfig(root: string): { config?: SopsConfig; problems: string[] } {
  let text: string;
  try {
    text = readBoundedText(path.join(root, SOPS_CONFIG_FILE), 'MAX_SOPS_CONFIG_BYTES', SOPS_CONFIG_FILE);
  } catch (error) {
    if (error instanceof TooLargeError) return { problems: [error.message] };
    return { problems: [`${SOPS_CONFIG_FILE}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); it holds one creation rule per environment (docs/secrets.md)`] };
  }
  const { config, problems } = parseSopsConfig(text);
  return config === undefined ? { problems: problems.map((problem) => `${SOPS_CONFIG_FILE}: ${problem}`) } : { config, problems: [] };
}

/**
 * The rule sops uses for `file` (its path relative to the folder of `.sops.yaml`, with `/`):
 * the first whose path_regex matches it, or undefined when none does (sops then refuses to
 * encrypt: "no matching creation rules found").
 */
export function ruleFor(config: SopsConfig, file: string): CreationRule | undefined {
  return config.rules.find((rule) => rule.pathRegex === '' || rule.matcher?.test(file) === true);
}

/** An environment's own rule: the first with its path_regex (creationRulePath). */
export function ownRule(config: SopsConfig, environment: string): CreationRule | undefined {
  return config.rules.find((rule) => rule.pathRegex === creationRulePath(environment));
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().every((key, index) => key === [...b].sort()[index]);
}

/**
 * What keeps sops from encrypting `files` (an environment's, relative to the root) under the
 * environment's own rule as the platform means it, one line per problem of `.sops.yaml`
 * (without the file's name), each naming the rule: no own rule; an own rule that encrypts
 * other keys than data and stringData, names other key sources, or more or fewer than one age
 * key (unless `settingRecipient`: init is about to set it); and each earlier rule that matches
 * some of the files, with what it would do instead. `recipient` is the environment's public
 * key when known (init, with an existing key); otherwise the own rule's.
 */
export function ruleProblems(
  config: SopsConfig,
  environment: string,
  files: readonly string[],
  { recipient, settingRecipient = false }: { recipient?: string; settingRecipient?: boolean } = {},
): string[] {
  const own = ownRule(config, environment);
  if (own === undefined) return [`creation_rules has no rule with path_regex "${creationRulePath(environment)}" for ${environment}; add one (docs/secrets.md)`];
  const problems: string[] = [];
  if (own.encryptedRegex !== ENCRYPTED_REGEX) {
    problems.push(`${ruleLabel(own)} encrypted_regex ${own.encryptedRegex === undefined ? '(none)' : `"${own.encryptedRegex}"`} must be "${ENCRYPTED_REGEX}" (only data and stringData are encrypted, every value of them)`);
  }
  if (own.otherKeys.length > 0) problems.push(`${ruleLabel(own)} names ${own.otherKeys.join(', ')} keys; ${environment}'s rule names its own age key only`);
  if (!settingRecipient && own.age.length !== 1) {
    problems.push(`${ruleLabel(own)} age names ${own.age.length} keys${own.age.length > 0 ? ` (${own.age.join(', ')})` : ''}; ${environment}'s rule names its own key only`);
  }
  // A key about to be created is in no rule yet: any earlier rule names other keys.
  const key = recipient !== undefined ? [recipient] : settingRecipient ? [] : own.age;
  // One key per environment: a key another rule names decrypts that rule's files too (local's
  // key goes to laptops and the e2e; production's must open production's files alone).
  for (const recipientKey of key) {
    for (const other of config.rules) {
      if (other === own || !other.age.includes(recipientKey)) continue;
      problems.push(`${recipientKey} is also the recipient of ${ruleLabel(other)}, not ${environment}'s rule: one key per environment (a key that opens another environment's files must not open ${environment}'s); give ${environment} a key of its own (npm run secrets -- init ${environment} --rotate-key)`);
    }
  }
  const shadowed = new Map<CreationRule, string[]>();
  for (const file of files) {
    const rule = ruleFor(config, file);
    if (rule !== undefined && rule !== own) shadowed.set(rule, [...(shadowed.get(rule) ?? []), file]);
  }
  for (const [rule, matched] of shadowed) {
    const wrong: string[] = [];
    if (!sameKeys(rule.age, key) || rule.otherKeys.length > 0) {
      const keys = [...rule.age, ...rule.otherKeys.map((field) => `its ${field} keys`)];
      wrong.push(`it would encrypt them for ${keys.length > 0 ? keys.join(', ') : 'no key at all'}, not for ${environment}'s key alone`);
    }
    if (rule.encryptedRegex !== ENCRYPTED_REGEX) {
      wrong.push(
        rule.encryptedRegex === undefined
          ? 'it would encrypt every value of them, names and types too, having no encrypted_regex'
          : `it would encrypt them with encrypted_regex "${rule.encryptedRegex}", not "${ENCRYPTED_REGEX}" (every value of data and stringData)`,
      );
    }
    if (wrong.length === 0) wrong.push(`it is not ${environment}'s own rule`);
    const more = matched.length > 1 ? ` (and ${matched.length - 1} more of ${environment}'s files)` : '';
    problems.push(
      `${ruleLabel(rule)} matches ${matched[0]}${more} before ${environment}'s own rule creation_rules[${own.index}]; ` +
        `sops uses the first rule that matches: ${wrong.join('; ')}; put ${environment}'s rule first or narrow that path_regex`,
    );
  }
  return problems;
}
