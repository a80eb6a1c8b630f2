import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_SCALAR_STYLE_RULES, DUMP_SCHEMA, dump, SCALAR_STYLE, type ScalarLayout } from 'js-yaml';

/** Rendered manifests on disk: how they are written (YAML that Kubernetes and people read alike) and read back. */

/** The files of a rendered tree: relative path (`<environment>/<chart>.yaml`) -> text. */
export type ManifestTree = ReadonlyMap<string, string>;

/**
 * Quoting: js-yaml's DUMP_SCHEMA quotes every string that a YAML 1.1 reader (Kubernetes reads
 * manifests with sigs.k8s.io/yaml's goyaml.v2) or a YAML 1.2 reader would take for another
 * type: YAML 1.1's booleans, ints with `_`, binary and base 60, floats, `<<` and `=`
 * (js-yaml 5.5.0, its documentation of DUMP_SCHEMA; test/synth.test.ts reads them back both
 * ways). One rule on top keeps the committed files as js-yaml 4 wrote them: a string starting
 * with `-`, `?`, `:` or `=` stays double-quoted (js-yaml 4 quoted every string whose first
 * character is an indicator; 5 writes `-c` or `=~` plain, which reads the same). Without it,
 * the upgrade alone would rewrite every file holding such an argument and with them the
 * committed charts' versions.
 */
function quoteLikeJsYaml4(layout: ScalarLayout): void {
  if (layout.style === SCALAR_STYLE.PLAIN && layout.node.tag === 'tag:yaml.org,2002:str' && /^[-?:=]/.test(layout.node.value)) layout.style = SCALAR_STYLE.DOUBLE_QUOTED;
}
const { fallbackToDoubleQuoted, ...DEFAULT_RULES } = DEFAULT_SCALAR_STYLE_RULES;
const SCALAR_STYLE_RULES = [...Object.values(DEFAULT_RULES), quoteLikeJsYaml4, fallbackToDoubleQuoted];

/**
 * A rendered file's text: the objects as YAML documents separated by `---`, keys in the
 * order cdk8s gives them (sorted), no line folding. Emitted with js-yaml instead of cdk8s'
 * own writer (the `yaml` library's document model): the same data in about half the time
 * (docs/performance.md); `yaml` keeps the job it is made for, reading and editing values
 * files with their comments and line numbers. Every string a YAML 1.1 or 1.2 reader would
 * take for another type is quoted (test/synth.test.ts reads the rendered files back both ways).
 */
export function manifestText(objects: readonly unknown[]): string {
  return objects.map((object) => dump(object, { schema: DUMP_SCHEMA, lineWidth: -1, noRefs: true, quoteStyle: 'double', scalarStyleRules: SCALAR_STYLE_RULES })).join('---\n');
}

/** The file that makes a folder kustomize's input (a kustomization and its patches), not rendered manifests. */
export const KUSTOMIZATION_FILE = 'kustomization.yaml';

/** Whether a file (a path relative to a tree's root, `/` separators) lies in a folder of `files` that holds a kustomization. */
export function kustomizationMember(files: readonly string[]): (file: string) => boolean {
  const folders = files.filter((file) => file === KUSTOMIZATION_FILE || file.endsWith(`/${KUSTOMIZATION_FILE}`)).map((file) => file.slice(0, -KUSTOMIZATION_FILE.length));
  return (file) => folders.some((folder) => file.startsWith(folder));
}

/**
 * Every file below `dir` ending in `extension`, keyed by its path relative to `dir` with `/`
 * separators. A folder holding a kustomization (`dist/<environment>/argocd/`) holds kustomize's
 * input (a remote base and patches), not objects: it is left out unless `kustomizations` is
 * true (the rendered diff compares its files as files, src/diff/rendered-diff.ts).
 */
export function readManifestTree(dir: string, extension = '.yaml', kustomizations = false): ManifestTree {
  if (!fs.existsSync(dir)) return new Map();
  const relative = (entry: fs.Dirent) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
  const entries = (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((entry) => entry.isFile());
  const found = entries.filter((entry) => entry.name.endsWith(extension) || entry.name === KUSTOMIZATION_FILE).map(relative);
  const inKustomization = kustomizationMember(found);
  const files = found.filter((file) => file.endsWith(extension) && (kustomizations || !inKustomization(file))).sort();
  return new Map(files.map((file) => [file, fs.readFileSync(path.join(dir, file), 'utf8')]));
}
