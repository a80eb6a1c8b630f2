import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/base/errors';
import { loadEnvironments } from '../src/environments';
import { readValuesTexts, ValuesFile } from '../src/environments/values-file';
import { ROOT } from './support';

// A section that is missing or is not a mapping gets a message of its own, naming what the
// section holds, never zod's generic "Invalid input: expected object, received ...".

const texts = readValuesTexts(ROOT);

function problemsWith(file: string, edit: (document: ValuesFile['document']) => void): readonly string[] {
  const text = new ValuesFile(file, texts.get(file)!).edited(edit);
  try {
    loadEnvironments(new Map([...texts, [file, text]]));
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

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
