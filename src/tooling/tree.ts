import * as fs from 'node:fs';
import * as path from 'node:path';

/** The files of a rendered tree: relative path (`<environment>/<chart>.yaml`) -> text. */
export type ManifestTree = ReadonlyMap<string, string>;

/** Every `.yaml` file below `dir`, keyed by its path relative to `dir` with `/` separators. */
export function readManifestTree(dir: string): ManifestTree {
  if (!fs.existsSync(dir)) return new Map();
  const files = (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile() && entry.name.endsWith('.yaml'))
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
  return new Map(files.map((file) => [file, fs.readFileSync(path.join(dir, file), 'utf8')]));
}
