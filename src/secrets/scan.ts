import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { git, isInWorkTree } from '../base/git';
import { readYamlDocuments } from '../base/yaml-documents';
import { RENDERED_DIR, renderStagingPrefix } from '../contract/layout';
import { compareText } from '../base/text-order';
import { ENVIRONMENT_ORDER } from '../environments';
import { scannedEncryptionProblems } from './encryption';
import type { SecretSpec } from './catalog';
import { shapeProblems } from './shape';
import {
  AGE_SECRET_KEY,
  SOPS_ENVELOPE,
  hasEncodedAgeKey,
  isPulumiStackFile,
  isSealedBySops,
  isTemplateFile,
  mentionsSecret,
  plaintextPulumiSettings,
  withoutTemplateActions,
} from './hidden-material';
import { symbolicLinkProblem } from './layout';
import { TooLargeError, largerThan, readBoundedText } from './limits';
import { SOPS_CONFIG_FILE, keyAt, parseSopsConfig } from './sops-config';

/** What is not the project's own text when `root` is no git work tree: installed packages, git's store, build output. */
const NOT_SCANNED = new Set(['node_modules', '.git', 'build', 'coverage', '.scratch']);

/**
 * The files git would commit below `root`: tracked, plus untracked ones that .gitignore does
 * not exclude (`git ls-files --cached --others --exclude-standard`); undefined when `root`
 * is in no git work tree (at its top or in a folder of it).
 */
function committableFiles(root: string): string[] | undefined {
  if (!isInWorkTree(root, false)) return undefined;
  const listed = git(root, ['ls-files', '--cached', '--others', '--exclude-standard', '-z']);
  if (!listed.ok) throw new Error(`git ls-files failed in ${root}: ${listed.stderr}`);
  return [...new Set(listed.stdout.split('\0').filter((file) => file !== ''))].sort();
}

/** Every file below `root` except NOT_SCANNED, by relative path. */
function walkedFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name))) {
      if (NOT_SCANNED.has(entry.name) || entry.name.startsWith(renderStagingPrefix(RENDERED_DIR))) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() || entry.isSymbolicLink()) files.push(path.relative(root, full));
    }
  };
  walk(root);
  return files;
}

/** The project's files, text by relative path, and those too large to read. */
export class ProjectFiles extends Map<string, string> {
  /** Files over MAX_SCANNED_FILE_BYTES, not read, by relative path: the scan reports each. */
  readonly tooLarge: string[] = [];
  /** Symbolic links, by relative path: one under secrets/ is reported (what it points at is read, if a file). */
  readonly links: string[] = [];
}

/**
 * The project's files below `root` (text, by relative path), each read within
 * MAX_SCANNED_FILE_BYTES: in a git work tree, every file git would commit (dist/ and secrets/
 * included, ignored output such as node_modules/ and build/ not); elsewhere, every file
 * outside NOT_SCANNED. A file over the limit is not read but listed in `tooLarge`.
 */
export function projectFiles(root: string): ProjectFiles {
  const files = new ProjectFiles();
  for (const file of committableFiles(root) ?? walkedFiles(root)) {
    const full = path.join(root, file);
    if (fs.lstatSync(full, { throwIfNoEntry: false })?.isSymbolicLink() === true) files.links.push(file);
    // A tracked file deleted in the work tree is not there to read.
    if (!fs.statSync(full, { throwIfNoEntry: false })?.isFile()) continue;
    try {
      files.set(file, readBoundedText(full, 'MAX_SCANNED_FILE_BYTES', file));
    } catch (error) {
      if (!(error instanceof TooLargeError)) throw error;
      files.tooLarge.push(file);
    }
  }
  return files;
}

/** One piece of plaintext secret material: where, and what kind. */
export interface SecretFinding {
  readonly file: string;
  readonly problem: string;
}

