import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { App } from 'cdk8s';
import { DEFAULT_SCHEMA, dump, Type } from 'js-yaml';
import { RefusedError } from './errors';

/**
 * The one home of the rendered layout: `dist/<environment>/<chart>.yaml`, writing it, the
 * marker that says synth created a folder, the checks before synth may replace one, and
 * reading a rendered tree from disk or from a commit.
 */

/** The committed rendering, relative to the project root. */
export const RENDERED_DIR = 'dist';

/** Rendered manifests end in `.yaml`; one file per chart, named after the chart. */
export const MANIFEST_EXTENSION = '.yaml';

/**
 * The file synth writes into every output folder it creates. Synth replaces a folder only
 * when it holds this file (or is empty or absent): a mistyped `--outdir` never deletes work.
 */
export const RENDER_MARKER = '.platform-gitops-render';
export const RENDER_MARKER_TEXT = 'Written by `npm run synth`: this folder is replaced as a whole on every render.\n';

/**
 * The \`output\` of cdk8s.yaml: \`npx cdk8s synth\` deletes it before running the program, so
 * it is a scratch folder, never dist/; the program renders dist/ itself (src/main.ts).
 */
export const CDK8S_CLI_OUTPUT = 'build/cdk8s-cli';

/** The files of a rendered tree: relative path (`<environment>/<chart>.yaml`) -> text. */
export type ManifestTree = ReadonlyMap<string, string>;

/**
 * The platform's delivered charts of every environment, each `dist/<env>/<id>.yaml` and a
 * child Application of that name. Beside them, one chart per application (`applicationChartId`)
 * and the GitOps wiring (`gitops.yaml`). An application may not take one of these names
 * (src/environments/validate.ts, RESERVED_APPLICATION_NAMES), so no file can collide.
 */
export const PLATFORM_CHART_IDS = ['infrastructure', 'issuers', 'database', 'broker', 'monitoring'] as const;
export type PlatformChartId = (typeof PLATFORM_CHART_IDS)[number];

/** An application's chart: `dist/<env>/<application>.yaml`, its Argo CD Application and its secrets group share the name. */
export function applicationChartId(application: string): string {
  return application;
}

/** `<chart>.yaml`: a chart's file in its environment's folder. */
export function chartFileName(chart: string): string {
  return `${chart}${MANIFEST_EXTENSION}`;
}

/** `<environment>/<chart>.yaml`, relative to an output folder. */
export function chartFile(environment: string, chart: string): string {
  return `${environment}/${chartFileName(chart)}`;
}

/** `dist/<environment>`: where an environment's manifests live in the repository. */
export function manifestsPath(environment: string): string {
  return `${RENDERED_DIR}/${environment}`;
}

/**
 * The scalars YAML 1.1 reads as something other than a string and js-yaml's YAML 1.2 schema
 * does not (YAML 1.1 type repository: https://yaml.org/type/int.html, float.html,
 * merge.html, value.html): numbers with `_` separators, binary, base 60, and `<<`/`=`.
 * Kubernetes reads manifests with a YAML 1.1 parser (sigs.k8s.io/yaml's goyaml.v2), so a
 * string of that shape must be quoted. The type only decides quoting: it has no `predicate`,
 * so js-yaml never writes a value with it.
 */
