import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../src/cluster/connection';
import { crashingContainers, exampleFixPatch, limitsOf } from '../src/cluster/crash-loops';
import { EXAMPLE_FIX } from '../src/contract/contract';

// Contract 7, "pod in CrashLoopBackOff", and the example fix of the limits table (8): memory
// 1Gi, CPU 500m, liveness initial delay 60 s, which `npm run ops -- emergency crashloop --fix`
// applies (test/e2e/ops-scenario.mjs runs it on the e2e cluster).

const deployment = (container: Record<string, unknown>): LiveObject =>
  ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'webapp' }, spec: { template: { spec: { containers: [{ name: 'sidecar' }, { name: 'webapp', ...container }] } } } }) as LiveObject;

describe('a crash loop', () => {
  it('is a container waiting in CrashLoopBackOff, or restarted and not ready, with how its last run ended', () => {
    const pod = {
      metadata: { name: 'webapp-1' },
      status: {
        containerStatuses: [
          { name: 'webapp', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2026-11-26T10:00:00Z' } } },
          { name: 'sidecar', ready: true, restartCount: 1, state: { running: {} } },
        ],
      },
    } as unknown as LiveObject;
    expect(crashingContainers([pod])).toEqual([{ pod: 'webapp-1', container: 'webapp', restarts: 4, waiting: 'CrashLoopBackOff', lastExit: 'OOMKilled (exit 137) at 2026-11-26T10:00:00Z' }]);
  });

  it("raises the container's limits and liveness delay to the contract's example, never lowers them", () => {
    expect(EXAMPLE_FIX).toEqual({ memoryLimit: '1Gi', cpuLimit: '500m', livenessInitialDelaySeconds: 60 });
    const low = deployment({ resources: { limits: { memory: '256Mi', cpu: '200m' } }, livenessProbe: { initialDelaySeconds: 30 } });
    expect(exampleFixPatch(low, 'webapp')).toEqual([
      { op: 'add', path: '/spec/template/spec/containers/1/resources/limits/memory', value: '1Gi' },
      { op: 'add', path: '/spec/template/spec/containers/1/resources/limits/cpu', value: '500m' },
      { op: 'add', path: '/spec/template/spec/containers/1/livenessProbe/initialDelaySeconds', value: 60 },
    ]);
    const high = deployment({ resources: { limits: { memory: '2Gi', cpu: '1' } }, livenessProbe: { initialDelaySeconds: 90 } });
    expect(exampleFixPatch(high, 'webapp')).toEqual([]);
    expect(limitsOf(high, 'webapp')).toEqual({ memory: '2Gi', cpu: '1', livenessInitialDelaySeconds: 90 });
    // No limit is no limit, and no probe is invented: nothing to raise.
    expect(exampleFixPatch(deployment({}), 'webapp')).toEqual([]);
    expect(() => exampleFixPatch(deployment({}), 'other')).toThrow('Deployment webapp has no container other');
  });
});
