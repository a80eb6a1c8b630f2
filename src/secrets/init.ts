import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { type YAMLMap, type YAMLSeq, parse, stringify } from 'yaml';
import type { Environment } from '../environments';
import { RefusedError, UsageError } from '../base/errors';
import { realPathOf } from '../base/paths';
import { encryptedFileName, secretsPath } from '../contract/layout';
import { type SecretSpec, secretCatalog, secretValues } from './catalog';
import { sopsOutputProblems } from './encryption';
import { secretManifest, symbolicLinkProblem, symbolicLinksUnder } from './layout';
import { readBounded, readBoundedText } from './limits';
import { Sops, type SopsTools, generateKey, publicKeyOf } from './sops';
import { ENCRYPTED_REGEX, SOPS_CONFIG_FILE, type SopsConfig, creationRulePath, loadSopsConfig, ownRule, ruleProblems } from './sops-config';
import {
  type GivenValues,
  generatePassword,
  resolveValues,
  stringDataOf,
  valueIdOfKey,
  valueIdsOf,
  valueProblems,
  variableName,
} from './values';

/** Where an environment's private age key lives when `--key-file` is not given (outside any repository). */
export function defaultAgeKeyFile(environment: string, home: string = os.homedir()): string {
  return path.join(home, '.config', 'platform-gitops', 'age', `${environment}.key`);
}

/** Refuses a key file inside the repository: git could commit it. */
export function checkKeyFileOutside(root: string, keyFile: string): void {
  const relative = path.relative(fs.realpathSync(root), realPathOf(keyFile));
  if (!relative.startsWith('..') && !path.isAbsolute(relative)) {
    throw new RefusedError(`--key-file ${keyFile} is inside the repository (${relative}); a private key must never be where git can commit it`);
  }
}

/** A value given on the command line: `SECRET.KEY=VALUE` or `SECRET.KEY=PATH`. */
export interface Assignment {
  readonly option: '--set' | '--from-file';
  readonly text: string;
}

export interface InitOptions {
  /** The repository root (`.sops.yaml`, `secrets/`). */
  readonly root: string;
  /** The environment, validated. */
  readonly environment: Environment;
  /** The private key file, outside the repository. */
  readonly keyFile: string;
  /** `--set` and `--from-file`, in the order given. */
  readonly assignments?: readonly Assignment[];
  /** Secrets whose platform-owned values are generated anew (`--rotate`). */
  readonly rotate?: readonly string[];
  /**
   * Start with a new key pair (`--rotate-key`): the old key, if any, is kept beside as
   * `<key-file>.previous` and still decrypts; files no key can read are written anew.
   */
  readonly rotateKey?: boolean;
  /** The process environment, for PLATFORM_GITOPS_<SECRET>_<KEY>. */
  readonly env?: NodeJS.ProcessEnv;
  /** sops and age-keygen. */
  readonly tools: SopsTools;
  /**
   * Source of generated passwords.
   * @default generatePassword (crypto.randomBytes)
   */
  readonly generate?: () => string;
}

/** What init did and what it still needs. */
export interface InitReport {
  /** Whether a key pair was created. */
  readonly keyCreated: boolean;
  /** The environment's public key. */
  readonly publicKey: string;
  /** Whether `.sops.yaml` changed. */
  readonly sopsConfigChanged: boolean;
  /** Encrypted files written, relative to the root. */
  readonly written: readonly string[];
  /** Encrypted files already holding exactly these values, left alone. */
  readonly unchanged: readonly string[];
  /** Secrets not written, each with the `SECRET.KEY`s missing and how to give them. */
  readonly missing: ReadonlyArray<{ readonly file: string; readonly keys: ReadonlyArray<{ readonly id: string; readonly what: string; readonly variable: string }> }>;
  /** Values generated or defaulted in this run. */
  readonly created: readonly string[];
  /** Copies that differed from their owner's value and were made equal. */
  readonly reconciled: readonly string[];
}

/** Text of a value file, read within MAX_VALUE_FILE_BYTES; a file that is not UTF-8 is refused (its bytes would change). */
function readValueFile(file: string, label: string): string {
  const bytes = readBounded(file, 'MAX_VALUE_FILE_BYTES', label);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new RefusedError(`${label}: is not UTF-8 text`);
  }
}

