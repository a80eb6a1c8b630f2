import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applicationCopyText } from '../src/bench/scale';
import { compareEnvironments } from '../src/diff/rendered-diff';
import { loadEnvironments } from '../src/environments';
import { ENVIRONMENT_VALUES_FILE, readValuesTexts, VALUES_DIR, ValuesFile } from '../src/environments/values-file';
import { secretsLayout } from '../src/secrets/layout';
import { dataCopy } from './project-copy';
import { ROOT } from './support';

// Output is deterministic: the same values render the same files in the same order on every
// machine. Node's ICU takes its default locale from LC_ALL/LANG, and `localeCompare` collates
// by it: under Lithuanian `y` sorts before `j`. Here `localeCompare` behaves as it does on such
// a machine; the order of applications, values files and environments must not change.
const lithuanian = new Intl.Collator('lt');

/** Two applications whose names Lithuanian collation orders differently from code units. */
const NAMES = ['jobs', 'yard'] as const;

function withApplications(root: string, environment: string): void {
  const dir = path.join(root, VALUES_DIR, environment);
  const first = fs.readdirSync(dir).sort().find((file) => file.endsWith('.yaml') && file !== ENVIRONMENT_VALUES_FILE)!;
  const values = new ValuesFile(first, fs.readFileSync(path.join(dir, first), 'utf8'));
  for (const name of NAMES) fs.writeFileSync(path.join(dir, `${name}.yaml`), applicationCopyText(values, name));
}

describe('order on a machine whose locale collates differently', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('loads values files and applications in the same order as anywhere else', () => {
    const root = dataCopy();
    try {
      withApplications(root, 'local');
      const expected = loadEnvironments(readValuesTexts(root)).map((env) => env.applications.map((app) => app.name));
      const files = [...readValuesTexts(root).keys()];
      expect(files).toEqual([...files].sort());

      vi.spyOn(String.prototype, 'localeCompare').mockImplementation(function (this: string, that: string) {
        return lithuanian.compare(this, that);
      });
      expect(['yard', 'jobs'].sort((a, b) => a.localeCompare(b))).toEqual(['yard', 'jobs']);
      expect([...readValuesTexts(root).keys()]).toEqual(files);
      const local = loadEnvironments(readValuesTexts(root)).find((env) => env.name === 'local')!;
      expect(local.applications.map((app) => app.name).filter((name) => (NAMES as readonly string[]).includes(name))).toEqual([...NAMES]);
      expect(loadEnvironments(readValuesTexts(root)).map((env) => env.applications.map((app) => app.name))).toEqual(expected);
      const layout = [...secretsLayout(loadEnvironments(readValuesTexts(root))).keys()];
      expect(layout).toEqual([...layout].sort());
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('orders environments the promotion order does not know by code units', () => {
    vi.spyOn(String.prototype, 'localeCompare').mockImplementation(function (this: string, that: string) {
      return lithuanian.compare(this, that);
    });
    expect(['yard', 'jobs'].sort(compareEnvironments)).toEqual(['jobs', 'yard']);
  });
});

describe('one order everywhere', () => {
  // The test above covers loading; this keeps a later sort in rendering, diff or the e2e from
  // collating by the machine's locale again. src/base/text-order.ts names the reason in prose.
  it('sorts by compareText: no localeCompare or Intl.Collator in src/ or e2e/', () => {
    const offending: string[] = [];
    for (const dir of ['src', 'e2e']) {
      for (const file of fs.readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]) {
        if (!file.endsWith('.ts')) continue;
        const code = fs.readFileSync(path.join(ROOT, dir, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
        if (/\blocaleCompare\s*\(|\bIntl\.Collator\b/.test(code)) offending.push(`${dir}/${file}`);
      }
    }
    expect(offending).toEqual([]);
  });
});