/** Key material that has no business in git, whatever file it hides in. */
const KEY_MATERIAL: readonly (readonly [RegExp, string])[] = [
  // RSA, EC, DSA, PKCS#8, encrypted PKCS#8 and OpenSSH keys (ssh-keygen's default format).
  [/-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/, 'a PEM private key'],
  [/-----BEGIN PGP PRIVATE KEY BLOCK-{5}/, 'a PGP private key'],
  [/^PuTTY-User-Key-File-\d+:/m, 'a PuTTY private key'],
  [AGE_SECRET_KEY, 'an age secret key'],
];

/**
 * The keys of a Secret's `data` or `stringData` whose value is readable: any non-empty value
 * that is not sops' envelope in a file sops encrypted (`sealed`: its metadata with the MAC),
 * whatever its type; `ENC[...]` elsewhere, or not of sops' form, is no encryption (`fake`).
 */
function plaintextValues(values: unknown, sealed: boolean): { plain: string[]; fake: string[] } {
  if (values === null || values === undefined) return { plain: [], fake: [] };
  if (typeof values !== 'object' || Array.isArray(values)) return { plain: ['(the whole section)'], fake: [] };
  const plain: string[] = [];
  const fake: string[] = [];
  for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
    if (value === null || value === '') continue;
    if (typeof value === 'string' && value.startsWith('ENC[')) {
      if (!sealed || !SOPS_ENVELOPE.test(value)) fake.push(key);
    } else plain.push(key);
  }
  return { plain, fake };
}

interface SecretLike {
  readonly kind: 'Secret';
  readonly metadata?: { readonly name?: string };
  readonly data?: unknown;
  readonly stringData?: unknown;
}

/**
 * Every Secret in a parsed document, at the top or nested (a `List`'s items, a Helm value's
 * extra objects), and inside a string that holds YAML or JSON (a ConfigMap's file), each with
 * whether it is in a file sops encrypted (`sealed`: a Secret inside a string never is).
 */
function secretsIn(node: unknown, sealed: boolean, found: Array<{ secret: SecretLike; sealed: boolean }> = []): Array<{ secret: SecretLike; sealed: boolean }> {
  if (Array.isArray(node)) for (const item of node) secretsIn(item, sealed, found);
  else if (typeof node === 'string') {
    if (mentionsSecret(node)) for (const { value } of documentsOf(node, 'yaml')) secretsIn(value, false, found);
  } else if (node !== null && typeof node === 'object') {
    if ((node as { kind?: unknown }).kind === 'Secret') found.push({ secret: node as SecretLike, sealed });
    for (const value of Object.values(node)) secretsIn(value, sealed, found);
  }
  return found;
}

/**
 * Whether the scan reads `file` as Kubernetes objects, and how: its name says YAML or JSON
 * (`.yaml`, `.yml`, `.json`, in any case, also before one more extension or a `~`: the backup
 * copies `secret.yaml.bak`, `secret.json.orig`, `secret.yaml~`), or it has no extension at all
 * (`Secretfile`, `.dockerconfigjson`). JSON is read as JSON first and as YAML when it is not
 * strict JSON. Every other file is searched for key material only.
 */
export function objectFormat(file: string): 'yaml' | 'json' | undefined {
  const name = path.posix.basename(file).replace(/~$/, '');
  const named = /\.(ya?ml|json)(?:\.[^.]+)?$/i.exec(name);
  if (named !== null) return named[1]!.toLowerCase() === 'json' ? 'json' : 'yaml';
  return name.replace(/^\.+/, '').includes('.') ? undefined : 'yaml';
}

/** A duplicated key, where it is (1-based line). */
interface DuplicateKey {
  readonly key: string;
  readonly line: number;
}

/**
 * Duplicated keys of the objects of a JSON text that JSON.parse accepted (it keeps the last
 * value of a key without a word): each key met again in the same object, with its line.
 */
function jsonDuplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  // One entry per open object (its keys) or array (null).
  const open: Array<Set<string> | null> = [];
  let line = 1;
  let expectingKey = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '\n') line++;
    else if (char === '{') {
      open.push(new Set());
      expectingKey = true;
    } else if (char === '[') {
      open.push(null);
      expectingKey = false;
    } else if (char === '}' || char === ']') open.pop();
    else if (char === ',') expectingKey = open.at(-1) instanceof Set;
    else if (char === '"') {
      // Strict JSON: no raw line break inside a string; an escaped quote does not end it.
      let end = index + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (expectingKey) {
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        const keys = open.at(-1)!;
        if (keys.has(key)) found.push({ key, line });
        else keys.add(key);
        expectingKey = false;
      }
      index = end;
    }
  }
  return found;
}

/** The documents of a file the scan reads as objects: each one's value, and the duplicated keys that make it invalid. */
function documentsOf(text: string, format: 'yaml' | 'json'): Array<{ value: unknown; duplicates: DuplicateKey[] }> {
  if (format === 'json') {
    try {
      return [{ value: JSON.parse(text) as unknown, duplicates: jsonDuplicateKeys(text) }];
    } catch {
      // Not strict JSON (comments, several documents): YAML reads what it can.
    }
  }
  // js-yaml refuses a key twice, so a text it reads has no duplicated key.
  const fast = readYamlDocuments(text);
  if (fast !== undefined) return fast.map((value) => ({ value, duplicates: [] }));
  const documents = parseAllDocuments(text);
  if (!Array.isArray(documents)) return [];
  // Only documents whose one fault is a duplicated key are read, with the last value of each key.
  const lenient = documents.some((document) => document.errors.length > 0) ? parseAllDocuments(text, { uniqueKeys: false }) : documents;
  return documents.flatMap((document, index) => {
    const duplicates = document.errors.filter((error) => error.code === 'DUPLICATE_KEY');
    if (duplicates.length < document.errors.length) return [];
    const readable = Array.isArray(lenient) ? lenient[index] : undefined;
    if (readable === undefined || readable.errors.length > 0) return [];
    let value: unknown;
    try {
      value = readable.toJS();
    } catch {
      // An alias expanding beyond the yaml library's bound (maxAliasCount): no manifest a cluster takes.
      return [];
    }
    return [{ value, duplicates: duplicates.map((error) => ({ key: keyAt(text, error.pos[0]), line: error.linePos?.[0].line ?? 0 })) }];
  });
}

/** Whether a parsed document is a file sops encrypted (its metadata at the top). */
function isSopsEncrypted(value: unknown): boolean {
  const sops = (value as { sops?: unknown } | null)?.sops;
  return value !== null && typeof value === 'object' && sops !== null && typeof sops === 'object' && !Array.isArray(sops);
}

/**
 * Plaintext secret material in `files` (path -> text): private keys anywhere; in every file
 * read as Kubernetes objects (objectFormat), Secrets at any depth with a non-empty,
 * unencrypted value under `data` or `stringData`, and any duplicated key (the value kept may be
 * the plaintext one); `.sops.yaml` that sops cannot use, or whose first rule matching an
 * environment's encrypted files is not that environment's own; encrypted files of
 * `secrets/<environment>/` wrapped for other recipients than their rule names; and files too
 * large to read (ProjectFiles.tooLarge). Key-only templates (every value empty) and
 * SOPS-encrypted files pass.
 */
