import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { runningTagOf } from '../../src/environments/strategy-registry';
import { commitAll, commitCopy, copyEnvironments, newerTag as newerTagOf, projectCopy, runInCopy } from '../project-copy';
import { firstApplication } from '../support';
import { ENGINE_MEMO_VARIABLE } from '../engine-memo';

/**
 * The whole program in a copy of the project, committed in its own git repository: every
 * command runs as a person runs it (node scripts/run.cjs), then part of the suite re-runs on
 * the copy. Slow by nature, so it is `npm run test:integration`, not in `test:unit`.
 */
let root: string;
/** The engines' renders the unit runs share (test/engine-memo.ts), in the test run's folder. */
const engineMemo = path.join(inject('runFolder'), 'readme-flows-engine-memo');

/** The copy's environments by name. */
function environments() {
  return copyEnvironments(root);
}

/** A tag newer than every tag the copy runs. */
function newerTag(): string {
  return newerTagOf(root);
}

function run(command: string, args: readonly string[]) {
  return runInCopy(root, command, args);
}

function commit(message: string): void {
  commitAll(root, message);
}

beforeEach(() => {
  root = projectCopy();
  commitCopy(root);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/**
 * The unit suite on the copy, as committed now: every state a flow passes through (a new
 * unit beside the active one included) is a state the project may be committed in, and the
 * tests pin the contract and behaviour, never release data, so they pass in each.
 *
 * One worker: this runs beside the e2e tier, which bounds npm test's wall time, on a machine
 * whose cores the two are sharing, and each worker imports the whole module graph once
 * (vitest.config.mts: isolate false). The unit suite here (2026-11-29, alone): 55.7 CPU-s in
 * 33 s with the config's three workers, 44.4 in 37 s with two, 41.3 in 64 s with one; five
 * states save about 70 CPU-s against three workers, and the file still ends long before the
 * e2e files do. The five runs share one memo of the engines' renders (test/engine-memo.ts):
 * helm's of the real charts and kustomize's of Argo CD, a quarter of a run's CPU (27 of 104
 * CPU-s, 2026-12-02), which the flows change no input of; a render whose inputs a step changed
 * runs again.
 */
function unitSuitePasses(state: string): void {
  const tests = spawnSync(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--exclude', 'test/e2e/**', '--exclude', 'test/integration/**', '--maxWorkers=1'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, [ENGINE_MEMO_VARIABLE]: engineMemo },
  });
  expect(tests.status, `the unit suite after "${state}":\n${`${tests.stdout}\n${tests.stderr}`.slice(-4000)}`).toBe(0);
}

describe("the README's flows, in a copy of the project", () => {
  it('releases to testing, promotes to staging through the three blue-green steps and to production; the unit suite passes after every step', () => {
    // The suite and everything else the project tracks that the copy lacks (tests, docs, secrets,
    // schemas), so that the suite runs on the copy unchanged.
    const project = path.join(__dirname, '..', '..');
    const tracked = spawnSync('git', ['-C', project, 'ls-files', '-z'], { encoding: 'utf8' }).stdout.split('\0').filter((file) => file !== '');
    for (const entry of new Set(tracked.map((file) => file.split('/')[0]!))) {
      if (!fs.existsSync(path.join(root, entry))) fs.cpSync(path.join(project, entry), path.join(root, entry), { recursive: true });
    }
    commit('the suite');
    const tag = newerTag();
    const step = (entry: string, args: readonly string[], message: string) => {
      const result = run(entry, args);
      expect(result.stderr, `${entry} ${args.join(' ')}`).toBe('');
      expect(result.status).toBe(0);
      commit(message);
      expect(run('synth', ['--check']).status).toBe(0);
      unitSuitePasses(message);
    };
    step('release', ['--env', 'testing', '--tag', tag], `testing: run ${tag}`);
    step('promote', ['--from', 'testing', '--to', 'staging'], `staging: ${tag} beside the active unit`);
    const active = firstApplication(environments().staging!).strategy;
    const switched = run('switch', ['--env', 'staging']);
    expect(switched.status, switched.stderr).toBe(0);
    // Two blue-green steps in one commit are refused: the guard reads dist/ of HEAD, not the working tree.
    const tooSoon = run('retire', ['--env', 'staging']);
    expect(tooSoon.status).toBe(1);
    expect(tooSoon.stderr).toContain(`is the unit the committed Service still selects (dist/staging/${firstApplication(environments().staging!).name}.yaml in HEAD)`);
    commit('staging: switch traffic');
    unitSuitePasses('staging: switch traffic');
    step('retire', ['--env', 'staging'], 'staging: retire the old unit');
    step('promote', ['--from', 'staging', '--to', 'production'], `production: run ${tag}`);

    const after = environments();
    for (const name of ['testing', 'staging', 'production']) expect(runningTagOf(firstApplication(after[name]!))).toBe(tag);
    expect(active.type).toBe('blue-green');
  }, 1_800_000);
});
