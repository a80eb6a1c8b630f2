import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

// Every path of the project that the documentation or a comment names exists: a file moves,
// and what names it follows in the same change. A path is a run of the project's top-level
// folders (src/, test/, e2e/, …) followed by path characters; `<placeholders>`, globs and
// the folders the program writes (dist/<env>, secrets/<env>) are not checked.
const ROOT = path.resolve(__dirname, '..');
const FOLDERS = ['src', 'test', 'e2e', 'pulumi', 'toolchain', 'scripts', 'docs', 'schemas'];
const PATH = new RegExp(`(?<![\\w./@-])((?:${FOLDERS.join('|')})/[\\w./<>*{}-]*)`, 'g');

function filesBelow(dir: string, pattern: RegExp): string[] {
  const full = path.join(ROOT, dir);
  if (!fs.existsSync(full)) return [];
  return (fs.readdirSync(full, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile() && pattern.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith(`src${path.sep}imports${path.sep}`))
    .sort();
}

/** The project paths a text names, without the ones that cannot be checked (placeholders, globs). */
export function namedPaths(text: string): string[] {
  return [...text.matchAll(PATH)]
    .map((match) => match[1]!.replace(/[.-]+$/, ''))
    .filter((named) => !/[<>*{}]/.test(named) && !named.includes('...'))
    // docs/ below a folder the project does not have is another project's documentation (Argo CD's, Flagger's).
    .filter((named) => !named.startsWith('docs/') || fs.existsSync(path.join(ROOT, path.dirname(named))));
}

const DOCUMENTS = ['README.md', ...filesBelow('docs', /\.md$/).filter((file) => !file.endsWith('platform-contract.md'))];
const SOURCES = ['src', 'e2e', 'pulumi', 'toolchain', 'scripts'].flatMap((dir) => filesBelow(dir, /\.(ts|cjs|mts|sh)$/));

describe('paths named in the documentation and the comments', () => {
  it('finds the paths it is given (the check itself)', () => {
    expect(namedPaths('see src/contract/naming.ts, test/<name>.test.ts and `e2e/harness.ts`.')).toEqual(['src/contract/naming.ts', 'e2e/harness.ts']);
  });

  it.each([...DOCUMENTS, ...SOURCES])('%s names only paths that exist', (file) => {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const missing = [...new Set(namedPaths(text))].filter((named) => !fs.existsSync(path.join(ROOT, named)));
    expect(missing).toEqual([]);
  });
});
