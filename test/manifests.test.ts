import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { readYamlDocuments } from '../src/base/yaml-documents';
import { scanForPlaintextSecrets } from '../src/secrets/scan';
import { documentsOf, readRenderedTree } from '../src/validation/manifests';
import { ROOT, temporaryDirectory } from './support';

/** What the yaml library reads from a text: each document's value, or its errors. */
const byYamlLibrary = (text: string) =>
  parseAllDocuments(text).map((document) => (document.errors.length > 0 ? { problem: document.errors.map((error) => error.message).join('; ') } : { value: document.toJS() as unknown }));

describe('reading rendered files (documentsOf)', () => {
  it('reads every committed file to the values the yaml library reads', () => {
    const dist = path.join(ROOT, 'dist');
    let files = 0;
    for (const environment of fs.readdirSync(dist, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)) {
      for (const file of fs.readdirSync(path.join(dist, environment)).filter((name) => name.endsWith('.yaml'))) {
        const text = fs.readFileSync(path.join(dist, environment, file), 'utf8');
        expect(documentsOf(text), `${environment}/${file}`).toEqual(byYamlLibrary(text));
        files += 1;
      }
    }
    expect(files).toBeGreaterThan(0);
  });

  it('reads scalars by YAML 1.2\'s core schema, as the yaml library does: dates, yes/no and sexagesimals stay strings', () => {
    const text = [
      'date: 2026-11-27',
      'time: 2026-11-27T10:00:00Z',
      'yes: yes',
      'off: off',
      'octal: 0o17',
      'hex: 0x1F',
      'float: 1.5e3',
      'sexagesimal: 1:30',
      'nulls: [~, null, Null]',
      'bools: [true, False]',
      'quoted: "0123"',
      'merge: {<<: {a: 1}}',
      'infinity: .inf',
    ].join('\n');
    expect(documentsOf(text)).toEqual(byYamlLibrary(text));
    expect(documentsOf(text)).toEqual([
      {
        value: {
          date: '2026-11-27',
          time: '2026-11-27T10:00:00Z',
          yes: 'yes',
          off: 'off',
          octal: 15,
          hex: 31,
          float: 1500,
          sexagesimal: '1:30',
          nulls: [null, null, null],
          bools: [true, false],
          quoted: '0123',
          merge: { '<<': { a: 1 } },
          infinity: Infinity,
        },
      },
    ]);
  });

  it('names each broken document with the yaml library\'s message and still reads the others', () => {
    const text = 'kind: A\n---\nkind: [unclosed\n---\nkind: C\n';
    const documents = documentsOf(text);
    expect(documents).toEqual(byYamlLibrary(text));
    expect(documents[0]).toEqual({ value: { kind: 'A' } });
    expect(documents[1]).toHaveProperty('problem', expect.stringMatching(/flow sequence|\]/i));
    expect(documents[2]).toEqual({ value: { kind: 'C' } });
  });

  it('refuses a mapping with a key twice, as the yaml library does', () => {
    const text = 'kind: A\nkind: B\n';
    expect(documentsOf(text)).toEqual(byYamlLibrary(text));
    expect(documentsOf(text)[0]).toHaveProperty('problem', expect.stringMatching(/unique/i));
  });
});

describe('an alias bomb in a rendered file', () => {
  // Nine levels of nine aliases each: 387,420,489 leaves once expanded.
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...'bcdefghi'.split('').map((name, index) => {
    const previous = 'abcdefghi'[index]!;
    return `${name}: &${name} [*${previous},*${previous},*${previous},*${previous},*${previous},*${previous},*${previous},*${previous},*${previous}]`;
  })].join('\n');

  it('is read by the yaml library, which bounds aliases, and named as not YAML', () => {
    expect(readYamlDocuments(bomb)).toBeUndefined();
    const [document] = documentsOf(bomb);
    expect(document).toHaveProperty('problem', expect.stringMatching(/alias/i));
  });

  it('is refused by the gate as a file that is not YAML, in a second', () => {
    const dir = temporaryDirectory('platform-gitops-bomb-');
    try {
      fs.mkdirSync(path.join(dir, 'local'));
      fs.writeFileSync(path.join(dir, 'local', 'bomb.yaml'), bomb);
      const tree = readRenderedTree(dir);
      expect(tree.objects).toEqual([]);
      expect(tree.unreadable).toEqual([{ environment: 'local', file: 'bomb.yaml', problem: expect.stringMatching(/alias/i) }]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is scanned for secrets without expanding it', () => {
    expect(scanForPlaintextSecrets(new Map([['dist/local/bomb.yaml', bomb]]))).toEqual([]);
  });
});

describe('anchors', () => {
  it('send a text to the yaml library, which expands them; a quoted & after a space only costs speed', () => {
    expect(readYamlDocuments('a: &x 1\nb: *x\n')).toBeUndefined();
    expect(documentsOf('a: &x 1\nb: *x\n')).toEqual([{ value: { a: 1, b: 1 } }]);
    expect(readYamlDocuments('a: "b & c"\nd: e&f\n')).toEqual([{ a: 'b & c', d: 'e&f' }]);
    expect(readYamlDocuments('a: "b &c"\n')).toBeUndefined();
    expect(documentsOf('a: "b &c"\n')).toEqual([{ value: { a: 'b &c' } }]);
  });
});
