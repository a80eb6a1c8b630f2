import { describe, expect, it } from 'vitest';
import { readValuesTexts, ValuesFile } from '../src/environments/values-file';
import { compareTags } from '../src/environments/strategy-values';
import { ROOT, valuesProblemsWith } from './support';

// A section that is missing or is not a mapping gets a message of its own, naming what the
// section holds, never zod's generic "Invalid input: expected object, received ...".

const texts = readValuesTexts(ROOT);

const problemsWith = (file: string, edit: (document: ValuesFile['document']) => void) => valuesProblemsWith(file, edit, texts);

const application = 'src/environments/staging/webapp.yaml';
const environment = 'src/environments/local/environment.yaml';

describe('a missing or mistyped section', () => {
  // A unit of blue-green may be left out (its absence has a rule of its own); the others are required.
  it.each([
    [application, ['tls'], true],
    [application, ['image'], true],
    [application, ['resources'], true],
    [application, ['strategy'], true],
    [application, ['strategy', 'blueGreen', 'units', 'blue'], false],
    [environment, ['database'], true],
    [environment, ['broker'], true],
  ] as const)('%s: %j is named with what it holds, missing or as a string', (file, section, required) => {
    const edits = [(d: ValuesFile['document']) => d.setIn(section, 'oops'), ...(required ? [(d: ValuesFile['document']) => d.deleteIn(section)] : [])];
    for (const edit of edits) {
      const problems = problemsWith(file, edit);
      expect(problems.length, problems.join('\n')).toBeGreaterThan(0);
      for (const problem of problems) {
        expect(problem).not.toMatch(/Invalid input/);
        expect(problem).toMatch(/must be a mapping with |is required: a mapping with /);
      }
    }
  });
});

describe('a value that validates by its shape but would render what Kubernetes or a registry refuses', () => {
  const rolling = 'src/environments/testing/webapp.yaml';
  const refused = (field: readonly string[], value: unknown) => problemsWith(rolling, (document) => document.setIn(field, value));

  it.each([
    'https://WebApp.testing.platform.example.com',
    'https://webapp.testing.platform.example.com:443',
    'https://webapp.testing.platform.example.com?',
    'https://webapp.testing.platform.example.com#',
    'https://webapp.testing.\tplatform.example.com',
    'https://webapp.testing.%70latform.example.com',
  ])('refuses the url %j: it must be written as the origin it is', (url) => {
    const problems = refused(['url'], url);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('url');
  });

  it.each(['registry.example.com:99999', 'registry.example.com:0', 'registry..example.com', `${'r'.repeat(300)}.example.com`, `${'r'.repeat(64)}.example.com`])(
    'refuses the registry %j',
    (registry) => {
      const problems = refused(['image', 'registry'], registry);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain('image.registry');
    },
  );

  it('accepts a registry with a port', () => {
    expect(refused(['image', 'registry'], 'registry.example.com:5000')).toEqual([]);
  });

  it('refuses replicas beyond what a Deployment holds (int32)', () => {
    expect(refused(['replicas'], 1e10)).toEqual([`${rolling}:${lineOf(rolling, 'replicas')}: replicas 10000000000 must be at most 2147483647 (a Deployment's replicas are an int32)`]);
  });

  it('refuses a tag longer than a registry keeps (128 characters)', () => {
    const problems = refused(['image', 'tag'], `v${'9'.repeat(300)}.0.0`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('must be at most 128 characters');
  });
});

function lineOf(file: string, field: string): number {
  return texts.get(file)!.split('\n').findIndex((line) => line.startsWith(`${field}:`)) + 1;
}

describe('tags', () => {
  it('are compared as whole numbers, however long, never as floats', () => {
    expect(compareTags('v9007199254740993.0.0', 'v9007199254740992.0.0')).toBe(1);
    expect(compareTags('v1.10.0', 'v1.9.0')).toBe(1);
    expect(compareTags('v1.2.3', 'v1.2.3')).toBe(0);
  });
});
