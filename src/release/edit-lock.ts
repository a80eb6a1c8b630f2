import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RefusedError } from '../base/errors';
import { RENDERED_DIR, renderStagingPrefix } from '../contract/layout';
import { synthesize } from '../synth';

/**
 * One edit of a project at a time, and what an interrupted one leaves behind.
 *
 * Every command that writes the values files or dist/ (the edit commands, synth) holds the
 * project's lock, `.platform-gitops-edit/lock.json`, created exclusively: a second one
 * started meanwhile is refused, naming the first, instead of both rendering from the values
 * they read and one swapping its dist/ over the other's. The lock file never exists without
 * its whole journal (it is a hard link to a file written before, and rewritten by rename), so
 * a command that reads it while its holder is taking it never sees an empty lock and takes
 * it for an interrupted edit's. A stopped command's lock is replaced by rename, never removed
 * first, under a claim beside it (`lock.json.claim`) that one command at a time holds.
 *
 * An edit writes its values file first (a whole file, by rename), then swaps in the dist/ it
 * rendered before: the values files are what dist/ is rendered from, so a run killed between
 * the two leaves the new values and the old dist/, which the next command brings together by
 * rendering dist/ again. A lock whose process no longer runs is such a leftover: the next
 * command re-renders dist/ from the values files as they are (the old state or the new, never
 * a mixture), removes the program's own temporary files, says so, and goes on.
 */

/** The program's own working folder at the project root (git-ignored): the lock and a values file being written. */
export const EDIT_DIR = '.platform-gitops-edit';
const LOCK_FILE = 'lock.json';

/** What the lock file says: who holds it, and what it is writing. */
interface LockJournal {
  readonly pid: number;
  readonly command: string;
  /** Which taking of the lock this is (a pid may be used again): absent in a lock of an earlier version. */
  readonly nonce?: string;
  /**
   * When the holder started, in clock ticks after boot (/proc/<pid>/stat field 22): a process
   * of the same pid that started at another time (after a reboot, say) is not the holder.
   * Absent in a lock of an earlier version, or where /proc is not there.
   */
  readonly start?: number;
  /** The values file the edit writes, and the sha256 of its new text, once it is about to write it. */
  readonly file?: string;
  readonly sha256?: string;
}

/** The lock a command holds while it edits. */
export interface ProjectLock {
  /** Record, before writing it, the values file and the text the edit writes (for the report of a later recovery). */
  intend(file: string, text: string): void;
  /** Write `text` to the project-relative `file` whole: a temporary file in EDIT_DIR, renamed into place. */
  writeWhole(file: string, text: string): void;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * When process `pid` started, in clock ticks after boot: field 22 of /proc/<pid>/stat
 * (proc(5), `starttime`), counted after the command name, which is in parentheses and may hold
 * spaces and parentheses itself; undefined where there is no /proc or no such process.
 */
export function processStart(pid: number): number | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields 3 onwards follow the last ')': field 22 is the 20th of them.
  const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  return Number.isSafeInteger(start) ? start : undefined;
}

