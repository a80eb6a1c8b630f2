import * as fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openRun } from '../e2e/run-scope';
import type { KubeClient } from '../e2e/kube-client';
import type { LiveContainers } from '../e2e/live-containers';

// Unit tests of the e2e harness's own logic; test/e2e/ runs it on the real engines.

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const listeners = () => SIGNALS.map((signal) => process.listenerCount(signal));

/** A run's scope with every stop it makes recorded, in order. */
function recordedRun(keep = false) {
  const stops: string[] = [];
  const lines: string[] = [];
  const scope = openRun({ options: { environment: 'local', projectRoot: '.', keep }, log: (line) => lines.push(line) });
  scope.watching({ close: () => stops.push('watch') } as unknown as KubeClient);
  scope.containersStarted({ close: async () => void stops.push('containers') } as unknown as LiveContainers);
  scope.servingCharts({ close: async () => void stops.push('charts') });
  scope.controllersRunning(
    (async () => {
      while (!scope.stopControllers()) await new Promise((resolve) => setTimeout(resolve, 5));
      stops.push('controllers');
    })(),
  );
  scope.dryRunRunning(
    (async () => {
      while (!scope.ending()) await new Promise((resolve) => setTimeout(resolve, 5));
      stops.push('dry-run');
    })(),
  );
  return { scope, stops, lines };
}

describe("an e2e run's end (e2e/run-scope.ts)", () => {
  afterEach(() => vi.restoreAllMocks());

  it('stops what the run started in order, once, removes its folder and stops handling the stop signals', async () => {
    const before = listeners();
    const { scope, stops } = recordedRun();
    expect(listeners()).toEqual(before.map((count) => count + 1));
    expect(fs.existsSync(scope.dir)).toBe(true);
    await Promise.all([scope.end(), scope.end()]);
    expect(stops).toEqual(['controllers', 'watch', 'containers', 'dry-run', 'charts']);
    expect(fs.existsSync(scope.dir)).toBe(false);
    expect(listeners()).toEqual(before);
  });

  it('keeps the folder with --keep, and says where', async () => {
    const { scope, lines } = recordedRun(true);
    await scope.end();
    expect(fs.existsSync(scope.dir)).toBe(true);
    expect(lines).toEqual([`run folder kept: ${scope.dir} (logs in ${scope.supervisor.logDir})`]);
    fs.rmSync(scope.dir, { recursive: true, force: true });
  });

  it('on a stop signal, cleans up and exits 130; a second signal during the cleanup exits at once', async () => {
    const exits: { code: string | number | null | undefined; cleaned: boolean }[] = [];
    const { scope, stops } = recordedRun();
    vi.spyOn(process, 'exit').mockImplementation(((code?: string | number | null) => {
      exits.push({ code, cleaned: !fs.existsSync(scope.dir) });
    }) as typeof process.exit);
    process.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([]);
    process.emit('SIGINT', 'SIGINT');
    // The second signal exits before the cleanup has ended.
    expect(exits).toEqual([{ code: 130, cleaned: false }]);
    // The run's own `finally` awaits the same cleanup, then stops handling the signals.
    await scope.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(stops).toEqual(['controllers', 'watch', 'containers', 'dry-run', 'charts']);
    expect(fs.existsSync(scope.dir)).toBe(false);
    // The first signal's exit, once the cleanup ended (the mocked exit returns, so the second handler's cleanup wait exits too).
    expect(exits.slice(1)).toContainEqual({ code: 130, cleaned: true });
    expect(exits.every((exit) => exit.code === 130)).toBe(true);
  });
});