const YAML_1_1_ONLY = new Type('tag:platform-gitops.invalid,2026:yaml-1.1-only', {
  kind: 'scalar',
  resolve: (text: string) =>
    /^[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|(0|[1-9][0-9_]*)|[1-9][0-9_]*(:[0-5]?[0-9])+|([0-9][0-9_]*)?\.[0-9_]*([eE][-+]?[0-9]+)?|[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*)$/.test(text) ||
    text === '<<' ||
    text === '=',
});
const MANIFEST_SCHEMA = DEFAULT_SCHEMA.extend({ implicit: [YAML_1_1_ONLY] });

/**
 * A rendered file's text: the objects as YAML documents separated by `---`, keys in the
 * order cdk8s gives them (sorted), no line folding. Emitted with js-yaml instead of cdk8s'
 * own writer (the `yaml` library's document model): the same data in about half the time
 * (README, "Performance"); `yaml` keeps the job it is made for, reading and editing values
 * files with their comments and line numbers. Every string a YAML 1.1 or 1.2 reader would
 * take for another type is quoted (test/synth.test.ts reads the rendered files back both ways).
 */
export function manifestText(objects: readonly unknown[]): string {
  return objects.map((object) => dump(object, { schema: MANIFEST_SCHEMA, lineWidth: -1, noRefs: true, quotingType: '"' })).join('---\n');
}

/**
 * Write every chart of `app` to `<outdir>/<chart id>.yaml` (`chartFileName`), holding the
 * objects `chart.toJson()` resolves (cdk8s' validation and dependency order included),
 * written by `manifestText`.
 */
export function writeCharts(app: App, outdir: string): void {
  fs.mkdirSync(outdir, { recursive: true });
  for (const chart of app.charts) fs.writeFileSync(path.join(outdir, chartFileName(chart.node.id)), manifestText(chart.toJson()));
}

/** Every `.yaml` file below `dir`, keyed by its path relative to `dir` with `/` separators. */
export function readManifestTree(dir: string): ManifestTree {
  if (!fs.existsSync(dir)) return new Map();
  const files = (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile() && entry.name.endsWith(MANIFEST_EXTENSION))
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
  return new Map(files.map((file) => [file, fs.readFileSync(path.join(dir, file), 'utf8')]));
}

/** The most a git command may print: a whole rendered tree fits many times over. */
const GIT_OUTPUT_LIMIT = 1024 * 1024 * 1024;

function git(root: string, args: readonly string[]): { ok: boolean; stdout: string; stderr: string } {
  const result = spawnSync('git', ['-C', root, ...args], { encoding: 'utf8', maxBuffer: GIT_OUTPUT_LIMIT });
  if (result.error) throw new RefusedError(`cannot run git: ${result.error.message}`);
  return { ok: result.status === 0, stdout: result.stdout, stderr: result.stderr.trim() };
}

/**
 * Whether `root` is the top of a git work tree with at least one commit (one git process).
 * Without git on the PATH there is no work tree to speak of: false, as outside one.
 */
export function hasCommittedHead(root: string): boolean {
  const found = spawnSync('git', ['-C', root, 'rev-parse', '--show-toplevel', '--verify', '--quiet', 'HEAD'], { encoding: 'utf8' });
  if (found.error && (found.error as NodeJS.ErrnoException).code === 'ENOENT') return false;
  if (found.error) throw new RefusedError(`cannot run git: ${found.error.message}`);
  const [top] = found.stdout.split('\n');
  return found.status === 0 && top !== undefined && path.resolve(top) === fs.realpathSync(root);
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

/**
 * `dist/<environment>/<chart>.yaml` of each (environment, chart) as committed in HEAD of the
 * project at `root`: what the cluster syncs, whatever the working tree holds. Keyed by
 * `<environment>/<chart>.yaml`; undefined where HEAD has no such file.
 */
export function readCommittedCharts(root: string, charts: readonly { environment: string; chart: string }[]): Map<string, string | undefined> {
  const files = charts.map(({ environment, chart }) => chartFile(environment, chart));
  const committed = readCommittedFiles(root, files.map((file) => `HEAD:${RENDERED_DIR}/${file}`));
  return new Map(files.map((file) => [file, committed.get(`HEAD:${RENDERED_DIR}/${file}`)]));
}

/** The `.yaml` files of `dist/` as committed in `commit`, keyed relative to `dist/`. */
export function readCommittedTree(root: string, commit: string): ManifestTree {
  const listing = git(root, ['ls-tree', '-r', '-z', '--name-only', commit, '--', `${RENDERED_DIR}/`]);
  if (!listing.ok) throw new RefusedError(`cannot list ${RENDERED_DIR}/ at ${commit}: ${listing.stderr}`);
  const files = listing.stdout
    .split('\0')
    .filter((file) => file.endsWith(MANIFEST_EXTENSION))
    .sort();
  const committed = readCommittedFiles(root, files.map((file) => `${commit}:${file}`));
  const tree = new Map<string, string>();
  for (const file of files) {
    const text = committed.get(`${commit}:${file}`);
    if (text === undefined) throw new RefusedError(`cannot read ${file} at ${commit}: git lists it but has no file's content for it (a submodule?)`);
    tree.set(file.slice(RENDERED_DIR.length + 1), text);
  }
  return tree;
}

/** Run git in `root`; exported for the diff command's ref handling. */
export { git as runGit };

/**
 * The output folder a command line names: `--outdir`, else `$CDK8S_OUTDIR`, else `dist`
 * below the project. An empty value counts as unset (`CDK8S_OUTDIR= npm run synth`).
 */
export function resolveOutdir(root: string, option: string | undefined, variable: string | undefined = process.env.CDK8S_OUTDIR): string {
  const chosen = [option, variable].find((value) => value !== undefined && value.trim() !== '');
  return chosen === undefined ? path.join(root, RENDERED_DIR) : path.resolve(chosen);
}

function isWithin(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
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
  if (isWithin(root, target)) throw new RefusedError(`${where} is the project root or a folder above it; synth replaces its output folder as a whole`);
  if (isWithin(target, path.join(root, 'src'))) throw new RefusedError(`${where} is inside src/; synth replaces its output folder as a whole`);
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
 * Create `dir` and the folders missing above it, one level at a time: node 20's recursive
 * `mkdirSync` never returns where a folder cannot be made but the error is ENOENT (below
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
