import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RefusedError } from '../src/base/errors';
import { loadEnvironments } from '../src/environments';
import { applicationValuesPath, readValuesTexts, ValuesFile } from '../src/environments/values-file';
import { planRollback } from '../src/release/release';
import { readRunHistory } from '../src/release/run-history';
import { runningTagOf } from '../src/strategies/values-registry';
import { commitAll, commitCopy, dataCopy, newerTag } from './project-copy';
import { firstApplication } from './support';

// What a rollback may go back to: the tags that served in the values file's committed history
// (src/release/run-history.ts). The command's cases run in test/integration/release.test.ts.

const copies: string[] = [];
afterEach(() => {
  for (const copy of copies.splice(0)) fs.rmSync(copy, { recursive: true, force: true });
});
const copy = () => {
  const root = dataCopy();
  copies.push(root);
  return root;
};

describe('the run history of a values file', () => {
  it('lists the tags that served, newest first, each once', () => {
    const root = copy();
    commitCopy(root);
    // An environment whose application's tag is image.tag (not blue-green's units).
    const environment = loadEnvironments(readValuesTexts(root)).find((candidate) => firstApplication(candidate).strategy.type !== 'blue-green')!;
    const application = firstApplication(environment);
    const file = applicationValuesPath(environment.name, application.name);
    const first = runningTagOf(application);
    const next = newerTag(root);
    const setTag = (tag: string) =>
      fs.writeFileSync(path.join(root, file), new ValuesFile(file, fs.readFileSync(path.join(root, file), 'utf8')).edited((document) => document.setIn(['image', 'tag'], tag)));
    setTag(next);
    commitAll(root, 'next');
    setTag(first);
    commitAll(root, 'back');
    const history = readRunHistory(root, file);
    expect(history).toMatchObject({ file, committed: true, ran: [first, next], neverServed: [], shallow: false, uncommitted: false });
    setTag(next);
    expect(readRunHistory(root, file).uncommitted).toBe(true);
  });

  it('refuses a rollback in a project without git history, naming the rule', () => {
    const root = copy();
    const environments = loadEnvironments(readValuesTexts(root));
    const testing = environments.find((environment) => environment.name === 'testing')!;
    const tag = runningTagOf(firstApplication(testing));
    const plan = () => planRollback(environments, 'testing', root, tag, firstApplication(testing).name);
    expect(plan).toThrow(RefusedError);
    expect(plan).toThrow(`rollback goes only to a tag testing ran before, read from the git history of ${applicationValuesPath('testing', firstApplication(testing).name)}, and this project is not a git work tree with commits`);
  });
});
