import * as path from 'node:path';

/**
 * Secret material the scan (src/secrets/scan.ts) looks for where a plain search misses it:
 * an age key in lower case or base64-encoded, a Pulumi stack's setting left in plaintext, a
 * Helm template's Secret, a Secret inside a string, and an `ENC[...]` value that sops did
 * not write.
 */

/**
 * An age identity: bech32 (BIP 173), which is case-insensitive, so age reads it in lower case
 * as well (filippo.io/age v1.3.2 internal/bech32 Decode lower-cases a text that is all one case).
 */
export const AGE_SECRET_KEY = /AGE-SECRET-KEY-1[0-9A-Z]{20,}/i;

/** Where an age identity may start inside decoded bytes (a shorter tail: a line cut by wrapping). */
const AGE_KEY_PREFIX = /AGE-SECRET-KEY-1[0-9A-Z]{10,}/i;

/** A run of base64 long enough to hold the key's prefix and part of it (wrapped lines are 60 to 76 characters). */
const BASE64_RUN = /[A-Za-z0-9+/]{40,}={0,2}|[A-Za-z0-9_-]{40,}={0,2}/g;

/** Whether `text` holds an age identity base64-encoded (standard or URL-safe alphabet, at any of the three byte offsets). */
export function hasEncodedAgeKey(text: string): boolean {
  for (const [run] of text.matchAll(BASE64_RUN)) {
    // A run may start inside the encoding of a longer text: try each place a group of four starts.
    for (let offset = 0; offset < 4; offset++) {
      const decoded = Buffer.from(run.slice(offset).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1');
      if (AGE_KEY_PREFIX.test(decoded)) return true;
    }
  }
  return false;
}

/** A stack settings file of Pulumi: `Pulumi.<stack>.yaml` (or `.yml`). */
export function isPulumiStackFile(file: string): boolean {
  return /^Pulumi\.[^/]+\.ya?ml$/.test(path.posix.basename(file));
}

/**
 * A setting's name that says it holds a secret (its last word: `registryPassword`,
 * `deployToken`, `sopsAgeKey`, `apiKey`); one that names where a secret is (`sopsAgeKeyFile`,
 * `keyPath`) or what kind it is (`keyType`) does not.
 */
const SECRET_NAME = /(?:password|passwd|passphrase|secret|token|credentials?|private[-_]?key|api[-_]?key|key)$/i;

/**
 * Plaintext values of a Pulumi stack's `config` under a secret-looking name (at any depth of a
 * structured setting), each as `<setting>[.<path>]`: `pulumi config set --secret` writes
 * `{secure: v1:...}` instead, which passes.
 */
export function plaintextPulumiSettings(stack: unknown): string[] {
  const config = (stack as { config?: unknown } | null)?.config;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return [];
  const found: string[] = [];
  const visit = (value: unknown, name: string, label: string): void => {
    if (value === null || value === undefined || value === '') return;
    if (typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length === 1 && entries[0]![0] === 'secure') return;
      for (const [key, inner] of entries) visit(inner, key, `${label}.${key}`);
    } else if (Array.isArray(value)) value.forEach((inner, index) => visit(inner, name, `${label}[${index}]`));
    else if (SECRET_NAME.test(name.slice(name.lastIndexOf(':') + 1))) found.push(label);
  };
  for (const [setting, value] of Object.entries(config as Record<string, unknown>)) visit(value, setting, setting);
  return found;
}

/** A template the scan reads as the YAML it renders: Helm's and Go's (`.tpl`, `.gotmpl`, `.tmpl`). */
export function isTemplateFile(file: string): boolean {
  return /\.(tpl|gotmpl|tmpl)$/i.test(file);
}

/**
 * A template's text with each action (`{{ ... }}`) taken out: what it renders around them. A
 * value that comes from an action is not in git; one written beside them is.
 */
export function withoutTemplateActions(text: string): string {
  return text.replace(/\{\{[\s\S]*?\}\}/g, '');
}

/** A string that may hold a Kubernetes Secret (a ConfigMap's file, a Helm value's extra manifests). */
export function mentionsSecret(value: string): boolean {
  return /(?:^|[\s{,])["']?kind["']?\s*:\s*["']?Secret\b/m.test(value);
}

/**
 * sops' envelope of one value: AES-256-GCM, a 32-byte IV and a 16-byte tag, base64, and the
 * value's type (github.com/getsops/sops/v3 aes/cipher.go: Encrypt writes
 * `ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]` with `iv := make([]byte, 32)` and the tag
 * of `cryptoaes.BlockSize` bytes, base64.StdEncoding; `encre` is what Decrypt reads).
 */
export const SOPS_ENVELOPE = /^ENC\[AES256_GCM,data:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?,iv:[A-Za-z0-9+/]{43}=,tag:[A-Za-z0-9+/]{22}==,type:(?:str|int|float|bool|bytes|comment)\]$/;

/**
 * Whether a parsed document is a file sops encrypted: its metadata at the top with the MAC
 * (itself an envelope) that sops checks over every value on decryption.
 */
export function isSealedBySops(document: unknown): boolean {
  if (document === null || typeof document !== 'object') return false;
  const sops = (document as { sops?: unknown }).sops;
  if (sops === null || typeof sops !== 'object' || Array.isArray(sops)) return false;
  const mac = (sops as { mac?: unknown }).mac;
  return typeof mac === 'string' && SOPS_ENVELOPE.test(mac);
}
