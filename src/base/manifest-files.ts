import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_SCHEMA, dump, Type } from 'js-yaml';

/** Rendered manifests on disk: how they are written (YAML that Kubernetes and people read alike) and read back. */

/** The files of a rendered tree: relative path (`<environment>/<chart>.yaml`) -> text. */
export type ManifestTree = ReadonlyMap<string, string>;

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

/** The file that makes a folder kustomize's input (a kustomization and its patches), not rendered manifests. */
export const KUSTOMIZATION_FILE = 'kustomization.yaml';

/**
 * Every file below `dir` ending in `extension`, keyed by its path relative to `dir` with `/`
 * separators; a folder holding a kustomization (`dist/<environment>/argocd/`) is left out: its
 * files are kustomize's input (a remote base and patches), which kustomize builds.
 */
export function readManifestTree(dir: string, extension = '.yaml'): ManifestTree {
  if (!fs.existsSync(dir)) return new Map();
  const relative = (entry: fs.Dirent) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
  const entries = (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((entry) => entry.isFile());
  const kustomizations = entries.filter((entry) => entry.name === KUSTOMIZATION_FILE).map((entry) => relative(entry).slice(0, -KUSTOMIZATION_FILE.length));
  const files = entries
    .filter((entry) => entry.name.endsWith(extension))
    .map(relative)
    .filter((file) => !kustomizations.some((folder) => file.startsWith(folder)))
    .sort();
  return new Map(files.map((file) => [file, fs.readFileSync(path.join(dir, file), 'utf8')]));
}
