import { describe, expect, it } from 'vitest';
import { OPS } from '../src/commands/ops';
import { loadPlatform } from '../src/environments/platform';
import { fakeApiServerForTests } from './fake-api-server';
import { ROOT, runInProcess } from './support';

// Right after `ops resume`, Argo CD's automated sync may already run: `ops sync` awaits it (as
// `argocd app wait` judges an operation in progress), starts its own when that one did not
// deploy the revision git names now, then goes on as usual.
describe('ops sync: joins a sync already running', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-sync-join-');
  const namespace = loadPlatform().controller.namespace;
  const name = 'envoy-gateway';
  const [first, second] = ['1'.repeat(40), '2'.repeat(40)];
  const automated = { initiatedBy: { automated: true }, sync: { revision: first } };
  /** An Application whose automated sync of `first` runs, while git names `gitRevision`. */
  const serve = (gitRevision: string, ending: 'Succeeded' | 'Failed' = 'Succeeded') => {
    api.objects = {
      Application: [
        {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Application',
          metadata: { name, namespace, annotations: {}, resourceVersion: '3' },
          spec: {},
          operation: automated,
          status: { sync: { status: 'OutOfSync', revision: gitRevision }, operationState: { phase: 'Running', operation: automated, startedAt: '2026-02-01T00:00:00Z' } },
        },
      ],
    };
    api.patches.length = 0;
    let reads = 0;
    // The stand-in controller ends the running sync after a few reads, compares, and runs the syncs it is asked for at once.
    api.afterRead = (kind, app) => {
      if (kind !== 'Application' || ++reads !== 3) return;
      delete app.operation;
      app.status.operationState = { ...app.status.operationState, phase: ending, message: ending === 'Failed' ? 'one or more objects failed to apply' : 'successfully synced', finishedAt: '2026-02-01T00:00:05Z', syncResult: { revision: first } };
      app.status.sync = { status: gitRevision === first && ending === 'Succeeded' ? 'Synced' : 'OutOfSync', revision: gitRevision };
      app.status.reconciledAt = '2026-02-01T00:00:06Z';
    };
    api.afterPatch = (kind, app, body) => {
      if (kind !== 'Application' || body.operation === undefined) return;
      app.status.operationState = { phase: 'Succeeded', message: 'successfully synced', operation: app.operation, startedAt: '2026-02-01T00:00:07Z', finishedAt: '2026-02-01T00:00:08Z', syncResult: { revision: gitRevision } };
      app.status.sync = { status: 'Synced', revision: gitRevision };
      app.status.reconciledAt = '2026-02-01T00:00:09Z';
      delete app.operation;
    };
  };
  const sync = () => runInProcess(OPS, ['sync', '--env', 'local', '--application', name, '--by', 'ana', '--sync-timeout', '20'], ROOT, { KUBECONFIG: kubeconfig() });

  it('awaits the running sync and starts none of its own when it deployed the revision git names', async () => {
    serve(first);
    const run = await sync();
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`ops sync: Application ${name} has a sync operation in progress (by automated): awaiting it`);
    expect(run.stdout).toContain(`it deployed ${first.slice(0, 7)}, the revision git names: no sync of its own`);
    expect(api.patches.filter((patch) => patch.body.operation !== undefined)).toEqual([]);
  });

  it('starts its own sync once the running one is over, when git moved meanwhile', async () => {
    serve(second);
    const run = await sync();
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const operations = api.patches.filter((patch) => patch.body.operation !== undefined);
    expect(operations).toHaveLength(1);
    expect(operations[0]!.body.operation.initiatedBy).toEqual({ username: 'ana' });
    expect(run.stdout).toContain(`git names ${second.slice(0, 7)} now: a sync of its own`);
  });

  it('starts its own sync when the running one failed', async () => {
    serve(first, 'Failed');
    const run = await sync();
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(api.patches.filter((patch) => patch.body.operation !== undefined)).toHaveLength(1);
    expect(run.stdout).toContain('it ended Failed: a sync of its own');
  });
});
