import * as fs from 'node:fs';
import * as path from 'node:path';
import { RefusedError } from '../base/errors';
import { isWithin, realPathOf } from '../base/paths';
import { RENDERED_DIR, RENDER_MARKER } from '../contract/layout';

/**
 * The output folder of synth and how it is kept safe: which folder a command line names,
 * and the checks before synth may replace one (it only ever replaces a folder it created).
 */

/**
 * The output folder a command line names: `--outdir`, else `$CDK8S_OUTDIR`, else `dist`
 * below the project. An empty value counts as unset (`CDK8S_OUTDIR= npm run synth`).
 */
export function resolveOutdir(root: string, option: string | undefined, variable: string | undefined = process.env.CDK8S_OUTDIR): string {
  const chosen = [option, variable].find((value) => value !== undefined && value.trim() !== '');
  return chosen === undefined ? path.join(root, RENDERED_DIR) : path.resolve(chosen);
}

/** How messages name an output folder: the option, as given. */
export function outdirLabel(outdir: string): string {
  return `--outdir "${outdir}"`;
}

/** Whether `file` is a symbolic link; false when it, or a folder on its path, is absent or a file. */
function isLink(file: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The folder synth renders `outdir` into: the path itself, or, where it is a link to a
 * folder, that folder (the link is kept, never replaced). A link whose target does not exist
 * is refused, naming both.
 */
export function outputFolder(outdir: string): string {
  const target = path.resolve(outdir);
  if (!isLink(target)) return target;
  if (!fs.existsSync(target)) throw new RefusedError(`${outdirLabel(outdir)} is a link to ${fs.readlinkSync(target)}, which does not exist`);
  return fs.realpathSync(target);
}

/**
 * Refuse an output folder synth must never replace: the project root or any folder above
 * it, `src` or anything inside it, a file, a folder holding files synth did not write (one
 * without RENDER_MARKER that is not empty), and a path below a file (`/dev/null/dist`).
 * Absent and empty folders are fine.
 */
export function assertReplaceable(outdir: string, root: string): void {
  const target = outputFolder(outdir);
  const where = outdirLabel(outdir);
  // Compared as the filesystem resolves them: a link on the way (`/tmp/link/x` with /tmp/link -> src) counts.
  const real = realPathOf(target);
  const realRoot = fs.realpathSync(root);
  if (isWithin(realRoot, real)) throw new RefusedError(`${where} is the project root or a folder above it; synth replaces its output folder as a whole`);
  if (isWithin(real, path.join(realRoot, 'src'))) throw new RefusedError(`${where} is inside src/; synth replaces its output folder as a whole`);
  if (!fs.existsSync(target)) {
    assertFolderAbove(target, where);
    return;
  }
  if (!fs.statSync(target).isDirectory()) throw new RefusedError(`${where} is a file, not a folder`);
  const entries = fs.readdirSync(target);
  if (entries.length > 0 && !entries.includes(RENDER_MARKER)) {
    throw new RefusedError(
      `${where} holds files synth did not write (no ${RENDER_MARKER}); synth only replaces a folder it created: choose an empty or new folder`,
    );
  }
}

/** The nearest path at or above `target` that exists (the root at least). */
function nearestExisting(target: string): string {
  let existing = target;
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  return existing;
}

function assertFolderAbove(target: string, where: string): void {
  const existing = nearestExisting(target);
  if (!fs.statSync(existing).isDirectory()) throw new RefusedError(`${where} is below ${existing}, which is a file, not a folder`);
}

/**
 * Create `dir` and the folders missing above it, one level at a time: Node's recursive
 * `mkdirSync` (20.20 and 24.22 alike) never returns where a folder cannot be made but the error is ENOENT (below
 * /proc). A refusal naming `where` when a path on the way is a file or cannot be created.
 */
export function createFolder(dir: string, where: string): void {
  const target = path.resolve(dir);
  assertFolderAbove(target, where);
  const existing = nearestExisting(target);
  const missing: string[] = [];
  for (let folder = target; folder !== existing; folder = path.dirname(folder)) missing.unshift(folder);
  for (const folder of missing) {
    try {
      fs.mkdirSync(folder);
    } catch (error) {
      // Made meanwhile by another process: fine.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) continue;
      if (isLink(folder)) {
        throw new RefusedError(`${where} is below ${folder}, a link to ${fs.readlinkSync(folder)}, which does not exist`);
      }
      throw new RefusedError(`${where}: cannot create ${folder} (${(error as Error).message})`);
    }
  }
}
