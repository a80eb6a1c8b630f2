import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS } from '../../src/commands/ops';
import { CANARY } from '../../src/contract/contract';
import { FLAGGER_LOAD_TESTER } from '../../src/contract/choices';
import { freePort } from '../../e2e/loopback';
import { locateToolchain } from '../../toolchain';
import { FakeApiServer } from '../fake-api-server';
import { committedObjects, findObject, ROOT, runInProcess, temporaryDirectory } from '../support';

// `npm run ops -- canary` (1.4 canary steps 2-4) against Flagger's own load tester (built by
// toolchain/build.sh from fluxcd/flagger at the platform's release, on loopback): the gates it opens and closes
// are the ones the real load tester answers Flagger's checks with. The Canary itself is the one
// production renders, with the status and events Flagger writes, served by a read-only fake API
// server; Flagger's own initialization and rollback of a canary on the e2e cluster are tested in
// test/e2e/published-charts.test.ts.

const loadTesterBinary = locateToolchain(ROOT).bin('flagger-loadtester', 'loadtester');
const dir = temporaryDirectory('platform-gitops-canary-');
const api = new FakeApiServer();
let loadTester: ChildProcess | undefined;
let loadTesterUrl = '';
let kubeconfig = '';

const rendered = findObject(committedObjects('production'), 'Canary', 'webapp');
const canary = { name: rendered.metadata.name, namespace: rendered.metadata.namespace! };

beforeAll(async () => {
  kubeconfig = await api.start(dir);
  const port = await freePort();
  loadTester = spawn(loadTesterBinary, [`-port=${port}`, '-log-level=info'], { stdio: 'ignore' });
  loadTesterUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!(await fetch(`${loadTesterUrl}/healthz`).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline) throw new Error('the load tester did not answer /healthz');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  api.objects = {
    Canary: [
      {
        ...rendered,
        status: {
          phase: 'Progressing',
          canaryWeight: 20,
          failedChecks: 1,
          iterations: 0,
          conditions: [{ type: 'Promoted', status: 'Unknown', reason: 'Progressing', message: 'New revision detected, progressing canary analysis.' }],
        },
      },
    ],
    Event: [
      { metadata: { name: 'e1', namespace: canary.namespace }, type: 'Normal', reason: 'Synced', message: 'Advance webapp.webapp canary weight 20', lastTimestamp: '2026-11-26T10:00:30Z', involvedObject: { kind: 'Canary', name: 'webapp' } },
      { metadata: { name: 'e0', namespace: canary.namespace }, type: 'Normal', reason: 'Synced', message: 'Starting canary analysis for webapp.webapp', lastTimestamp: '2026-11-26T10:00:00Z', involvedObject: { kind: 'Canary', name: 'webapp' } },
      { metadata: { name: 'e2', namespace: canary.namespace }, type: 'Warning', reason: 'Synced', message: 'Halt webapp.webapp advancement request-success-rate 98.10 < 99', lastTimestamp: '2026-11-26T10:01:00Z', involvedObject: { kind: 'Canary', name: 'webapp' } },
    ],
  };
});
afterAll(async () => {
  loadTester?.kill('SIGKILL');
  await api.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// Opening or closing a gate changes production: the production gate wants --confirm (src/commands/ops/production-gate.ts).
const GATE_ACTIONS = ['--promote', '--rollback', '--close'];
const ops = (...args: string[]) =>
  runInProcess(OPS, ['canary', '--env', 'production', '--load-tester-url', loadTesterUrl, ...(args.some((arg) => GATE_ACTIONS.includes(arg)) ? ['--confirm', 'production'] : []), ...args], ROOT, { KUBECONFIG: kubeconfig });
/** What the load tester answers Flagger's check of a gate: 200 open, 403 closed. */
const flaggerChecks = async (path: string) => (await fetch(`${loadTesterUrl}${path}`, { method: 'POST', body: JSON.stringify(canary) })).status;

describe('npm run ops -- canary, on Flagger\'s load tester', () => {
  it('describes the Canary: its phase and weight, the contract\'s analysis and thresholds, the last event of each metric, both gates closed', async () => {
    const run = await ops();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('Canary webapp/webapp: Progressing, weight 20%, failed checks 1/5, iterations 0');
    expect(run.stdout).toContain(`analysis: every ${CANARY.analysis.interval}, ${CANARY.analysis.stepWeight}% steps up to ${CANARY.analysis.maxWeight}%, rolled back after ${CANARY.analysis.threshold} failed checks`);
    expect(run.stdout).toMatch(/metric request-success-rate: >= 99 over 1m; last: 2026-11-26T10:01:00Z Warning Synced: Halt webapp\.webapp advancement request-success-rate 98\.10 < 99/);
    expect(run.stdout).toMatch(/metric request-duration: <= 500 over 30s; last: no event names it yet/);
    expect(run.stdout).toContain('gates: promotion closed, rollback closed');
    // Events oldest first.
    expect(run.stdout.indexOf('Starting canary analysis')).toBeLessThan(run.stdout.indexOf('Advance webapp.webapp'));
  });

  it('opens the promotion gate, which the load tester then approves for Flagger, and closes both again', async () => {
    expect(await flaggerChecks(FLAGGER_LOAD_TESTER.gates.promotion.check)).toBe(403);
    const promote = await ops('--promote', '--output', 'json');
    expect(promote.status, promote.stderr).toBe(0);
    expect(JSON.parse(promote.stdout).gates).toEqual({ promotion: true, rollback: false });
    expect(await flaggerChecks(FLAGGER_LOAD_TESTER.gates.promotion.check)).toBe(200);
    expect(await flaggerChecks(FLAGGER_LOAD_TESTER.gates.rollback.check)).toBe(403);

    const close = await ops('--close');
    expect(close.status, close.stderr).toBe(0);
    expect(close.stdout).toContain('gates: promotion closed, rollback closed');
    expect(await flaggerChecks(FLAGGER_LOAD_TESTER.gates.promotion.check)).toBe(403);
  });

  it('opens the rollback gate, which the load tester then approves for Flagger', async () => {
    const rollback = await ops('--rollback');
    expect(rollback.status, rollback.stderr).toBe(0);
    expect(rollback.stdout).toContain('rollback gate opened: Flagger rolls back at its next check');
    expect(await flaggerChecks(FLAGGER_LOAD_TESTER.gates.rollback.check)).toBe(200);
    await ops('--close');
    expect(await flaggerChecks(FLAGGER_LOAD_TESTER.gates.rollback.check)).toBe(403);
  });

  it('fails a watch that the analysis does not finish in time, and refuses an application of another strategy or two actions', async () => {
    const watch = await ops('--watch', '--timeout', '3');
    expect(watch.status).toBe(1);
    expect(watch.stdout).toContain('FAIL: Canary webapp/webapp: not done within 3 s (Progressing, weight 20%, failed checks 1)');
    const rolling = await runInProcess(OPS, ['canary', '--env', 'local', '--app', 'webapp', '--load-tester-url', loadTesterUrl], ROOT, { KUBECONFIG: kubeconfig });
    expect(rolling.status).toBe(1);
    expect(rolling.stderr).toContain('local: webapp uses the rolling strategy, not canary');
    const both = await ops('--promote', '--rollback');
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('give one of --promote, --rollback and --close');
  });
});