/** Whether the holder of a journal still runs: its pid is alive, and (when recorded) started when the holder did. */
function isRunning(journal: LockJournal): boolean {
  try {
    process.kill(journal.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (journal.start === undefined) return true;
  const start = processStart(journal.pid);
  return start === undefined || start === journal.start;
}

/** The journal in a lock-like file, by path or open descriptor; undefined when there is none or it does not parse. */
function readJournal(lock: string | number): LockJournal | undefined {
  try {
    const journal = JSON.parse(fs.readFileSync(lock, 'utf8')) as Partial<LockJournal>;
    return typeof journal.pid === 'number' && typeof journal.command === 'string' ? (journal as LockJournal) : undefined;
  } catch {
    return undefined;
  }
}

/** Remove what an interrupted run of the program left: its temporary values files and render folders. */
function removeLeftovers(root: string): string[] {
  const removed: string[] = [];
  const editDir = path.join(root, EDIT_DIR);
  for (const name of fs.existsSync(editDir) ? fs.readdirSync(editDir) : []) {
    if (!name.endsWith('.tmp')) continue;
    fs.rmSync(path.join(editDir, name), { force: true });
    removed.push(`${EDIT_DIR}/${name}`);
  }
  // synth renders into a staging folder beside dist/ (and keeps the old one as `<that>-previous` during the swap).
  for (const name of fs.readdirSync(root)) {
    if (!name.startsWith(renderStagingPrefix(RENDERED_DIR))) continue;
    fs.rmSync(path.join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** Bring a project an interrupted edit left back to one state: dist/ rendered from the values files as they are. */
function recover(root: string, journal: LockJournal | undefined, log: (line: string) => void): void {
  const what = journal === undefined ? 'an interrupted edit' : `an interrupted ${journal.command} (process ${journal.pid})`;
  const removed = removeLeftovers(root);
  const written = journal?.file !== undefined && fs.existsSync(path.join(root, journal.file)) && sha256(fs.readFileSync(path.join(root, journal.file), 'utf8')) === journal.sha256;
  synthesize({ outdir: path.join(root, RENDERED_DIR), root, committed: 'outdir' });
  const state = journal?.file === undefined ? 'dist/ rendered again from the values files' : written ? `${journal.file} had been written: dist/ rendered again from it` : `${journal.file} had not been written: dist/ rendered again from the values files as they were`;
  log(`recovered from ${what}: ${state}${removed.length > 0 ? `; removed ${removed.join(', ')}` : ''}`);
}

/** How often a command tries to take the lock while other commands take and release it meanwhile. */
const LOCK_ATTEMPTS = 50;
/** Beside the lock: held by the one command that replaces a stopped command's lock (for a few system calls). */
const CLAIM_FILE = `${LOCK_FILE}.claim`;

function refusal(holder: LockJournal): RefusedError {
  return new RefusedError(`another ${holder.command} (process ${holder.pid}) is editing this project; run this again when it has finished (${EDIT_DIR}/${LOCK_FILE} is its lock)`);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** Wait a moment without returning to the event loop (the edit commands run synchronously). */
function pause(milliseconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, milliseconds);
}

/** Write a journal whole into a new file beside the lock (`<lock>.<pid>.<nonce>.<what>.tmp`), flushed; its path. */
function writeJournalFile(editDir: string, journal: LockJournal, what: string): string {
  const file = path.join(editDir, `${LOCK_FILE}.${journal.pid}.${journal.nonce}.${what}.tmp`);
  const descriptor = fs.openSync(file, 'w');
  try {
    fs.writeSync(descriptor, JSON.stringify(journal));
    fs.fsyncSync(descriptor);
  } finally {
    fs.closeSync(descriptor);
  }
  return file;
}

/**
 * Create `file` exclusively with `journal` in it (a hard link to a file written before: it
 * appears whole); false when one exists, 'retry' when a file of the attempt was removed meanwhile.
 */
function createExclusively(editDir: string, file: string, journal: LockJournal, what: string): boolean | 'retry' {
  let candidate: string;
  try {
    fs.mkdirSync(editDir, { recursive: true });
    candidate = writeJournalFile(editDir, journal, what);
  } catch (error) {
    // The folder removed by a command that released its lock meanwhile.
    if (errorCode(error) === 'ENOENT') return 'retry';
    throw error;
  }
  try {
    fs.linkSync(candidate, file);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    // The candidate removed by a recovery meanwhile, or the folder by a release.
    if (errorCode(error) === 'ENOENT') return 'retry';
    throw error;
  } finally {
    fs.rmSync(candidate, { force: true });
  }
}

/**
 * A lock-like file read through one descriptor, kept open (so its inode is not reused while
 * it is compared): its journal (undefined when it does not parse) and its inode; undefined
 * when there is none.
 */
function openJournal(file: string): { readonly journal: LockJournal | undefined; readonly inode: number; readonly descriptor: number } | undefined {
  let descriptor: number;
  try {
    descriptor = fs.openSync(file, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  return { journal: readJournal(descriptor), inode: fs.fstatSync(descriptor).ino, descriptor };
}

function inodeOf(file: string): number | undefined {
  try {
    return fs.statSync(file).ino;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

const sameTaking = (a: LockJournal | undefined, b: LockJournal | undefined): boolean =>
  a !== undefined && b !== undefined && a.pid === b.pid && a.command === b.command && a.nonce === b.nonce;

/**
 * The claim to replace a stopped command's lock, for `own`: true when taken. A claim whose
 * command has stopped (killed within its few system calls) is removed, if it is still the
 * one read, and the claim tried again.
 */
function takeClaim(editDir: string, own: LockJournal): boolean {
  const claimFile = path.join(editDir, CLAIM_FILE);
  const created = createExclusively(editDir, claimFile, own, 'claim');
  if (created !== false) return created === true;
  const claim = openJournal(claimFile);
  if (claim === undefined) return false;
  try {
    if (claim.journal !== undefined && isRunning(claim.journal)) return false;
    const removed = path.join(editDir, `${CLAIM_FILE}.${own.pid}.${own.nonce}.removed.tmp`);
    try {
      fs.renameSync(claimFile, removed);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false;
      throw error;
    }
    // Another command's claim taken in between goes back (it is held for a few calls only).
    if (inodeOf(removed) !== claim.inode) {
      try {
        fs.linkSync(removed, claimFile);
      } catch {
        // a third claim was taken meanwhile: it stands
      }
    }
    fs.rmSync(removed, { force: true });
    return false;
  } finally {
    fs.closeSync(claim.descriptor);
  }
}

/**
 * Take the project's lock for `own`: refused when a running process holds it. A lock whose
 * process has stopped is replaced by this command's, by rename (the lock file is never
 * absent), under the claim, and only if it is still the one found stale; then, holding the
 * lock, the interrupted edit is recovered. Of two commands that find it, one replaces it and
 * recovers; the other then finds a running command's lock.
 */
function takeLock(root: string, own: LockJournal, log: (line: string) => void): void {
  const editDir = path.join(root, EDIT_DIR);
  const lockFile = path.join(editDir, LOCK_FILE);
  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt += 1) {
    const created = createExclusively(editDir, lockFile, own, 'candidate');
    if (created === true) return;
    if (created === 'retry') continue;
    const found = openJournal(lockFile);
    if (found === undefined) continue; // released meanwhile
    try {
      const holder = found.journal;
      if (holder !== undefined && holder.pid !== process.pid && isRunning(holder)) throw refusal(holder);
      if (!takeClaim(editDir, own)) {
        pause(20);
        continue;
      }
      try {
        // Another command replaced it before this one had the claim: look again.
        if (inodeOf(lockFile) !== found.inode) continue;
        fs.renameSync(writeJournalFile(editDir, own, 'candidate'), lockFile);
      } finally {
        const claimFile = path.join(editDir, CLAIM_FILE);
        if (sameTaking(readJournal(claimFile), own)) fs.rmSync(claimFile, { force: true });
      }
    } finally {
      fs.closeSync(found.descriptor);
    }
    recover(root, found.journal, log);
    return;
  }
  throw new RefusedError(`could not take ${EDIT_DIR}/${LOCK_FILE}: other commands took and released it ${LOCK_ATTEMPTS} times meanwhile; run this again`);
}

/**
 * Run `work` holding the project's lock (see above). A lock held by a running process is
 * refused naming it; a lock of a process that has stopped is recovered first, reported through `log`.
 */
export function withProjectLock<T>(root: string, command: string, log: (line: string) => void, work: (lock: ProjectLock) => T): T {
  const editDir = path.join(root, EDIT_DIR);
  const lockFile = path.join(editDir, LOCK_FILE);
  const start = processStart(process.pid);
  const own: LockJournal = { pid: process.pid, command, nonce: randomUUID(), ...(start === undefined ? {} : { start }) };
  takeLock(root, own, log);
  // The journal rewritten whole, by rename: a reader sees the one before or the one after.
  const record = (journal: LockJournal) => fs.renameSync(writeJournalFile(editDir, journal, 'journal'), lockFile);
  try {
    return work({
      intend: (file, text) => record({ ...own, file, sha256: sha256(text) }),
      writeWhole: (file, text) => {
        const temporary = path.join(editDir, `${process.pid}.values.tmp`);
        try {
          fs.writeFileSync(temporary, text);
          fs.renameSync(temporary, path.join(root, file));
        } finally {
          fs.rmSync(temporary, { force: true });
        }
      },
    });
  } finally {
    // Only its own lock: never one another command took.
    if (sameTaking(readJournal(lockFile), own)) fs.rmSync(lockFile, { force: true });
    try {
      fs.rmdirSync(editDir);
    } catch (error) {
      // Another command's files are in it, or it removed the folder itself.
      if (errorCode(error) !== 'ENOTEMPTY' && errorCode(error) !== 'ENOENT' && errorCode(error) !== 'EEXIST') throw error;
    }
  }
}