export function scanForPlaintextSecrets(files: ReadonlyMap<string, string>, catalog?: ReadonlyMap<string, SecretSpec>): SecretFinding[] {
  const findings: SecretFinding[] = [];
  // Encrypted files per environment, for the check against .sops.yaml.
  const encrypted = new Map<string, Map<string, string>>();
  for (const [file, text] of files) {
    for (const [pattern, what] of KEY_MATERIAL) {
      if (pattern.test(text)) findings.push({ file, problem: `contains ${what}` });
    }
    if (!AGE_SECRET_KEY.test(text) && hasEncodedAgeKey(text)) findings.push({ file, problem: 'contains an age secret key, base64-encoded' });
    const template = isTemplateFile(file);
    const format = template ? 'yaml' : objectFormat(file);
    // Text only: git's own test for a binary file is a NUL byte.
    if (format === undefined || text.includes('\0')) continue;
    const documents = documentsOf(template ? withoutTemplateActions(text) : text, format);
    if (isPulumiStackFile(file)) {
      for (const { value } of documents) {
        for (const setting of plaintextPulumiSettings(value)) {
          findings.push({ file, problem: `config ${setting} is not a secure value: a secret-looking setting in plaintext; set it with pulumi config set --secret` });
        }
      }
    }
    const secret = catalog?.get(file);
    if (secret !== undefined) {
      // Without any key: the encrypted file is the catalog's Secret of its path, and nothing else.
      if (documents.length !== 1) findings.push({ file, problem: `holds ${documents.length} YAML documents; an encrypted file holds the catalog's Secret ${secret.name} alone` });
      else findings.push(...shapeProblems(documents[0]!.value, secret).map((problem) => ({ file, problem })));
    } else if (catalog !== undefined && /^secrets\/.*\.sops\.yaml$/.test(file)) {
      findings.push({ file, problem: 'is no encrypted file of the catalog (src/secrets/catalog.ts), yet the sops plugin would decrypt it; remove it (git rm)' });
    }
    for (const { value, duplicates } of documents) {
      for (const { key, line } of duplicates) {
        findings.push({ file, problem: `line ${line}: key "${key}" appears twice: a duplicated key can hide a plaintext value; remove one` });
      }
      for (const { secret, sealed } of secretsIn(value, isSealedBySops(value))) {
        const data = plaintextValues(secret.data, sealed);
        const stringData = plaintextValues(secret.stringData, sealed);
        const name = secret.metadata?.name ?? '(unnamed)';
        const plain = [...data.plain, ...stringData.plain];
        const fake = [...data.fake, ...stringData.fake];
        if (plain.length > 0) findings.push({ file, problem: `Secret ${name} holds ${plain.join(', ')} in plaintext: encrypt it with sops` });
        if (fake.length > 0) {
          findings.push({ file, problem: `Secret ${name} holds ${fake.join(', ')} with a value that is not sops' (ENC[...] is sops' envelope only in a file sops encrypted, with its MAC): encrypt it with sops` });
        }
      }
      const environment = ENVIRONMENT_ORDER.find((name) => file.startsWith(`secrets/${name}/`));
      if (environment !== undefined && isSopsEncrypted(value)) encrypted.set(environment, (encrypted.get(environment) ?? new Map()).set(file, text));
    }
  }
  const configText = files.get(SOPS_CONFIG_FILE);
  if (configText !== undefined) {
    const { config, problems } = parseSopsConfig(configText);
    findings.push(...problems.map((problem) => ({ file: SOPS_CONFIG_FILE, problem })));
    if (config !== undefined) for (const [environment, texts] of encrypted) findings.push(...scannedEncryptionProblems(config, environment, texts));
  }
  for (const file of (files as Partial<ProjectFiles>).links ?? []) {
    if (file.startsWith('secrets/')) findings.push({ file, problem: symbolicLinkProblem(file).slice(file.length + 2) });
  }
  for (const file of (files as Partial<ProjectFiles>).tooLarge ?? []) {
    findings.push({ file, problem: `${largerThan('MAX_SCANNED_FILE_BYTES')}: not scanned; a file this large is no source or manifest, keep it out of git` });
  }
  // File by file, in the order given (each file's findings in the order found).
  const order = new Map([...files.keys()].map((file, index) => [file, index]));
  return findings.map((finding, index) => ({ finding, index })).sort((a, b) => (order.get(a.finding.file) ?? Infinity) - (order.get(b.finding.file) ?? Infinity) || a.index - b.index).map(({ finding }) => finding);
}