/**
 * Reads `--set`/`--from-file` and PLATFORM_GITOPS_* variables into values by id. A command line
 * that cannot be read throws one UsageError listing every mistake; the problems of the values
 * themselves (valueProblems) are added to `problems`, one line each.
 */
function givenValues(options: InitOptions, problems: string[]): GivenValues {
  const { environment } = options;
  const specs = new Map(secretValues(environment).map((spec) => [spec.id, spec]));
  const given = new Map<string, { value: string; from: string }>();
  const usage: string[] = [];
  for (const spec of specs.values()) {
    if (spec.source === 'generated') continue;
    const variable = variableName(spec.id);
    const value = options.env?.[variable];
    if (value !== undefined && value !== '') given.set(spec.id, { value, from: variable });
  }
  for (const { option, text } of options.assignments ?? []) {
    const equals = text.indexOf('=');
    if (equals <= 0) {
      usage.push(`${option} "${text}" must be SECRET.KEY=${option === '--set' ? 'VALUE' : 'PATH'}`);
      continue;
    }
    const name = text.slice(0, equals);
    const resolved = valueIdOfKey(environment, name);
    if (resolved.problem !== undefined) {
      usage.push(`${option} ${resolved.problem}`);
      continue;
    }
    let value = text.slice(equals + 1);
    let from: string = option;
    if (option === '--from-file') {
      from = `--from-file ${value}`;
      try {
        value = readValueFile(value, from).replace(/\r?\n$/, '');
      } catch (error) {
        problems.push(error instanceof RefusedError ? error.message : `${from}: ${name} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
        continue;
      }
    }
    given.set(resolved.id!, { value, from });
  }
  if (usage.length === 1) throw new UsageError(`${environment.name}: ${usage[0]}`);
  if (usage.length > 1) throw new UsageError(`${environment.name}: the command line cannot be read:\n${usage.map((problem) => `  - ${problem}`).join('\n')}`);
  // In the order of the environment's values, whatever the order they were given in.
  for (const spec of specs.values()) {
    const person = given.get(spec.id);
    if (person !== undefined) problems.push(...valueProblems(spec, person.value, person.from));
  }
  return given;
}

/** Every problem found, one line each: nothing was written. */
function refuse(environment: string, problems: readonly string[]): RefusedError {
  return new RefusedError(`${environment}: nothing written; fix these first:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
}

/** `.sops.yaml` below `root`, or a RefusedError naming every problem of it. */
function sopsConfigOf(root: string): SopsConfig {
  const { config, problems } = loadSopsConfig(root);
  if (config === undefined) throw new RefusedError(problems.length === 1 ? problems[0] : `${SOPS_CONFIG_FILE} cannot be used:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  return config;
}

/**
 * Sets the environment's recipient in `.sops.yaml` with the yaml document API (comments and
 * the other rules stay as they are); whether it changed.
 */
export function writeRecipient(root: string, environment: string, publicKey: string): boolean {
  const config = sopsConfigOf(root);
  const own = ownRule(config, environment);
  if (own === undefined) throw new RefusedError(`${SOPS_CONFIG_FILE}: no creation rule with path_regex "${creationRulePath(environment)}" for ${environment}; add one (docs/secrets.md)`);
  if (own.encryptedRegex !== ENCRYPTED_REGEX) {
    throw new RefusedError(`${SOPS_CONFIG_FILE}: the creation rule "${own.pathRegex}" must have encrypted_regex "${ENCRYPTED_REGEX}" (only data and stringData are encrypted)`);
  }
  if (own.age.length === 1 && own.age[0] === publicKey) return false;
  const rule = (config.document.get('creation_rules') as YAMLSeq).items[own.index] as YAMLMap;
  rule.set('age', publicKey);
  fs.writeFileSync(path.join(root, SOPS_CONFIG_FILE), config.document.toString());
  return true;
}

/** The environment's public key in `.sops.yaml`, if its rule has one (several, comma-separated, if it names several). */
export function recipientOf(root: string, environment: string): string | undefined {
  const own = ownRule(sopsConfigOf(root), environment);
  return own === undefined || own.age.length === 0 ? undefined : own.age.join(',');
}

/** A Secret read back from its decrypted file: its manifest (sops' metadata removed) and values. */
interface Decrypted {
  readonly manifest: Record<string, unknown>;
  readonly values: Readonly<Record<string, string>>;
}

function readBack(sops: Sops, file: string, text: string, secret: SecretSpec): Decrypted {
  const manifest = parse(sops.decrypt(file, text)) as Record<string, unknown> | null;
  if (manifest === null || typeof manifest !== 'object' || manifest.kind !== 'Secret') throw new RefusedError(`${file}: decrypts to no Secret manifest`);
  delete manifest.sops;
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries((manifest.data ?? {}) as Record<string, unknown>)) values[key] = Buffer.from(String(value), 'base64').toString('utf8');
  for (const [key, value] of Object.entries((manifest.stringData ?? {}) as Record<string, unknown>)) values[key] = String(value ?? '');
  const name = (manifest.metadata as { name?: unknown } | undefined)?.name;
  if (name !== secret.name) throw new RefusedError(`${file}: holds Secret "${String(name)}", expected ${secret.name}`);
  return { manifest, values };
}

/** The age recipients an encrypted file's data key is wrapped for (its `sops.age` entries), the file read within MAX_ENCRYPTED_FILE_BYTES. */
export function recipientsOf(root: string, file: string): string[] {
  const encrypted = parse(readBoundedText(path.join(root, file), 'MAX_ENCRYPTED_FILE_BYTES', file)) as { sops?: { age?: Array<{ recipient?: string }> } } | null;
  return (encrypted?.sops?.age ?? []).map((entry) => entry.recipient ?? '').sort();
}

/** The key file's identities, read within MAX_KEY_FILE_BYTES, refusing one that others can read. */
function readKey(file: string): string {
  const mode = fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) throw new RefusedError(`${file}: a private key readable by others (mode ${mode.toString(8).padStart(4, '0')}); chmod 600 it`);
  return readBoundedText(file, 'MAX_KEY_FILE_BYTES');
}

/** A refusal's message, or undefined for an error that is no refusal (a bug: thrown as it is). */
function refusalOf(error: unknown): string | undefined {
  return error instanceof RefusedError ? error.message : undefined;
}

/**
 * `npm run secrets -- init <environment>`: the key pair, the recipient in `.sops.yaml`, and one
 * encrypted Secret manifest per catalog entry, each value generated once, given by a person
 * or read back; a file whose decrypted content would not change is not touched (sops
 * encrypts with fresh randomness, so rewriting it would change every byte).
 *
 * Everything that can be refused is checked before the first write: the values given, the
 * key file, `.sops.yaml` (the rule sops uses for each file must be the environment's own),
 * the values kept and generated. What sops writes is checked before it reaches the disk (the
 * data key wrapped for the environment's key only, every value encrypted); a refusal then
 * puts `.sops.yaml` and the key file back as they were and writes no file.
 */
export function initEnvironment(options: InitOptions): InitReport {
  const { root, environment, keyFile, tools } = options;
  const name = environment.name;
  checkKeyFileOutside(root, keyFile);
  const catalog = secretCatalog(environment);
  const rotate = options.rotate ?? [];
  const unknown = rotate.filter((secret) => !catalog.some((candidate) => candidate.name === secret));
  if (unknown.length > 0) {
    throw new UsageError(`--rotate ${unknown.join(', ')}: no such Secret in ${name} (${catalog.map((secret) => secret.name).join(', ')})`);
  }
  const fileOf = (secret: SecretSpec) => `${secretsPath(name, secret.group)}/${encryptedFileName(secret.name)}`;

  // 1. What can be refused without writing: values given, .sops.yaml, the key file.
  const problems: string[] = symbolicLinksUnder(root).map(symbolicLinkProblem);
  const given = givenValues(options, problems);
  const { config, problems: configProblems } = loadSopsConfig(root);
  problems.push(...configProblems);
  const present = catalog.map(fileOf).filter((file) => fs.existsSync(path.join(root, file)));
  const keyExists = fs.existsSync(keyFile);
  if (!keyExists && !options.rotateKey && present.length > 0) {
    const configured = config === undefined ? undefined : ownRule(config, name)?.age.join(',');
    problems.push(
      `${name}: there is no key ${keyFile}, but ${present.length} encrypted files exist (${present[0]}, ...), encrypted for ` +
        `${configured || 'the recipient in .sops.yaml'}. Put that environment's key there (or name it with --key-file), ` +
        'or start over with --rotate-key: a new key pair, generated values made anew, supplied ones given again',
    );
  }
  let current = '';
  let currentPublicKey: string | undefined;
  if (keyExists) {
    try {
      current = readKey(keyFile);
      currentPublicKey = publicKeyOf(tools, keyFile);
    } catch (error) {
      if (refusalOf(error) === undefined) throw error;
      problems.push(refusalOf(error)!);
    }
    if (options.rotateKey && fs.existsSync(`${keyFile}.previous`)) problems.push(`${keyFile}.previous exists: move it away before --rotate-key replaces ${keyFile}`);
  }
  if (config !== undefined) problems.push(...ruleProblems(config, name, catalog.map(fileOf), { settingRecipient: true, recipient: options.rotateKey ? undefined : currentPublicKey }).map((problem) => `${SOPS_CONFIG_FILE}: ${problem}`));
  if (problems.length > 0) throw refuse(name, problems);

  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-sops-'));
  try {
    // 2. Existing values, read back with the key (with --rotate-key: the key being replaced).
    // With --rotate-key a file no key can read is written anew.
    const reading = new Sops(tools, root, current, home);
    const decrypted = new Map<string, Decrypted>();
    const texts = new Map<string, string>();
    for (const secret of catalog) {
      const file = fileOf(secret);
      if (!present.includes(file)) continue;
      try {
        const text = readBoundedText(path.join(root, file), 'MAX_ENCRYPTED_FILE_BYTES', file);
        texts.set(file, text);
        if (current === '') throw new RefusedError(`${file}: no key to decrypt it with`);
        decrypted.set(file, readBack(reading, file, text, secret));
      } catch (error) {
        if (refusalOf(error) === undefined) throw error;
        if (!options.rotateKey) {
          throw new RefusedError(
            `${refusalOf(error)} (${keyFile} holds the key of ${currentPublicKey}; .sops.yaml names ${recipientOf(root, name) ?? 'no recipient'} for ${name}; nothing was changed)`,
          );
        }
      }
    }

    // 3. Each value from its owner's key; copies that differ are reported and made equal.
    const existing = new Map<string, string>();
    const keptFrom = new Map<string, string>();
    const seenIn = new Map<string, string>();
    const reconciled: string[] = [];
    const owners = catalog.flatMap((secret) =>
      Object.entries(secret.keys).flatMap(([key, spec]) => ('value' in spec.holds ? [{ secret, key, id: spec.holds.value }] : [])),
    );
    owners.sort((a, b) => Number(`${b.secret.name}.${b.key}` === b.id) - Number(`${a.secret.name}.${a.key}` === a.id));
    for (const { secret, key, id } of owners) {
      const value = decrypted.get(fileOf(secret))?.values[key];
      if (value === undefined || value === '') continue;
      if (!existing.has(id)) {
        existing.set(id, value);
        keptFrom.set(id, fileOf(secret));
        seenIn.set(id, `${secret.name}.${key}`);
      } else if (existing.get(id) !== value) reconciled.push(`${secret.name}.${key} (made equal to ${seenIn.get(id)})`);
    }

    const rotated = new Set(catalog.filter((secret) => rotate.includes(secret.name)).flatMap(valueIdsOf));
    const values = secretValues(environment);
    const resolved = resolveValues(values, existing, given, rotated, options.generate ?? generatePassword);
    // The values nobody gave in this run meet the same rules as given ones (those were checked above).
    const created = new Set(resolved.created);
    for (const spec of values) {
      const value = resolved.values.get(spec.id);
      if (value === undefined || given.has(spec.id)) continue;
      const from = created.has(spec.id) ? (spec.source === 'generated' ? 'generated' : 'default') : keptFrom.get(spec.id)!;
      problems.push(...valueProblems(spec, value, from));
    }
    if (problems.length > 0) throw refuse(name, problems);
    const specs = new Map(values.map((spec) => [spec.id, spec]));

    // 4. The writes: the key pair, the recipient, then the files once sops' output is checked.
    const originalConfig = readBoundedText(path.join(root, SOPS_CONFIG_FILE), 'MAX_SOPS_CONFIG_BYTES', SOPS_CONFIG_FILE);
    let keyCreated = false;
    const undo = () => {
      fs.writeFileSync(path.join(root, SOPS_CONFIG_FILE), originalConfig);
      if (keyCreated) fs.rmSync(keyFile, { force: true });
      if (options.rotateKey && keyExists) fs.renameSync(`${keyFile}.previous`, keyFile);
    };
    if (options.rotateKey && keyExists) {
      fs.writeFileSync(`${keyFile}.previous`, current, { mode: 0o600, flag: 'wx' });
      fs.rmSync(keyFile);
    }
    const written: string[] = [];
    const unchanged: string[] = [];
    const missing: InitReport['missing'][number][] = [];
    const pending: Array<{ file: string; text: string }> = [];
    let publicKey: string;
    let sopsConfigChanged: boolean;
    try {
      if (!fs.existsSync(keyFile)) {
        generateKey(tools, keyFile);
        keyCreated = true;
      }
      publicKey = publicKeyOf(tools, keyFile);
      sopsConfigChanged = writeRecipient(root, name, publicKey);
      const writing = new Sops(tools, root, readKey(keyFile), home);
      const refused: string[] = [];
      for (const secret of catalog) {
        const file = fileOf(secret);
        const data = stringDataOf(secret, resolved.values);
        if (data === undefined) {
          const ids = [...new Set(valueIdsOf(secret))].filter((id) => !resolved.values.has(id));
          missing.push({ file, keys: ids.map((id) => ({ id, what: specs.get(id)!.what, variable: variableName(id) })) });
          continue;
        }
        const manifest = secretManifest(secret, data);
        const before = decrypted.get(file);
        const text = texts.get(file);
        // Unchanged only when it is also encrypted as it must be: a file written under a wrong rule is written anew.
        if (before !== undefined && text !== undefined && isDeepStrictEqual(before.manifest, manifest) && sopsOutputProblems(file, text, name, publicKey).length === 0) {
          unchanged.push(file);
          continue;
        }
        const encrypted = writing.encrypt(file, stringify(manifest, { lineWidth: 0 }));
        refused.push(...sopsOutputProblems(file, encrypted, name, publicKey));
        pending.push({ file, text: encrypted });
      }
      if (refused.length > 0) throw refuse(name, refused);
    } catch (error) {
      undo();
      throw error;
    }
    for (const { file, text } of pending) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
      written.push(file);
    }
    return { keyCreated, publicKey, sopsConfigChanged, written, unchanged, missing, created: resolved.created, reconciled };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/**
 * `npm run secrets -- rotate-keys <environment>`: `sops updatekeys` on every encrypted file of
 * the environment, so each data key is wrapped for the recipients `.sops.yaml` names now.
 * Decrypting the data key needs a key it is wrapped for: the key file, plus `oldKeyFiles`.
 * Refused, before any file changes, when the rule sops would use for a file is not the
 * environment's own (sops would wrap the data keys for that rule's recipients).
 */
export function rotateKeys(options: { root: string; environment: Environment; keyFile: string; oldKeyFiles?: readonly string[]; tools: SopsTools }): string[] {
  const { root, environment, tools } = options;
  checkKeyFileOutside(root, options.keyFile);
  const keyFiles = [options.keyFile, ...(options.oldKeyFiles ?? [])];
  for (const file of keyFiles) {
    checkKeyFileOutside(root, file);
    if (!fs.existsSync(file)) throw new RefusedError(`${environment.name}: key file ${file} does not exist`);
  }
  const identities = keyFiles.map((file) => readKey(file).trim()).join('\n') + '\n';
  const files = secretCatalog(environment)
    .map((secret) => `${secretsPath(environment.name, secret.group)}/${encryptedFileName(secret.name)}`)
    .filter((file) => fs.existsSync(path.join(root, file)));
  const problems = [...symbolicLinksUnder(root).map(symbolicLinkProblem), ...ruleProblems(sopsConfigOf(root), environment.name, files).map((problem) => `${SOPS_CONFIG_FILE}: ${problem}`)];
  // sops reads each file itself: each within MAX_ENCRYPTED_FILE_BYTES first.
  for (const file of files) {
    try {
      readBounded(path.join(root, file), 'MAX_ENCRYPTED_FILE_BYTES', file);
    } catch (error) {
      if (refusalOf(error) === undefined) throw error;
      problems.push(refusalOf(error)!);
    }
  }
  if (problems.length > 0) throw refuse(environment.name, problems);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-sops-'));
  try {
    const sops = new Sops(tools, root, identities, home);
    for (const file of files) sops.updateKeys(file);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
  return files;
}
