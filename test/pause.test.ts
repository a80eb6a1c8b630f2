import { describe, expect, it } from 'vitest';
import { REFRESH_ANNOTATION } from '../src/cluster/argo-cd';
import { OPS } from '../src/commands/ops';
import { SYNC_PAUSE_ANNOTATIONS } from '../src/contract/choices';
import { applicationChartId } from '../src/contract/layout';
import { loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { argoCdCompares, argoCdTerminates } from './argo-cd-stand-in';
import { fakeApiServerForTests } from './fake-api-server';
import { ROOT, runInProcess } from './support';

// Pausing automated sync does not stop an operation Argo CD started, nor one it decided on
// before it saw the pause: the controller writes an automated sync's operation without reading
// the policy again (argo-cd v3.6.1 util/argo/argo.go, SetAppOperation), and retries a failed
// one whatever the policy (controller/appcontroller.go, processRequestedAppOperation). A pause
// is in force once Argo CD has compared the Application with automated sync off and no
// automated sync runs.
describe('ops pause: each pause in force before the next', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-pause-');
  const namespace = loadPlatform().controller.namespace;
  const environment = loadEnvironments().find((candidate) => candidate.name === 'local')!;
  const name = applicationChartId(environment.applications[0]!.name);
  const automated = { syncPolicy: { automated: { prune: true, selfHeal: true } } };
  const application = (app: string, extra: object = {}) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: app, namespace, annotations: {}, resourceVersion: '7' }, spec: structuredClone(automated), status: {}, ...extra });
  const automatedSync = { initiatedBy: { automated: true }, sync: { prune: true }, retry: { limit: 5 } };
  /** What the stand-in controller did, in order, for the tests that look at the order. */
  const events: string[] = [];
  const serve = (app: object) => {
    api.objects = { Application: [application('root'), app] };
    api.patches.length = 0;
    events.length = 0;
  };
  const live = () => api.objects['Application']![1]!;
  /** The controller compares a paused Application a moment later, as it does after reading the change from its watch. */
  const comparesLater = (kind: string, app: any, body: any) => {
    if (body.spec?.syncPolicy?.automated?.enabled === false) {
      events.push(`${app.metadata.name} paused`);
      setTimeout(() => {
        argoCdCompares(kind, app);
        events.push(`${app.metadata.name} compared`);
      }, 1500);
    }
  };
  const pause = (...args: string[]) => runInProcess(OPS, ['pause', '--env', 'local', '--app', environment.applications[0]!.name, '--reason', 'INC-9', '--by', 'ana', ...args], ROOT, { KUBECONFIG: kubeconfig() });

  it('waits until Argo CD compared each Application with automated sync off, the root before the application', async () => {
    serve(application(name));
    api.afterPatch = comparesLater;
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    expect(events).toEqual(['root paused', 'root compared', `${name} paused`, `${name} compared`]);
    expect(api.patches.map((patch) => [patch.name, patch.body])).toEqual(
      ['root', name].map((app) => [app, { metadata: { annotations: { [SYNC_PAUSE_ANNOTATIONS.by]: 'ana', [SYNC_PAUSE_ANNOTATIONS.reason]: 'INC-9', [REFRESH_ANNOTATION]: 'normal' } }, spec: { syncPolicy: { automated: { enabled: false } } } }]),
    );
    expect(run.stdout).toContain('pause of Application root: waiting for Argo CD to compare it with automated sync off');
    expect(run.stdout).toContain(`Application ${name}: paused\n`);
  });

  it('terminates an automated sync still running, a retry awaited included, as argocd app terminate-op does, and waits for its end', async () => {
    serve(application(name, { operation: automatedSync, status: { operationState: { phase: 'Running', operation: automatedSync, retryCount: 1, finishedAt: '2026-02-01T00:00:00Z', message: 'one or more objects failed to apply. Retrying attempt #1' } } }));
    api.afterPatch = (kind, app, body) => {
      argoCdCompares(kind, app);
      if (body.status?.operationState?.phase === 'Terminating') setTimeout(() => argoCdTerminates(kind, app), 1500);
    };
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    expect(api.patches.at(-1)).toEqual({ kind: 'Application', name, body: { metadata: { resourceVersion: '7' }, status: { operationState: { phase: 'Terminating' } } } });
    expect(live().status.operationState).toMatchObject({ phase: 'Failed', message: 'Operation terminated' });
    expect(run.stdout).toContain(`pause of Application ${name}: waiting for the automated sync to end`);
    expect(run.stdout).toContain(`Application ${name}: paused; the automated sync that was running terminated`);
  });

  it('terminates an automated sync Argo CD decided on before it saw the pause, once it has started', async () => {
    serve(application(name));
    api.afterPatch = (kind, app, body) => {
      if (app.metadata.name === name && body.spec?.syncPolicy?.automated?.enabled === false) {
        // The comparison that began before the pause ends with its automated sync written, then the next one sees the pause.
        app.operation = automatedSync;
        setTimeout(() => argoCdCompares(kind, app), 500);
        setTimeout(() => (app.status.operationState = { phase: 'Running', operation: automatedSync, startedAt: '2026-02-01T00:00:00Z' }), 1500);
      } else argoCdCompares(kind, app);
      if (body.status?.operationState?.phase === 'Terminating') argoCdTerminates(kind, app);
    };
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`pause of Application ${name}: waiting for the automated sync to start, to terminate it`);
    expect(run.stdout).toContain(`Application ${name}: paused; the automated sync that was running terminated`);
    expect(live().operation).toBeUndefined();
  });

  it('waits for a sync a person started, and does not terminate it', async () => {
    const byBob = { initiatedBy: { username: 'bob' }, sync: {} };
    serve(application(name, { operation: byBob, status: { operationState: { phase: 'Running', operation: byBob } } }));
    api.afterPatch = (kind, app) => {
      argoCdCompares(kind, app);
      if (app.metadata.name === name) {
        setTimeout(() => {
          app.status.operationState = { phase: 'Succeeded', operation: byBob, finishedAt: '2026-02-01T00:00:00Z' };
          delete app.operation;
        }, 2000);
      }
    };
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`pause of Application ${name}: waiting for the sync bob started to end (Running)`);
    expect(run.stdout).toContain(`Application ${name}: paused\n`);
    expect(api.patches.filter((patch) => patch.body.status !== undefined)).toEqual([]);
  });

  it('refuses, naming the Application and what stays paused, when Argo CD does not compare it in time; nothing after it is paused (exit 1)', async () => {
    serve(application(name));
    api.afterPatch = () => undefined;
    const run = await pause('--timeout', '2');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'Application root: automated sync is off, but the pause is not in force: not done within 2 s (waiting for Argo CD to compare it with automated sync off); automated sync stays paused (root), nothing else was changed',
    );
    expect(api.patches.map((patch) => patch.name)).toEqual(['root']);
  });

  it('refuses a --timeout that is not a whole number of seconds before touching the cluster (exit 2)', async () => {
    serve(application(name));
    const before = api.requests.length;
    const run = await pause('--timeout', '0');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--timeout "0" must be a whole number of seconds, at least 1');
    expect(api.requests.length).toBe(before);
  });
});
