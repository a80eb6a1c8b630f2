import { createHash } from 'node:crypto';
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
 * they read and one swapping its dist/ over the other's.
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

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readJournal(lock: string): LockJournal | undefined {
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

/**
 * Run `work` holding the project's lock (see above). A lock held by a running process is
 * refused naming it; a lock of a process that has stopped is recovered first, reported through `log`.
 */
export function withProjectLock<T>(root: string, command: string, log: (line: string) => void, work: (lock: ProjectLock) => T): T {
  const editDir = path.join(root, EDIT_DIR);
  const lockFile = path.join(editDir, LOCK_FILE);
  fs.mkdirSync(editDir, { recursive: true });
  const own: LockJournal = { pid: process.pid, command };
  let descriptor: number;
  try {
    descriptor = fs.openSync(lockFile, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = readJournal(lockFile);
    if (holder !== undefined && holder.pid !== process.pid && isRunning(holder.pid)) {
      throw new RefusedError(
        `another ${holder.command} (process ${holder.pid}) is editing this project; run this again when it has finished (${EDIT_DIR}/${LOCK_FILE} is its lock)`,
      );
    }
    recover(root, holder, log);
    fs.rmSync(lockFile, { force: true });
    descriptor = fs.openSync(lockFile, 'wx');
  }
  const record = (journal: LockJournal) => {
    fs.ftruncateSync(descriptor);
    fs.writeSync(descriptor, JSON.stringify(journal), 0);
    fs.fsyncSync(descriptor);
  };
  record(own);
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
    fs.closeSync(descriptor);
    fs.rmSync(lockFile, { force: true });
    if (fs.readdirSync(editDir).length === 0) fs.rmdirSync(editDir);
  }
}
