import { describe, expect, it } from 'vitest';
import { applicationGenerations, REFRESH_ANNOTATION, REFRESH_TIMESTAMP_ANNOTATION } from '../src/cluster/argo-cd';
import { OPS } from '../src/commands/ops';
import { SYNC_PAUSE_ANNOTATIONS } from '../src/contract/choices';
import { TRACKING_ANNOTATION } from '../src/contract/upstream';
import { compareText } from '../src/base/text-order';
import type { LiveObject } from '../src/cluster/connection';
import { applicationChartId } from '../src/contract/layout';
import { loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { applicationControllerPod, argoCdCompares, argoCdTerminates } from './argo-cd-stand-in';
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
  const serve = (app: object, controllerReady = true) => {
    api.objects = { Application: [application('root'), app], Pod: controllerReady ? [applicationControllerPod(namespace)] : [] };
    api.patches.length = 0;
    api.afterRead = () => undefined;
    events.length = 0;
  };
  const live = () => api.objects['Application']![1]!;
  const pausePatch = (app: string) => ({
    kind: 'Application',
    name: app,
    body: {
      metadata: { annotations: { [SYNC_PAUSE_ANNOTATIONS.by]: 'ana', [SYNC_PAUSE_ANNOTATIONS.reason]: 'INC-9', [REFRESH_ANNOTATION]: 'normal', [REFRESH_TIMESTAMP_ANNOTATION]: expect.any(String) } },
      spec: { syncPolicy: { automated: { enabled: false } } },
    },
  });
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
    expect(api.patches).toEqual([pausePatch('root'), pausePatch(name)]);
    expect(run.stdout).toContain('pause of Application root: waiting for Argo CD to compare it with automated sync off');
    expect(run.stdout).toContain(`Application ${name}: paused\n`);
  });

  it('asks for the refresh again when a comparison that began before the pause removed it, and waits for one that read the pause', async () => {
    serve(application(name));
    api.afterPatch = (kind, app, body) => {
      if (app.metadata.name !== name) return argoCdCompares(kind, app);
      if (body.spec?.syncPolicy?.automated?.enabled === false) {
        // That comparison read the Application before the pause: it removes the refresh annotation alone (its copy had no timestamp).
        delete app.metadata.annotations[REFRESH_ANNOTATION];
        events.push('earlier comparison ended');
      } else if (body.metadata?.annotations?.[REFRESH_ANNOTATION] === 'normal') {
        setTimeout(() => {
          argoCdCompares(kind, app);
          events.push('comparison of the pause ended');
        }, 500);
      }
    };
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    expect(events).toEqual(['earlier comparison ended', 'comparison of the pause ended']);
    expect(api.patches.filter((patch) => patch.name === name).map((patch) => patch.body)).toEqual([pausePatch(name).body, { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } }]);
    expect(live().metadata.annotations).toEqual({ [SYNC_PAUSE_ANNOTATIONS.by]: 'ana', [SYNC_PAUSE_ANNOTATIONS.reason]: 'INC-9' });
  });

  it('terminates an automated sync still running, a retry awaited included, as argocd app terminate-op does, and waits for its end', async () => {
    const running = { phase: 'Running', operation: automatedSync, startedAt: '2026-02-01T00:00:00Z', retryCount: 1, finishedAt: '2026-02-01T00:00:10Z', message: 'one or more objects failed to apply. Retrying attempt #1' };
    serve(application(name, { operation: automatedSync, status: { operationState: running } }));
    api.afterPatch = (kind, app, body) => {
      argoCdCompares(kind, app);
      if (body.status?.operationState?.phase === 'Terminating') setTimeout(() => argoCdTerminates(kind, app), 1500);
    };
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    // Written at the resourceVersion it was read at (the pause's own patch made it 8).
    expect(api.patches.at(-1)).toEqual({ kind: 'Application', name, body: { metadata: { resourceVersion: '8' }, status: { operationState: { phase: 'Terminating' } } } });
    expect(live().status.operationState).toMatchObject({ phase: 'Failed', message: 'Operation terminated' });
    expect(run.stdout).toContain(`pause of Application ${name}: waiting for the automated sync to end`);
    expect(run.stdout).toContain(`Application ${name}: paused; the automated sync that was running terminated`);
  });

  it('writes the termination again when the Application changed after it was read (409)', async () => {
    const running = { phase: 'Running', operation: automatedSync, startedAt: '2026-02-01T00:00:00Z' };
    serve(application(name, { operation: automatedSync, status: { operationState: running } }));
    let conflicts = 0;
    let reads = 0;
    api.afterPatch = (kind, app) => {
      argoCdCompares(kind, app);
      argoCdTerminates(kind, app);
    };
    // The controller writes the status once between the termination's read and its write: the
    // pause's look is the first read of the paused Application, the termination's the second.
    api.afterRead = (kind, app) => {
      if (kind !== 'Application' || app.metadata.name !== name || app.spec.syncPolicy.automated.enabled !== false || ++reads !== 2) return;
      conflicts++;
      app.metadata.resourceVersion = String(Number(app.metadata.resourceVersion) + 1);
    };
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    const terminations = api.patches.filter((patch) => patch.body.status !== undefined);
    expect(conflicts).toBe(1);
    expect(terminations).toHaveLength(2);
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
      argoCdTerminates(kind, app);
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

  it("does not terminate a person's sync that started after the automated one it saw ended", async () => {
    const byBob = { initiatedBy: { username: 'bob' }, sync: {} };
    serve(application(name, { operation: automatedSync, status: { operationState: { phase: 'Running', operation: automatedSync, startedAt: '2026-02-01T00:00:00Z' } } }));
    api.afterPatch = (kind, app) => argoCdCompares(kind, app);
    // Between the pause's look (the automated sync Running) and its termination, that sync ends and bob starts his.
    let swapped = false;
    api.afterRead = (kind, app) => {
      if (kind !== 'Application' || app.metadata.name !== name || app.spec.syncPolicy.automated.enabled !== false || swapped) return;
      swapped = true;
      app.operation = byBob;
      app.status.operationState = { phase: 'Running', operation: byBob, startedAt: '2026-02-01T00:01:00Z' };
      setTimeout(() => {
        app.status.operationState = { ...app.status.operationState, phase: 'Succeeded', finishedAt: '2026-02-01T00:01:30Z' };
        delete app.operation;
      }, 1500);
    };
    const run = await pause();
    expect(run.status, run.stderr).toBe(0);
    expect(api.patches.filter((patch) => patch.body.status !== undefined)).toEqual([]);
    expect(live().status.operationState.phase).toBe('Succeeded');
    expect(run.stdout).toContain(`Application ${name}: paused\n`);
  });

  it("writes the pauses and does not wait for them when Argo CD's application controller has no ready pod", async () => {
    serve(application(name), false);
    api.afterPatch = () => undefined;
    const run = await pause('--timeout', '2');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Argo CD's application controller has no ready pod in ${namespace}: nothing syncs while it is down, and it reads the pauses when it is back; they are not awaited`);
    expect(api.patches).toEqual([pausePatch('root'), pausePatch(name)]);
    expect(run.stdout).toContain(`Application ${name}: paused\n`);
  });

  it('changes nothing and asks nothing of the controller where no Application has automated sync (production)', async () => {
    const manual = (app: string) => ({ ...application(app), spec: {} });
    serve(manual(name), false);
    api.objects['Application'] = [manual('root'), manual(name)];
    api.requests.length = 0;
    const run = await pause('--timeout', '2');
    expect(run.status, run.stderr).toBe(0);
    expect(api.patches).toEqual([]);
    expect(api.requests.filter((request) => request.includes('/pods'))).toEqual([]);
    expect(run.stdout).not.toContain('no ready pod');
    expect(run.stdout).toContain(`Application ${name}: manual sync (nothing to pause)\n`);
    expect(run.stdout).toContain('nothing was paused: no Application in scope has automated sync');
    expect(run.stdout).not.toContain('undo with');
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

  // argo-cd v3.6.1 controller/appcontroller.go, autoSync: a revision whose automated sync failed is not synced again by itself.
  it('resumes, and names the sync that puts git back where the last automated sync failed (a terminated one)', async () => {
    const terminated = { phase: 'Failed', message: 'Operation terminated (retried 1 times).', operation: automatedSync, finishedAt: '2026-02-01T00:00:00Z' };
    const paused = { syncPolicy: { automated: { prune: true, selfHeal: true, enabled: false } } };
    serve(application(name, { spec: paused, status: { operationState: terminated } }));
    api.objects['Application']![0]!.spec = structuredClone(paused);
    const run = await runInProcess(OPS, ['resume', '--env', 'local', '--app', environment.applications[0]!.name], ROOT, { KUBECONFIG: kubeconfig() });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `Application ${name}: resumed; its last automated sync failed (Operation terminated (retried 1 times).), and Argo CD does not sync that revision again by itself until git moves: npm run ops -- sync --env local --application ${name} puts git's state back`,
    );
    expect(run.stdout).toContain('Application root: resumed\n');
    expect(live().spec.syncPolicy.automated.enabled).toBeUndefined();
  });

  it('pauses the whole environment parent before child, by the tracking annotation, and the Applications of one generation together', async () => {
    // root applied infrastructure and the application's Application; infrastructure applied a release.
    const tracked = (app: string, by: string) => application(app, { metadata: { name: app, namespace, resourceVersion: '7', annotations: { [TRACKING_ANNOTATION]: `${by}:argoproj.io/Application:${namespace}/${app}` } } });
    serve(application(name));
    api.objects['Application'] = [tracked('cert-manager', 'infrastructure'), tracked('infrastructure', 'root'), application('root'), tracked(name, 'root')];
    api.afterPatch = comparesLater;
    const run = await runInProcess(OPS, ['pause', '--env', 'local', '--reason', 'INC-9', '--by', 'ana'], ROOT, { KUBECONFIG: kubeconfig() });
    expect(run.status, run.stderr).toBe(0);
    const at = (event: string) => events.indexOf(event);
    expect(events.slice(0, 2)).toEqual(['root paused', 'root compared']);
    // Both children of the root are paused before either is compared: together, not one after the other.
    expect(Math.max(at('infrastructure paused'), at(`${name} paused`))).toBeLessThan(Math.min(at('infrastructure compared'), at(`${name} compared`)));
    expect(at('cert-manager paused')).toBeGreaterThan(at('infrastructure compared'));
    expect(events).toHaveLength(8);
    // The results in the order of the environment's Applications, root first.
    expect([...run.stdout.matchAll(/^Application (\S+): paused$/gm)].map((line) => line[1])).toEqual(['root', ...['cert-manager', 'infrastructure', name].sort(compareText)]);
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

describe('the generations of Applications a pause walks (src/cluster/argo-cd.ts)', () => {
  const app = (name: string, manager?: string): LiveObject => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, annotations: manager === undefined ? {} : { [TRACKING_ANNOTATION]: `${manager}:argoproj.io/Application:argocd/${name}` } } });
  const names = (generations: { metadata: { name: string } }[][]) => generations.map((generation) => generation.map((one) => one.metadata.name));

  it('puts each after the Application its tracking annotation names, one without it after the root, in the order given', () => {
    const apps = [app('root'), app('billing', 'root'), app('cert-manager', 'infrastructure'), app('infrastructure', 'root'), app('by-hand')];
    expect(names(applicationGenerations(apps, 'root'))).toEqual([['root'], ['billing', 'infrastructure', 'by-hand'], ['cert-manager']]);
  });

  it('starts from those whose manager is not among them, and ends a loop of managers', () => {
    expect(names(applicationGenerations([app('cert-manager', 'infrastructure'), app('billing', 'root')], 'root'))).toEqual([['cert-manager', 'billing']]);
    expect(names(applicationGenerations([app('a', 'b'), app('b', 'a')], 'root'))).toEqual([['b'], ['a']]);
  });
});

describe("ops verbs against an API server without Argo CD's resources", () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-no-argo-');
  const run = (...args: string[]) => runInProcess(OPS, args, ROOT, { KUBECONFIG: kubeconfig() });
  const refusal = "Argo CD's Application resource (argoproj.io/v1alpha1 applications) is not served by";

  it('refuses pause, resume and the emergency outage, naming the missing resource, and changes nothing (exit 1)', async () => {
    const ready = { type: 'Ready', status: 'True' };
    api.objects = { Deployment: [], Pod: [], Node: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, spec: {}, status: { conditions: [ready] } }] };
    api.unserved.add('Application');
    try {
      for (const args of [
        ['pause', '--env', 'local', '--reason', 'INC-1'],
        ['resume', '--env', 'local'],
        ['emergency', 'outage', '--env', 'local', '--reason', 'INC-1', '--timeout', '1'],
      ]) {
        api.patches.length = 0;
        const result = await run(...args);
        expect(result.status, `${args.join(' ')}\n${result.stdout}${result.stderr}`).toBe(1);
        expect(result.stderr, args.join(' ')).toContain(refusal);
        expect(result.stderr, args.join(' ')).toContain('is Argo CD installed there?');
        expect(result.stdout, args.join(' ')).not.toContain('nothing was paused');
        expect(api.patches, args.join(' ')).toEqual([]);
      }
    } finally {
      api.unserved.clear();
    }
  });

  it('fails the emergency outage on a cluster without a node, whatever else holds (exit 1)', async () => {
    api.objects = { Application: [], Deployment: [], Pod: [] };
    const result = await run('emergency', 'outage', '--env', 'local', '--reason', 'INC-1', '--timeout', '1');
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toContain('FAIL: no Node in the cluster: nothing can run');
    expect(result.stdout).not.toContain('every pod runs');
  });
});
