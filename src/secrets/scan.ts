import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** What is not the project's own text: installed packages, git's store, build output. */
const NOT_SCANNED = new Set(['node_modules', '.git', 'build', 'coverage', '.scratch']);

/** Every file of the project below `root` (text, by relative path), committed or not. */
export function projectFiles(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (NOT_SCANNED.has(entry.name) || entry.name.startsWith('.dist-render-')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files.set(path.relative(root, full), fs.readFileSync(full, 'utf8'));
    }
  };
  walk(root);
  return files;
}

/** One piece of plaintext secret material: where, and what kind. */
export interface SecretFinding {
  readonly file: string;
  readonly problem: string;
}

/** Key material that has no business in git, whatever file it hides in. */
const KEY_MATERIAL: readonly (readonly [RegExp, string])[] = [
  [/-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/, 'a PEM private key'],
  [/AGE-SECRET-KEY-1[0-9A-Z]{20,}/, 'an age secret key'],
];

/** SOPS writes each encrypted value as `ENC[AES256_GCM,data:...]`. */
const ENCRYPTED_VALUE = /^ENC\[AES256_GCM,data:/;

function plaintextValues(values: unknown): string[] {
  if (values === null || typeof values !== 'object') return [];
  return Object.entries(values as Record<string, unknown>)
    .filter(([, value]) => typeof value === 'string' && value !== '' && !ENCRYPTED_VALUE.test(value))
    .map(([key]) => key);
}

/**
 * Plaintext secret material in `files` (path -> text): private keys anywhere, and Kubernetes
 * Secrets with a non-empty, unencrypted value under `data` or `stringData` in YAML files.
 * Key-only templates (every value empty) and SOPS-encrypted files pass.
 */
export function scanForPlaintextSecrets(files: ReadonlyMap<string, string>): SecretFinding[] {
  const findings: SecretFinding[] = [];
  for (const [file, text] of files) {
    for (const [pattern, what] of KEY_MATERIAL) {
      if (pattern.test(text)) findings.push({ file, problem: `contains ${what}` });
    }
    if (!/\.ya?ml$/.test(file)) continue;
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length > 0) continue;
      const object = document.toJS() as { kind?: unknown; metadata?: { name?: string }; data?: unknown; stringData?: unknown } | null;
      if (object?.kind !== 'Secret') continue;
      const keys = [...plaintextValues(object.data), ...plaintextValues(object.stringData)];
      if (keys.length > 0) {
        findings.push({ file, problem: `Secret ${object.metadata?.name ?? '(unnamed)'} holds ${keys.join(', ')} in plaintext: encrypt it with sops` });
      }
    }
  }
  return findings;
}
