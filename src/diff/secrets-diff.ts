import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import type { ManifestTree } from '../base/manifest-files';
import { compareText } from '../base/text-order';

/**
 * What changed in the encrypted Secrets (`secrets/**\/*.sops.yaml`), as a reviewer needs it
 * beside the rendered diff: the plugin emits them, so they are part of what runs, but their
 * values are ciphertext. Each Secret added, removed or changed is named, with the keys whose
 * value was written anew, the keys added and removed, and each readable field that changed
 * (kind, name, namespace, type, anything else at any level: never a value of data/stringData,
 * which is not shown even as ciphertext). sops encrypts with fresh randomness, so a value
 * written anew may hold the same plaintext; a key whose ciphertext is the same is unchanged.
 */

/** The sections whose values sops encrypts. */
const SECTIONS = ['data', 'stringData'] as const;

/** One encrypted file's change. */
export interface SecretChange {
  /** Its path in the repository (`secrets/...`). */
  readonly file: string;
  readonly change: 'added' | 'removed' | 'changed';
  /** `Secret <namespace>/<name>` or, for another kind, what the file says it is. */
  readonly label: string;
  /** What changed, one line each, no value shown. */
  readonly details: readonly string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A file's YAML, or undefined when it does not parse as one mapping. */
function read(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function labelOf(document: Record<string, unknown> | undefined, file: string): string {
  if (document === undefined) return `(not one YAML mapping: ${file})`;
  const metadata = isRecord(document.metadata) ? document.metadata : {};
  const name = `${typeof metadata.namespace === 'string' ? `${metadata.namespace}/` : ''}${String(metadata.name ?? '(unnamed)')}`;
  return `${typeof document.kind === 'string' ? document.kind : '(no kind)'} ${name}`;
}

/** The keys of the encrypted sections, as `<section>.<key>`, with their ciphertext. */
function encryptedKeys(document: Record<string, unknown> | undefined): Map<string, unknown> {
  const keys = new Map<string, unknown>();
  for (const section of SECTIONS) {
    const values = document?.[section];
    if (isRecord(values)) for (const [key, value] of Object.entries(values)) keys.set(`${section}.${key}`, value);
  }
  return keys;
}

/** The readable fields that differ (below `at`), with both readable values: everything but the encrypted sections and sops' metadata. */
function fieldChanges(base: unknown, head: unknown, at: string): string[] {
  if (isRecord(base) && isRecord(head)) {
    const keys = [...new Set([...Object.keys(base), ...Object.keys(head)])].filter((key) => at !== '' || (!(SECTIONS as readonly string[]).includes(key) && key !== 'sops'));
    return keys.flatMap((key) => fieldChanges(base[key], head[key], `${at}${key}.`));
  }
  if (isDeepStrictEqual(base, head)) return [];
  const shown = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));
  return [`${at.slice(0, -1)}: ${shown(base)} -> ${shown(head)}`];
}

/** The change of one file that is in both trees, one line per difference; none when equal. */
function changeDetails(base: Record<string, unknown> | undefined, head: Record<string, unknown> | undefined): string[] {
  const details = fieldChanges(base ?? {}, head ?? {}, '');
  const before = encryptedKeys(base);
  const after = encryptedKeys(head);
  const added = [...after.keys()].filter((key) => !before.has(key));
  const removed = [...before.keys()].filter((key) => !after.has(key));
  const rewritten = [...after.keys()].filter((key) => before.has(key) && !isDeepStrictEqual(before.get(key), after.get(key)));
  if (added.length > 0) details.push(`key added: ${added.join(', ')}`);
  if (removed.length > 0) details.push(`key removed: ${removed.join(', ')}`);
  if (rewritten.length > 0) details.push(`value written anew: ${rewritten.join(', ')}`);
  const recipients = (document: Record<string, unknown> | undefined) => {
    const sops = document?.sops;
    return isRecord(sops) && Array.isArray(sops.age) ? sops.age.map((entry: unknown) => String(isRecord(entry) ? entry.recipient : entry)).sort() : [];
  };
  if (!isDeepStrictEqual(recipients(base), recipients(head))) details.push(`encrypted for: ${recipients(base).join(', ') || '(none)'} -> ${recipients(head).join(', ') || '(none)'}`);
  return details;
}

/** Every encrypted Secret added, removed or changed from `base` to `head` (files keyed below `secrets/`, `*.sops.yaml`), in path order. */
export function diffSecretTrees(base: ManifestTree, head: ManifestTree): SecretChange[] {
  const files = [...new Set([...base.keys(), ...head.keys()])].sort(compareText);
  const changes: SecretChange[] = [];
  for (const key of files) {
    const file = `secrets/${key}`;
    const before = base.get(key);
    const after = head.get(key);
    if (before === after) continue;
    const headDocument = after === undefined ? undefined : read(after);
    const baseDocument = before === undefined ? undefined : read(before);
    if (before === undefined) {
      changes.push({ file, change: 'added', label: labelOf(headDocument, file), details: [`keys: ${[...encryptedKeys(headDocument).keys()].join(', ') || '(none)'}`] });
    } else if (after === undefined) {
      changes.push({ file, change: 'removed', label: labelOf(baseDocument, file), details: [] });
    } else {
      const details = changeDetails(baseDocument, headDocument);
      // Only sops' own bookkeeping changed (lastmodified, the MAC): still named, as a file that changed.
      changes.push({ file, change: 'changed', label: labelOf(headDocument, file), details: details.length > 0 ? details : ['sops metadata only'] });
    }
  }
  return changes;
}
