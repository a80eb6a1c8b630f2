import * as fs from 'node:fs';
import { RefusedError } from '../base/errors';

/**
 * How much the secrets workflow reads from one file. Every file it reads (`.sops.yaml`, key
 * files, values given with `--from-file`, encrypted Secrets, the files the scan reads) has a
 * bound well above anything the file is meant to hold, so that a wrong path (a disk image, a
 * log, `/dev/zero`) is refused by name and with the limit instead of filling the memory.
 */

/** `.sops.yaml`: a creation rule is about 200 bytes, one per environment; 64 KiB holds hundreds. */
export const MAX_SOPS_CONFIG_BYTES = 64 * 1024;

/** An age key file: age-keygen writes about 190 bytes (two comment lines, one identity); 16 KiB holds dozens of identities. */
export const MAX_KEY_FILE_BYTES = 16 * 1024;

/**
 * A value given with `--from-file`: the largest people give is a docker config, a few hundred
 * bytes per registry; 64 KiB is hundreds of registries and far below the 1 MiB Kubernetes
 * allows a whole Secret.
 */
export const MAX_VALUE_FILE_BYTES = 64 * 1024;

/**
 * An encrypted Secret (`*.sops.yaml`): Kubernetes refuses a Secret over 1 MiB, and sops'
 * envelope (base64, 4/3 of the value, plus its metadata) keeps any Secret Kubernetes accepts
 * below 2 MiB. The platform's are a few KiB.
 */
export const MAX_ENCRYPTED_FILE_BYTES = 2 * 1024 * 1024;

/**
 * A file the scan reads: the largest the project commits is a generated CRD binding of about
 * 1.7 MB; 8 MiB leaves room for growth and still refuses a dump or an archive.
 */
export const MAX_SCANNED_FILE_BYTES = 8 * 1024 * 1024;

/** The limits by name, as messages name them. */
export const READ_LIMITS = {
  MAX_SOPS_CONFIG_BYTES,
  MAX_KEY_FILE_BYTES,
  MAX_VALUE_FILE_BYTES,
  MAX_ENCRYPTED_FILE_BYTES,
  MAX_SCANNED_FILE_BYTES,
} as const;

export type ReadLimit = keyof typeof READ_LIMITS;

/** What each limit bounds, for the refusal. */
const BOUNDS: Readonly<Record<ReadLimit, string>> = {
  MAX_SOPS_CONFIG_BYTES: '.sops.yaml',
  MAX_KEY_FILE_BYTES: 'an age key file',
  MAX_VALUE_FILE_BYTES: 'a value given with --from-file',
  MAX_ENCRYPTED_FILE_BYTES: 'an encrypted Secret file',
  MAX_SCANNED_FILE_BYTES: 'a file the scan reads',
};

/** `bytes` as people read it: 64 KiB, 8 MiB. */
export function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** `larger than 64 KiB (MAX_VALUE_FILE_BYTES)`: the limit, by size and name. */
export function largerThan(limit: ReadLimit): string {
  return `larger than ${formatSize(READ_LIMITS[limit])} (${limit})`;
}

/** A file over its limit, refused by `label` (the file, or the option that named it). */
export class TooLargeError extends RefusedError {
  constructor(label: string, limit: ReadLimit) {
    super(`${label}: ${largerThan(limit)}, the most ${BOUNDS[limit]} may hold`);
  }
}

/**
 * The bytes of `file`, at most the limit's: a larger file is refused (TooLargeError) without
 * being read further. Pipes and devices, whose size the file system does not know, are read
 * up to one byte past the limit. Errors of the file system (ENOENT, EISDIR) are thrown as they are.
 */
export function readBounded(file: string, limit: ReadLimit, label: string = file): Buffer {
  const bytes = READ_LIMITS[limit];
  const fd = fs.openSync(file, 'r');
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isFile() && stat.size > bytes) throw new TooLargeError(label, limit);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // A regular file in one read (it may have grown: read on until the end); others in 64 KiB steps.
      const chunk = Buffer.allocUnsafe(Math.min(bytes + 1 - total, stat.isFile() ? Math.max(stat.size + 1 - total, 4096) : 64 * 1024));
      const read = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(chunk.subarray(0, read));
      total += read;
      if (total > bytes) throw new TooLargeError(label, limit);
    }
    return Buffer.concat(chunks, total);
  } finally {
    fs.closeSync(fd);
  }
}

/** The text of `file` under its limit (UTF-8). */
export function readBoundedText(file: string, limit: ReadLimit, label: string = file): string {
  return readBounded(file, limit, label).toString('utf8');
}
