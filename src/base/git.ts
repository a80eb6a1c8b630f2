import { spawnSync } from 'node:child_process';
import { RefusedError, UsageError } from './errors';

/**
 * The one way the program asks git: every call runs `git -C <root>` with one output limit,
 * and a missing git is refused by name (except where `hasCommittedHead` says a project
 * without git has no work tree).
 */

/** The most a git command may print: a whole rendered tree fits many times over. */
const GIT_OUTPUT_LIMIT = 1024 * 1024 * 1024;

/** Run `git -C <root> <args>`: whether it succeeded, and what it printed. */
export function git(root: string, args: readonly string[]): { ok: boolean; stdout: string; stderr: string } {
  const result = spawnSync('git', ['-C', root, ...args], { encoding: 'utf8', maxBuffer: GIT_OUTPUT_LIMIT });
  if (result.error) throw new RefusedError(`cannot run git: ${result.error.message}`);
  return { ok: result.status === 0, stdout: result.stdout, stderr: result.stderr.trim() };
}

/**
 * Whether `root` is in a git work tree (with at least one commit, when `committed`): at its
 * top, or a folder of it (a platform kept in a folder of a larger repository), in one git
 * process. Paths the program gives git are relative to `root` (`<commit>:./<path>`, pathspecs),
 * so they mean the same in both. Without git on the PATH there is no work tree to speak of:
 * false, as outside one.
 */
export function isInWorkTree(root: string, committed: boolean): boolean {
  const args = committed ? ['rev-parse', '--is-inside-work-tree', '--verify', '--quiet', 'HEAD'] : ['rev-parse', '--is-inside-work-tree'];
  const found = spawnSync('git', ['-C', root, ...args], { encoding: 'utf8' });
  if (found.error && (found.error as NodeJS.ErrnoException).code === 'ENOENT') return false;
  if (found.error) throw new RefusedError(`cannot run git: ${found.error.message}`);
  return found.status === 0 && found.stdout.split('\n')[0] === 'true';
}

/** Whether `root` is in a git work tree with at least one commit. */
export function hasCommittedHead(root: string): boolean {
  return isInWorkTree(root, true);
}

/** `git cat-file --batch`'s line before an object's content: its id (SHA-1 or SHA-256), type and size. */
const FOUND = /^[0-9a-f]{40}(?:[0-9a-f]{24})? (\w+) (\d+)$/;

/**
 * Files as committed, read by one git process (`git cat-file --batch`) instead of one
 * `git show` each: `<commit>:<path>` -> text, undefined where that commit has no such file.
 */
export function readCommittedFiles(root: string, objects: readonly string[]): Map<string, string | undefined> {
  const files = new Map<string, string | undefined>();
  if (objects.length === 0) return files;
  const unreadable = objects.find((object) => /[\n\r]/.test(object));
  if (unreadable !== undefined) throw new RefusedError(`cannot read ${JSON.stringify(unreadable)} from git: a line break in a path`);
  const result = spawnSync('git', ['-C', root, 'cat-file', '--batch'], { input: `${objects.join('\n')}\n`, maxBuffer: GIT_OUTPUT_LIMIT });
  if (result.error) throw new RefusedError(`cannot run git: ${result.error.message}`);
  if (result.status !== 0) throw new RefusedError(`git cat-file in ${root}: ${result.stderr.toString().trim()}`);
  // Per object: `<id> <type> <size>`, then size bytes and a line break; or one line naming the
  // object (`<object> missing`, `ambiguous`), which never matches FOUND: an object has a colon.
  const output = result.stdout;
  let at = 0;
  for (const object of objects) {
    const end = output.indexOf(0x0a, at);
    const found = FOUND.exec(output.toString('utf8', at, end));
    at = end + 1;
    if (found === null) {
      files.set(object, undefined);
      continue;
    }
    const size = Number(found[2]);
    files.set(object, found[1] === 'blob' ? output.toString('utf8', at, at + size) : undefined);
    at += size + 1;
  }
  return files;
}

/** The files of `folder` (project-relative) ending in `extension`, as committed in `commit`, keyed relative to `folder`. */
export function readCommittedTree(root: string, commit: string, folder: string, extension: string): ReadonlyMap<string, string> {
  const listing = git(root, ['ls-tree', '-r', '-z', '--name-only', commit, '--', `${folder}/`]);
  if (!listing.ok) throw new RefusedError(`cannot list ${folder}/ at ${commit}: ${listing.stderr}`);
  const files = listing.stdout
    .split('\0')
    .filter((file) => file.endsWith(extension))
    .sort();
  const committed = readCommittedFiles(root, files.map((file) => `${commit}:./${file}`));
  const tree = new Map<string, string>();
  for (const file of files) {
    const text = committed.get(`${commit}:./${file}`);
    if (text === undefined) throw new RefusedError(`cannot read ${file} at ${commit}: git lists it but has no file's content for it (a submodule?)`);
    tree.set(file.slice(folder.length + 1), text);
  }
  return tree;
}

/** The full commit id a ref names; a UsageError naming the ref when it names none. */
export function resolveCommit(root: string, ref: string): string {
  const result = git(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (!result.ok) throw new UsageError(`"${ref}" does not name a commit in ${root}`);
  return result.stdout.trim();
}

/** `1a2b3c4`: a commit as people read it. */
export function shortCommit(commit: string): string {
  return commit.slice(0, 7);
}
