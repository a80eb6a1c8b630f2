import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Environment } from '../environments';
import { encryptedFileName, secretsPath } from '../contract/layout';
import { type SecretSpec, secretCatalog } from './catalog';
import { secretManifest } from './layout';

/**
 * An encrypted file is exactly one Secret of the catalog (docs/secrets.md, "Trust model"):
 * the `v1` Secret the catalog names for its path, in the namespace of its group, of its type,
 * with exactly the catalog's keys under `stringData` (or `data`), and nothing else at any
 * level but the `sops` metadata sops writes. sops authenticates values, not the names of keys
 * (its MAC covers the values), and its encrypted_regex leaves everything but the values of
 * `data`/`stringData` readable: so this is checked on the encrypted file without any key
 * (`secrets check`, `secrets scan`), and again by the repository server's plugin on the
 * decrypted document (SOPS_PLUGIN_GENERATE), whose expectation is `pluginExpectation`.
 */

/** The sections of a Secret whose values sops encrypts: one of them holds the catalog's keys. */
const SECTIONS = ['stringData', 'data'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Every encrypted file the catalog of `environments` expects, by path relative to the root, with its Secret. */
export function catalogByFile(environments: readonly Environment[]): Map<string, SecretSpec> {
  const files = new Map<string, SecretSpec>();
  for (const environment of environments) {
    for (const secret of secretCatalog(environment)) files.set(`${secretsPath(environment.name, secret.group)}/${encryptedFileName(secret.name)}`, secret);
  }
  return files;
}

/** A value as a message shows it (never a value of data/stringData: those are not compared). */
function shown(value: unknown): string {
  return value === undefined ? '(none)' : JSON.stringify(value);
}

/** Differences between `actual` and `expected` below `at`, one line each, naming the field. */
function differences(actual: unknown, expected: unknown, at: string): string[] {
  if (isRecord(expected) && isRecord(actual)) {
    const lines: string[] = [];
    for (const key of Object.keys(actual)) if (!(key in expected)) lines.push(`${at}${key} is not allowed (the catalog's Secret has no such field)`);
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) lines.push(`${at}${key} is missing, expected ${shown(value)}`);
      else lines.push(...differences(actual[key], value, `${at}${key}.`));
    }
    return lines;
  }
  if (isDeepStrictEqual(actual, expected)) return [];
  return [`${at.slice(0, -1)} is ${shown(actual)}, expected ${shown(expected)}`];
}

/**
 * What makes `document` (an encrypted file's YAML, or the decrypted Secret) other than the
 * catalog's `secret`: one line per rule broken, each naming the field. Values under
 * `data`/`stringData` are never read or shown, only their keys compared, as an exact set (a
 * renamed key is a key missing and one not allowed). `sops` at the top is sops' metadata.
 */
export function shapeProblems(document: unknown, secret: SecretSpec): string[] {
  if (!isRecord(document)) return [`is not one Secret manifest (a mapping): the catalog's Secret ${secret.name}`];
  const { sops: _metadata, ...manifest } = document;
  const sections = SECTIONS.filter((section) => section in manifest);
  const expected = secretManifest(secret, {});
  const { stringData: _keys, ...skeleton } = expected;
  const rest = Object.fromEntries(Object.entries(manifest).filter(([key]) => !(SECTIONS as readonly string[]).includes(key)));
  const lines = differences(rest, skeleton, '');
  const wanted = Object.keys(secret.keys).sort();
  if (sections.length !== 1) {
    lines.push(sections.length === 0 ? `stringData is missing, expected the keys ${wanted.join(', ')}` : 'holds both data and stringData; the catalog\'s Secret holds its keys in one of them');
  } else {
    const section = sections[0]!;
    const values = manifest[section];
    if (!isRecord(values)) lines.push(`${section} is not a mapping of the keys ${wanted.join(', ')}`);
    else {
      const present = Object.keys(values).sort();
      const extra = present.filter((key) => !wanted.includes(key));
      const missing = wanted.filter((key) => !present.includes(key));
      if (extra.length > 0) lines.push(`${section} holds ${extra.join(', ')}, not a key of the catalog's Secret ${secret.name} (${wanted.join(', ')})`);
      if (missing.length > 0) lines.push(`${section} lacks ${missing.join(', ')} of the catalog's Secret ${secret.name}`);
    }
  }
  return lines;
}

/**
 * The names a path under secrets/ may have: a Secret's name is a DNS subdomain, so its files'
 * names are letters, digits, `.` and `-`; a group is a chart's id. A name with a space, a
 * line break, a quote or any other character is no catalog file, and a tool reading the folder
 * may split or misread it: check refuses it (`unhandledNames`).
 */
const HANDLED_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Paths at or below `secrets/` of `root` whose last name is not of HANDLED_NAME, relative, sorted. */
export function unhandledNames(root: string): string[] {
  const found: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = `${relative}/${entry.name}`;
      if (!HANDLED_NAME.test(entry.name)) found.push(child);
      else if (entry.isDirectory()) walk(child);
    }
  };
  if (fs.lstatSync(path.join(root, 'secrets'), { throwIfNoEntry: false })?.isDirectory() === true) walk('secrets');
  return found.sort();
}
