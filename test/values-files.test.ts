import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/base/errors';
import { loadEnvironments } from '../src/environments';
import { MAX_VALUES_FILE_BYTES, readValuesTexts, ValuesFile } from '../src/environments/values-file';
import { ROOT } from './support';

// A values file is a regular UTF-8 file of the repository holding one YAML mapping; anything
// else is refused by name (file, rule), and never by echoing what it holds.

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

/** A project with one environment folder holding `environment.yaml`; returns the root and the folder. */
function project(): { root: string; folder: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'values-files-'));
  folders.push(root);
  const folder = path.join(root, 'src/environments/testing');
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'environment.yaml'), 'a: 1\n');
  return { root, folder };
}

function problemsOf(read: () => unknown): readonly string[] {
  try {
    read();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('what readValuesTexts reads', () => {
  it('refuses a link to a file outside the project without echoing it', () => {
    const { root, folder } = project();
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'outside-'));
    folders.push(outside);
    fs.writeFileSync(path.join(outside, 'keys.txt'), 'AGE-SECRET-KEY-1QQQQQQQQQQ\n');
    fs.writeFileSync(path.join(outside, 'billing.yaml'), 'name: billing\n');
    fs.symlinkSync(path.join(outside, 'keys.txt'), path.join(folder, 'keys.yaml'));
    fs.symlinkSync(path.join(outside, 'billing.yaml'), path.join(folder, 'billing.yaml'));
    const problems = problemsOf(() => readValuesTexts(root));
    expect(problems).toEqual([
      `src/environments/testing/billing.yaml: a link to ${path.join(outside, 'billing.yaml')}, outside the project (a fresh clone would not have it); a values file must be a file of the repository`,
      `src/environments/testing/keys.yaml: a link to ${path.join(outside, 'keys.txt')}, outside the project (a fresh clone would not have it); a values file must be a file of the repository`,
    ]);
    expect(problems.join('\n')).not.toContain('AGE-SECRET-KEY');
  });

  it('reads a link to a file inside the project', () => {
    const { root, folder } = project();
    fs.mkdirSync(path.join(root, 'shared'));
    fs.writeFileSync(path.join(root, 'shared/billing.yaml'), 'name: billing\n');
    fs.symlinkSync('../../../shared/billing.yaml', path.join(folder, 'billing.yaml'));
    expect(readValuesTexts(root).get('src/environments/testing/billing.yaml')).toBe('name: billing\n');
  });

  it('refuses what is not a regular file (a named pipe would block the read for ever)', () => {
    const { root, folder } = project();
    const made = spawnSync('mkfifo', [path.join(folder, 'pipe.yaml')]);
    expect(made.status).toBe(0);
    expect(problemsOf(() => readValuesTexts(root))).toEqual(['src/environments/testing/pipe.yaml: not a regular file (a named pipe); a values file must be a file of the repository']);
  });

  it('refuses a file over the size limit, naming the limit', () => {
    const { root, folder } = project();
    fs.writeFileSync(path.join(folder, 'big.yaml'), `# ${'x'.repeat(MAX_VALUES_FILE_BYTES)}\n`);
    expect(problemsOf(() => readValuesTexts(root))).toEqual([
      `src/environments/testing/big.yaml: ${MAX_VALUES_FILE_BYTES + 3} bytes, more than a values file may have (${MAX_VALUES_FILE_BYTES})`,
    ]);
  });

  it('refuses UTF-16 and bytes that are not UTF-8, naming the line, without dumping them', () => {
    const { root, folder } = project();
    fs.writeFileSync(path.join(folder, 'wide.yaml'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('name: wide\n', 'utf16le')]));
    fs.writeFileSync(path.join(folder, 'latin.yaml'), Buffer.from('name: latin\nowner: Jos\xe9\n', 'latin1'));
    expect(problemsOf(() => readValuesTexts(root))).toEqual([
      'src/environments/testing/latin.yaml:2: not UTF-8 (byte 0xe9); save the file as UTF-8',
      'src/environments/testing/wide.yaml: UTF-16 text (it starts with a UTF-16 byte order mark); save the file as UTF-8',
    ]);
  });
});

describe('the shape of a values file', () => {
  const texts = readValuesTexts(ROOT);
  const file = 'src/environments/testing/webapp.yaml';
  const load = (text: string) => problemsOf(() => loadEnvironments(new Map([...texts, [file, text]])));

  it.each([
    ['', `${file}:1: the file is empty; it must be a mapping of fields (see src/environments/application.schema.json)`],
    ['# only a comment\n', `${file}:1: the file is empty; it must be a mapping of fields (see src/environments/application.schema.json)`],
    ['- a\n- b\n', `${file}:1: the file holds a list; it must be a mapping of fields (see src/environments/application.schema.json)`],
    ['just text\n', `${file}:1: the file holds a single value; it must be a mapping of fields (see src/environments/application.schema.json)`],
    ['a: 1\n---\nb: 2\n', `${file}:2: the file holds several YAML documents (---); a values file is one document`],
  ])('refuses %j by name', (text, problem) => {
    expect(load(text)).toEqual([problem]);
  });

  it('refuses an alias bomb, naming the file', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...'bcdefghij'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdefghij'[i]}`).join(', ')}]`)].join('\n');
    const problems = load(`${bomb}\n`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${file}:\\d+: too many YAML aliases`));
  });
});

describe('editing a values file', () => {
  it('keeps CRLF line endings', () => {
    const edited = new ValuesFile('x.yaml', '# note\r\na: 1\r\nb: 2\r\n').edited((document) => document.set('a', 3));
    expect(edited).toBe('# note\r\na: 3\r\nb: 2\r\n');
  });
});
