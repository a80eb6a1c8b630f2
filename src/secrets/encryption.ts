import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, parseDocument } from 'yaml';
import type { Environment } from '../environments';
import { TooLargeError, readBoundedText } from './limits';
import { expectedEncryptedFiles } from './layout';
import { catalogByFile, shapeProblems } from './shape';
import { ENCRYPTED_REGEX, SOPS_CONFIG_FILE, type SopsConfig, keyAt, loadSopsConfig, ownRule, ruleProblems } from './sops-config';

/**
 * What an encrypted Secret file says about its own encryption, from sops' metadata and the
 * values themselves: for whom its data key is wrapped, and which values are not sops' envelope.
 */

/** sops writes each encrypted value as `ENC[AES256_GCM,data:...,type:...]`. */
const ENCRYPTED_VALUE = /^ENC\[AES256_GCM,data:[^\]]*\]$/;

/** Key sources of sops' metadata besides age (stores.Metadata): each must be absent or empty. */
const OTHER_KEY_SOURCES = ['pgp', 'kms', 'gcp_kms', 'hckms', 'azure_kv', 'hc_vault'] as const;

/** The encryption of one file, as its text shows it. */
interface Inspected {
  /** A problem that keeps the file from being read as sops' output (no metadata, bad YAML). */
  readonly unreadable?: string;
  /** Age recipients of the data key (`sops.age[].recipient`), sorted. */
  readonly recipients: readonly string[];
  /** Other key sources the data key is wrapped for (`sops.pgp`, ...). */
  readonly otherKeys: readonly string[];
  /** `stringData.<key>` / `data.<key>` whose value is not sops' envelope. */
  readonly plaintext: readonly string[];
  /** `sops.encrypted_regex`. */
  readonly encryptedRegex: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function inspect(text: string): Inspected {
  const none = { recipients: [], otherKeys: [], plaintext: [], encryptedRegex: undefined };
  const document = parseDocument(text);
  const error = document.errors[0];
  if (error !== undefined) {
    const what = error.code === 'DUPLICATE_KEY' ? `key "${keyAt(text, error.pos[0])}" appears twice` : error.message.split('\n')[0]!;
    return { ...none, unreadable: `line ${error.linePos?.[0].line ?? '?'}: ${what}` };
  }
  const manifest: unknown = document.toJS();
  if (!isRecord(manifest)) return { ...none, unreadable: 'is not a Secret manifest' };
  const sops = manifest.sops;
  if (!isRecord(sops)) return { ...none, unreadable: 'has no sops metadata: it is not encrypted by sops' };
  const recipients = (Array.isArray(sops.age) ? sops.age : []).map((entry: unknown) => String(isRecord(entry) ? entry.recipient : entry)).sort();
  const otherKeys = OTHER_KEY_SOURCES.filter((field) => Array.isArray(sops[field]) ? sops[field].length > 0 : sops[field] !== undefined && sops[field] !== null);
  const plaintext: string[] = [];
  for (const section of ['data', 'stringData'] as const) {
    const values = manifest[section];
    if (values === undefined || values === null) continue;
    if (!isRecord(values)) plaintext.push(section);
    else for (const [key, value] of Object.entries(values)) if (typeof value !== 'string' || !ENCRYPTED_VALUE.test(value)) plaintext.push(`${section}.${key}`);
  }
  return { recipients, otherKeys, plaintext, encryptedRegex: sops.encrypted_regex };
}

/** The lines common to both checks: values left in plaintext, and metadata that says others than data and stringData. */
function contentProblems(inspected: Inspected): string[] {
  const problems: string[] = [];
  const { plaintext } = inspected;
  if (plaintext.length > 0) {
    problems.push(`${plaintext.join(', ')} ${plaintext.length === 1 ? 'is' : 'are'} not encrypted (sops wrote ${plaintext.length === 1 ? 'it' : 'them'} in plaintext)`);
  }
  if (inspected.encryptedRegex !== ENCRYPTED_REGEX) {
    problems.push(`sops.encrypted_regex ${inspected.encryptedRegex === undefined ? '(none)' : JSON.stringify(inspected.encryptedRegex)} must be "${ENCRYPTED_REGEX}"`);
  }
  return problems;
}

/**
 * What is wrong with what sops wrote for `file` (not yet on disk): its data key must be wrapped
 * for the environment's public key and nothing else, and every value of data and stringData
 * must be encrypted. One line per problem, each naming the file.
 */
export function sopsOutputProblems(file: string, text: string, environment: string, publicKey: string): string[] {
  const inspected = inspect(text);
  if (inspected.unreadable !== undefined) return [`${file}: what sops wrote ${inspected.unreadable}`];
  const problems: string[] = [];
  if (inspected.recipients.length !== 1 || inspected.recipients[0] !== publicKey || inspected.otherKeys.length > 0) {
    const keys = [...inspected.recipients, ...inspected.otherKeys.map((field) => `${field} keys`)];
    problems.push(`sops encrypted it for ${keys.join(', ') || 'no key'}; it must be encrypted for ${environment}'s key ${publicKey} only`);
  }
  return [...problems, ...contentProblems(inspected)].map((problem) => `${file}: ${problem}`);
}

/**
 * What is wrong with an encrypted file already on disk against the environment's recipients in
 * `.sops.yaml` (`configured`): the problems of its recipients (`includeContent`: also of its
 * values and metadata), each without the file's name.
 */
function fileProblems(text: string, environment: string, configured: readonly string[], includeContent: boolean): string[] {
  const inspected = inspect(text);
  if (inspected.unreadable !== undefined) return [inspected.unreadable];
  const problems: string[] = [];
  const wanted = [...configured].sort();
  if (inspected.otherKeys.length > 0 || inspected.recipients.join() !== wanted.join()) {
    const keys = [...inspected.recipients, ...inspected.otherKeys.map((field) => `${field} keys`)];
    problems.push(`encrypted for ${keys.join(', ') || 'no key'}; ${SOPS_CONFIG_FILE} names ${wanted.join(', ')} for ${environment}: run npm run secrets -- init ${environment}`);
  }
  return includeContent ? [...problems, ...contentProblems(inspected)] : problems;
}

/**
 * The scan's view of an environment's encrypted files (path -> text): `.sops.yaml`'s problems
 * for them (the rule sops uses is the environment's own) and each file encrypted for other
 * recipients than that rule names. Values in plaintext the scan finds by itself.
 */
export function scannedEncryptionProblems(config: SopsConfig, environment: string, files: ReadonlyMap<string, string>): Array<{ file: string; problem: string }> {
  const problems = ruleProblems(config, environment, [...files.keys()]).map((problem) => ({ file: SOPS_CONFIG_FILE, problem }));
  const own = ownRule(config, environment);
  if (own === undefined) return problems;
  for (const [file, text] of files) problems.push(...fileProblems(text, environment, own.age, false).map((problem) => ({ file, problem })));
  return problems;
}

/**
 * `npm run secrets -- check`'s view of the encrypted files on disk: for every environment,
 * `.sops.yaml` must give its files its own rule (the first that matches them), and each
 * existing encrypted file must be encrypted for exactly the recipient that rule names, every
 * value of data and stringData encrypted. One line per problem, each naming the file; none
 * when all is well.
 */
export function checkEncryptedFiles(root: string, environments: readonly Environment[]): string[] {
  const { config, problems: configProblems } = loadSopsConfig(root);
  const lines: string[] = [...configProblems];
  for (const environment of environments) {
    const catalog = catalogByFile([environment]);
    const files = expectedEncryptedFiles([environment]).filter((file) => fs.existsSync(path.join(root, file)));
    if (config !== undefined) lines.push(...ruleProblems(config, environment.name, files).map((problem) => `${SOPS_CONFIG_FILE}: ${problem}`));
    const own = config === undefined ? undefined : ownRule(config, environment.name);
    for (const file of files) {
      let text: string;
      try {
        text = readBoundedText(path.join(root, file), 'MAX_ENCRYPTED_FILE_BYTES', file);
      } catch (error) {
        lines.push(error instanceof TooLargeError ? error.message : `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
        continue;
      }
      const { unreadable } = inspect(text);
      const problems = own !== undefined ? fileProblems(text, environment.name, own.age, true) : unreadable !== undefined ? [unreadable] : [];
      // Without any key: what the file says it is must be the catalog's Secret of its path.
      if (unreadable === undefined) problems.push(...shapeProblems(parse(text), catalog.get(file)!));
      lines.push(...problems.map((problem) => `${file}: ${problem}`));
    }
  }
  return lines;
}
