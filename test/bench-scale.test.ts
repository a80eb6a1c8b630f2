import { describe, expect, it } from 'vitest';
import { scaledTexts } from '../src/bench/scale';
import { loadEnvironments } from '../src/environments';
import { readValuesTexts } from '../src/environments/values-file';
import { ENVIRONMENT_ORDER, ROOT } from './support';

// `npm run bench` renders N synthetic applications per environment through the real loader:
// the copies must pass every rule across files at every N it measures (1, 10 and 100).
describe("the bench's synthetic applications", () => {
  it.each([1, 10, 100])('validate at N=%i: every environment holds N applications', (count) => {
    const environments = loadEnvironments(scaledTexts(readValuesTexts(ROOT), count));
    expect(environments.map((environment) => environment.name)).toEqual([...ENVIRONMENT_ORDER]);
    for (const environment of environments) expect(environment.applications, environment.name).toHaveLength(count);
  });
});
