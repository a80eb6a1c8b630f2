import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { isMap, isSeq, parse, parseDocument, stringify } from 'yaml';
import type { Environment } from '../environments';
import { RefusedError, UsageError } from '../base/errors';
import { encryptedFileName, secretsPath } from '../contract/layout';
import { type SecretSpec, secretCatalog, secretValues } from './catalog';
import { secretManifest } from './layout';
import { readBounded, readBoundedText } from './limits';
import { Sops, type SopsTools, generateKey, publicKeyOf } from './sops';
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

/** The path_regex of an environment's creation rule in `.sops.yaml`. */
export function creationRulePath(environment: string): string {
  return `secrets/${environment}/.+\\.sops\\.yaml$`;
}

/** The only keys SOPS encrypts: names, namespaces and types stay reviewable. */
export const ENCRYPTED_REGEX = '^(data|stringData)$';

/** The real path of `file`, resolving its nearest existing folder (the file may not exist yet). */
function realPathOf(file: string): string {
  const absolute = path.resolve(file);
  let existing = absolute;
  const rest: string[] = [];
  while (!fs.existsSync(existing)) {
    rest.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  return path.join(fs.realpathSync(existing), ...rest);
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

/** Reads `--set`/`--from-file` and PLATFORM_GITOPS_* variables into values by id; one error listing every problem. */
function givenValues(options: InitOptions): GivenValues {
  const { environment } = options;
  const specs = new Map(secretValues(environment).map((spec) => [spec.id, spec]));
  const given = new Map<string, { value: string; from: string }>();
  const usage: string[] = [];
  const problems: string[] = [];
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
    if (option === '--from-file') {
      try {
        value = readValueFile(value, `--from-file ${value}`).replace(/\r?\n$/, '');
      } catch (error) {
        if (error instanceof RefusedError) {
          problems.push(error.message);
          continue;
        }
        usage.push(`--from-file ${name}: cannot read ${value} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
        continue;
      }
    }
    given.set(resolved.id!, { value, from: `${option} ${name}` });
  }
  if (usage.length > 0) throw new UsageError(`${environment.name}: ${usage.join('; ')}`);
  for (const [id, { value, from }] of given) problems.push(...valueProblems(specs.get(id)!, value, from));
  if (problems.length > 0) throw new RefusedError(`${environment.name}: ${problems.join('; ')}`);
  return given;
}

/** Sets the environment's recipient in `.sops.yaml` with the yaml document API (comments stay); whether it changed. */
export function writeRecipient(root: string, environment: string, publicKey: string): boolean {
  const file = path.join(root, '.sops.yaml');
  const text = readBoundedText(file, 'MAX_SOPS_CONFIG_BYTES', '.sops.yaml');
  const document = parseDocument(text);
  const rules = document.get('creation_rules');
  const wanted = creationRulePath(environment);
  const rule = isSeq(rules) ? rules.items.find((item) => isMap(item) && item.get('path_regex') === wanted) : undefined;
  if (!isMap(rule)) throw new RefusedError(`.sops.yaml: no creation rule with path_regex "${wanted}" for ${environment}; add one (docs/secrets.md)`);
  if (rule.get('encrypted_regex') !== ENCRYPTED_REGEX) {
    throw new RefusedError(`.sops.yaml: the creation rule "${wanted}" must have encrypted_regex "${ENCRYPTED_REGEX}" (only data and stringData are encrypted)`);
  }
  if (rule.get('age') === publicKey) return false;
  rule.set('age', publicKey);
  fs.writeFileSync(file, document.toString());
  return true;
}

/** The environment's public key in `.sops.yaml`, if its rule has one. */
export function recipientOf(root: string, environment: string): string | undefined {
  const config = parse(readBoundedText(path.join(root, '.sops.yaml'), 'MAX_SOPS_CONFIG_BYTES', '.sops.yaml')) as { creation_rules?: Array<{ path_regex?: string; age?: string }> };
  return config.creation_rules?.find((rule) => rule.path_regex === creationRulePath(environment))?.age;
}

/** A Secret read back from its decrypted file: its manifest (sops' metadata removed) and values. */
interface Decrypted {
  readonly manifest: Record<string, unknown>;
  readonly values: Readonly<Record<string, string>>;
}

function readBack(sops: Sops, file: string, secret: SecretSpec): Decrypted {
  const manifest = parse(sops.decrypt(file)) as Record<string, unknown> | null;
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

/**
 * `npm run secrets -- init <environment>`: the key pair, the recipient in `.sops.yaml`, and one
 * encrypted Secret manifest per catalog entry, each value generated once, given by a person
 * or read back; a file whose decrypted content would not change is not touched (sops
 * encrypts with fresh randomness, so rewriting it would change every byte).
 */
export function initEnvironment(options: InitOptions): InitReport {
  const { root, environment, keyFile, tools } = options;
  checkKeyFileOutside(root, keyFile);
  const catalog = secretCatalog(environment);
  const rotate = options.rotate ?? [];
  const unknown = rotate.filter((name) => !catalog.some((secret) => secret.name === name));
  if (unknown.length > 0) {
    throw new UsageError(`--rotate ${unknown.join(', ')}: no such Secret in ${environment.name} (${catalog.map((secret) => secret.name).join(', ')})`);
  }
  const given = givenValues(options);

  const fileOf = (secret: SecretSpec) => `${secretsPath(environment.name, secret.group)}/${encryptedFileName(secret.name)}`;
  const present = catalog.map(fileOf).filter((file) => fs.existsSync(path.join(root, file)));
  if (!fs.existsSync(keyFile) && !options.rotateKey && present.length > 0) {
    throw new RefusedError(
      `${environment.name}: there is no key ${keyFile}, but ${present.length} encrypted files exist (${present[0]}, ...), encrypted for ` +
        `${recipientOf(root, environment.name) ?? 'the recipient in .sops.yaml'}. Put that environment's key there (or name it with --key-file), ` +
        'or start over with --rotate-key: a new key pair, generated values made anew, supplied ones given again',
    );
  }

  let previous = '';
  if (options.rotateKey && fs.existsSync(keyFile)) {
    previous = readKey(keyFile);
    try {
      fs.writeFileSync(`${keyFile}.previous`, previous, { mode: 0o600, flag: 'wx' });
    } catch {
      throw new RefusedError(`${keyFile}.previous exists: move it away before --rotate-key replaces ${keyFile}`);
    }
    fs.rmSync(keyFile);
  }
  let keyCreated = false;
  if (!fs.existsSync(keyFile)) {
    generateKey(tools, keyFile);
    keyCreated = true;
  }
  // With --rotate-key the previous key still decrypts: values survive a key rotation.
  const identities = `${readKey(keyFile).trim()}\n${previous}`;
  const publicKey = publicKeyOf(tools, keyFile);
  const configured = recipientOf(root, environment.name);

  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-sops-'));
  try {
    const sops = new Sops(tools, root, identities, home);

    // Existing values, read back. With --rotate-key a file no key can read is written anew.
    const decrypted = new Map<string, Decrypted>();
    for (const secret of catalog) {
      const file = fileOf(secret);
      if (!fs.existsSync(path.join(root, file))) continue;
      try {
        decrypted.set(file, readBack(sops, file, secret));
      } catch (error) {
        if (!options.rotateKey) {
          throw new RefusedError(
            `${(error as Error).message} (${keyFile} holds the key of ${publicKey}; .sops.yaml names ${configured ?? 'no recipient'} for ${environment.name}; nothing was changed)`,
          );
        }
      }
    }
    // Only once the files are readable: a wrong key never reaches .sops.yaml.
    const sopsConfigChanged = writeRecipient(root, environment.name, publicKey);

    // Each value from its owner's key; copies that differ are reported and made equal.
    const existing = new Map<string, string>();
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
        seenIn.set(id, `${secret.name}.${key}`);
      } else if (existing.get(id) !== value) reconciled.push(`${secret.name}.${key} (made equal to ${seenIn.get(id)})`);
    }

    const rotated = new Set(catalog.filter((secret) => rotate.includes(secret.name)).flatMap(valueIdsOf));
    const resolved = resolveValues(secretValues(environment), existing, given, rotated, options.generate ?? generatePassword);
    const specs = new Map(secretValues(environment).map((spec) => [spec.id, spec]));

    const written: string[] = [];
    const unchanged: string[] = [];
    const missing: InitReport['missing'][number][] = [];
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
      if (before !== undefined && isDeepStrictEqual(before.manifest, manifest) && isDeepStrictEqual(recipientsOf(root, file), [publicKey])) {
        unchanged.push(file);
        continue;
      }
      const encrypted = sops.encrypt(file, stringify(manifest, { lineWidth: 0 }));
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), encrypted);
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
  // sops reads each file itself: each within MAX_ENCRYPTED_FILE_BYTES first.
  for (const file of files) readBounded(path.join(root, file), 'MAX_ENCRYPTED_FILE_BYTES', file);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-sops-'));
  try {
    const sops = new Sops(tools, root, identities, home);
    for (const file of files) sops.updateKeys(file);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
  return files;
}
