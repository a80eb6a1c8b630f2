import { describe, expect, it } from 'vitest';
import { applicationState, converged, healthCauses } from '../src/cluster/application-state';
import { FAIL_FAST_SECONDS, latestWarnings, LastFailures, ProblemClock, settled, stillChanging, unmendable, withEndless, withWarnings } from '../e2e/convergence';
import { awaitsRefresh, COMPARISON_REFRESHES, jobEnded, PROJECT_REFRESH_SECONDS, PROJECT_REFRESHES, ProgressingRefresher, REFRESH_AFTER_SECONDS, runningHookJobs } from '../e2e/refresh';
import { KubeClient, type KubeObject } from '../e2e/kube-client';
import { E2E } from '../e2e/command';
import { REJUDGE_ANNOTATION, STUCK_GATEWAY_SECONDS, StuckGateways } from '../e2e/envoy-gateway';
import { GATEWAY } from '../src/contract/upstream';
import { runInProcess } from './support';

// Unit tests of the e2e harness's own logic; test/e2e/ runs it on the real engines.

describe('the convergence report', () => {
  it('counts only Synced and Healthy as converged, and says why an Application is not', () => {
    const app = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'database' },
      spec: { destination: { namespace: 'database' } },
      status: {
        sync: { status: 'OutOfSync' },
        health: { status: 'Progressing' },
        operationState: { phase: 'Running', message: 'waiting for completion of hook batch/Job/migrate' },
        resources: [{ kind: 'Job', namespace: 'database', name: 'migrate', health: { status: 'Progressing', message: 'Pending' } }],
      },
    };
    const state = applicationState(app, 'database', 2, new Map([['database/migrate-x', 'waiting: Secret db not found']]));
    expect(converged(state)).toBe(false);
    expect(state.message).toContain('sync Running');
    expect(state.message).toContain('Job database/migrate Progressing: Pending');
    expect(state.message).toContain('Pod database/migrate-x not started, waiting: Secret db not found');
    expect(applicationState(undefined, 'broker', 3).sync).toBe('Missing');
  });

  it('counts an Application only an operator syncs as converged when Healthy until the operator\'s sync, then only when Synced too', () => {
    const app = (sync: string) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'argocd', annotations: { 'platform-gitops.io/sync': 'operator' } },
      spec: { destination: { namespace: 'argocd' } },
      status: { sync: { status: sync }, health: { status: 'Healthy' } },
    });
    const waiting = applicationState(app('OutOfSync'), 'argocd', 3);
    expect(waiting.operatorSynced).toBe(true);
    expect(waiting.message).toContain("waits for an operator's sync");
    expect(converged(waiting, true)).toBe(true);
    expect(converged(waiting)).toBe(false);
    expect(converged(applicationState(app('Synced'), 'argocd', 3))).toBe(true);
    // Any other Application is never converged OutOfSync.
    const other = applicationState({ ...app('OutOfSync'), metadata: { name: 'issuers' } }, 'issuers', 2);
    expect(converged(other, true)).toBe(false);
  });
});

describe('the newest warnings of a run that did not converge (e2e/convergence.ts)', () => {
  const event = (kind: string, name: string, type: string, reason: string, message: string, lastTimestamp: string) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${name}.${lastTimestamp}`, namespace: 'webapp' },
    involvedObject: { kind, name, namespace: 'webapp' },
    type,
    reason,
    message,
    lastTimestamp,
  });
  const selector = 'deployment webapp.webapp spec.selector.matchLabels must contain one of [app name app.kubernetes.io/name]';
  const events = [
    event('Canary', 'webapp', 'Warning', 'Synced', 'an older warning', '2026-11-27T10:00:00Z'),
    event('Canary', 'webapp', 'Warning', 'Synced', selector, '2026-11-27T10:00:10Z'),
    event('Canary', 'webapp', 'Normal', 'Synced', 'New Canary detected', '2026-11-27T10:00:20Z'),
    event('Deployment', 'webapp', 'Warning', 'Unhealthy', 'a warning of a Healthy object', '2026-11-27T10:00:05Z'),
  ];
  const app = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'webapp' },
    status: {
      resources: [
        { kind: 'Canary', name: 'webapp', namespace: 'webapp', health: { status: 'Unknown', message: 'Initializing' } },
        { kind: 'Deployment', name: 'webapp', namespace: 'webapp', health: { status: 'Healthy' } },
      ],
    },
  };

  it('keeps the newest Warning of each object, not its Normal events', () => {
    expect(latestWarnings(events)).toEqual(new Map([
      ['Canary webapp/webapp', `Synced: ${selector}`],
      ['Deployment webapp/webapp', 'Unhealthy: a warning of a Healthy object'],
    ]));
  });

  it('adds the warning of each resource that is not Healthy to an Application that did not converge', () => {
    const state = { name: 'webapp', wave: 6, sync: 'Synced', health: 'Unknown', message: 'Canary webapp/webapp Unknown: Initializing' };
    expect(withWarnings(state, app, latestWarnings(events)).message).toBe(`Canary webapp/webapp Unknown: Initializing; Canary webapp/webapp warned Synced: ${selector}`);
    const healthy = { ...state, health: 'Healthy', message: '' };
    expect(withWarnings(healthy, app, latestWarnings(events))).toBe(healthy);
  });

  it('finds the resources by the causes Argo CD names in the Application\'s health, since it keeps their own health out of it', () => {
    const unpersisted = { ...app, status: { resources: app.status.resources.map(({ health: _health, ...resource }) => resource), health: { status: 'Unknown', message: 'Caused by flagger.app/Canary:webapp/webapp' } } };
    const state = { name: 'webapp', wave: 6, sync: 'Synced', health: 'Unknown', message: 'health Unknown: Caused by flagger.app/Canary:webapp/webapp' };
    expect(withWarnings(state, unpersisted, latestWarnings(events)).message).toBe(`${state.message}; Canary webapp/webapp warned Synced: ${selector}`);
  });
});

describe("the causes of an Application's health (src/cluster/argo-cd.ts)", () => {
  const app = (message: string) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'x' }, status: { health: { status: 'Degraded', message } } });

  it('reads the group, kind, namespace and name of each cause, core and cluster-scoped kinds included', () => {
    expect(healthCauses(app('Caused by apps/Deployment:cert-manager/cert-manager, apiextensions.k8s.io/CustomResourceDefinition:certificaterequests.cert-manager.io, Service:webapp/webapp and 2 more'))).toEqual([
      'Deployment cert-manager/cert-manager',
      'CustomResourceDefinition certificaterequests.cert-manager.io',
      'Service webapp/webapp',
    ]);
    expect(healthCauses(app('Deployment x failed'))).toEqual([]);
    expect(healthCauses(undefined)).toEqual([]);
  });
});

describe("an Application's last failed sync attempt (e2e/convergence.ts)", () => {
  const billing = (operationState: object, sync = 'OutOfSync', health = 'Missing') => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'billing' },
    spec: { destination: { namespace: 'billing' } },
    status: { sync: { status: sync }, health: { status: health }, operationState },
  });
  const failedAttempt = {
    phase: 'Running',
    retryCount: 1,
    message: 'one or more synchronization tasks completed unsuccessfully. Retrying attempt #1 at 12:00AM.',
    syncResult: { resources: [{ kind: 'Job', namespace: 'billing', name: 'early-hook', hookPhase: 'Failed', message: 'Job has reached the specified deadline' }] },
  };
  const nextAttempt = { phase: 'Running', retryCount: 2, message: 'Retrying operation. Attempt #2' };

  it('keeps why the last attempt failed once the next retry has cleared its results', () => {
    const failures = new LastFailures();
    failures.see(billing(failedAttempt));
    failures.see(billing(nextAttempt));
    const state = failures.explain(applicationState(billing(nextAttempt), 'billing', 5));
    expect(state.message).toContain('sync Running (retry 2): Retrying operation. Attempt #2');
    expect(state.message).toContain('last failed attempt: Job billing/early-hook: Job has reached the specified deadline');
  });

  it('adds nothing the message already shows, nor to a converged Application', () => {
    const failures = new LastFailures();
    failures.see(billing(failedAttempt));
    const showing = applicationState(billing(failedAttempt), 'billing', 5);
    expect(failures.explain(showing)).toEqual(showing);
    const succeeded = billing({ phase: 'Succeeded', message: 'successfully synced', finishedAt: '2026-02-01T00:00:00Z' }, 'Synced', 'Healthy');
    const healthy = applicationState({ ...succeeded, status: { ...succeeded.status, reconciledAt: '2026-02-01T00:00:01Z' } }, 'billing', 5);
    expect(failures.explain(healthy)).toEqual(healthy);
    expect(new LastFailures().explain(applicationState(billing(nextAttempt), 'billing', 5)).message).not.toContain('last failed attempt');
  });
});

describe('a run that settles unconverged ends before its timeout with --settle (e2e/convergence.ts)', () => {
  const state = (name: string, sync: string, health: string, extra: object = {}) => ({ name, wave: 6, sync, health, message: sync === 'Synced' && health === 'Healthy' ? '' : 'health Unknown: Caused by flagger.app/Canary:web/webapp', ...extra });
  const t0 = 1_000_000;

  it('ends once each Application not converged kept its state for the settle time and every other converged, not before', () => {
    const states = [state('billing', 'Synced', 'Healthy'), state('webapp', 'Synced', 'Unknown')];
    const changedAt = new Map([['billing', t0], ['webapp', t0]]);
    expect(settled(states, changedAt, t0 + 59_000, 60)).toBeUndefined();
    expect(settled(states, changedAt, t0 + 60_000, 60)).toBe('settled for 60 s with every other Application converged: webapp Synced Unknown');
  });

  it('waits while any Application not converged still changes, is still missing or has no state seen yet', () => {
    const changedAt = new Map([['billing', t0 + 50_000], ['webapp', t0]]);
    expect(settled([state('billing', 'OutOfSync', 'Progressing'), state('webapp', 'Synced', 'Unknown')], changedAt, t0 + 60_000, 60)).toBeUndefined();
    expect(settled([state('billing', 'Missing', 'Missing'), state('webapp', 'Synced', 'Unknown')], new Map([['billing', t0], ['webapp', t0]]), t0 + 60_000, 60)).toBeUndefined();
    expect(settled([state('webapp', 'Synced', 'Unknown')], new Map(), t0 + 60_000, 60)).toBeUndefined();
  });

  it('never ends a run that converged: that is the run\'s own end', () => {
    expect(settled([state('billing', 'Synced', 'Healthy')], new Map([['billing', t0]]), t0 + 600_000, 60)).toBeUndefined();
  });

  it('counts what only an operator syncs as converged when Healthy before the operator\'s sync, as the run does', () => {
    const states = [state('argocd', 'OutOfSync', 'Healthy', { operatorSynced: true }), state('webapp', 'Synced', 'Unknown')];
    const changedAt = new Map([['argocd', t0], ['webapp', t0]]);
    expect(settled(states, changedAt, t0 + 60_000, 60, true)).toBe('settled for 60 s with every other Application converged: webapp Synced Unknown');
    expect(settled(states, changedAt, t0 + 60_000, 60, false)).toBe('settled for 60 s with every other Application converged: argocd OutOfSync Healthy, webapp Synced Unknown');
  });

  it('is quiet at least as long as an error must stay to be final, so that a settle time shorter than that never hides an error the run would stop for', () => {
    const states = [state('billing', 'OutOfSync', 'Missing', { message: 'SyncError: Failed last sync attempt' }), state('webapp', 'Synced', 'Unknown')];
    const changedAt = new Map([['billing', t0], ['webapp', t0]]);
    expect(settled(states, changedAt, t0 + (FAIL_FAST_SECONDS - 1) * 1000, 20)).toBeUndefined();
    expect(settled(states, changedAt, t0 + FAIL_FAST_SECONDS * 1000, 20)).toBe(`settled for ${FAIL_FAST_SECONDS} s with every other Application converged: billing OutOfSync Missing, webapp Synced Unknown`);
  });

  it('holds the stop for an unmendable Application until every other one converged, stopped or kept its state for the settle time', () => {
    const hook = state('webapp', 'OutOfSync', 'Missing');
    const canary = state('shop', 'Synced', 'Unknown');
    const states = [state('billing', 'Synced', 'Healthy'), hook, canary];
    const ended = new Set(['webapp']);
    expect(stillChanging(states, new Map([['webapp', t0], ['shop', t0 + 10_000]]), t0 + 29_000, 20, ended)).toEqual(['shop']);
    expect(stillChanging(states, new Map([['webapp', t0], ['shop', t0 + 10_000]]), t0 + 30_000, 20, ended)).toEqual([]);
    // Without the unmendable one ended, it is waited on as any other.
    expect(stillChanging(states, new Map([['webapp', t0 + 25_000], ['shop', t0]]), t0 + 30_000, 20, new Set())).toEqual(['webapp']);
    // An Application its stuck parent never created stays Missing: settled once it stayed so.
    expect(stillChanging([hook, state('later', 'Missing', 'Missing')], new Map([['later', t0]]), t0 + 20_000, 20, ended)).toEqual([]);
  });

  it('is a whole number of seconds, at least 1, on the command line (exit 2, before anything starts)', async () => {
    const run = await runInProcess(E2E, ['--env', 'local', '--settle', '0']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--settle "0" must be a whole number of seconds, at least 1');
  });
});

describe('the e2e stops early for what no wave or retry mends (e2e/convergence.ts)', () => {
  const app = (status: object, automated: object | 'manual' = {}): KubeObject => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'webapp', namespace: 'argocd' },
    spec: { syncPolicy: { ...(automated === 'manual' ? {} : { automated }), retry: { limit: 5 } } },
    status,
  });
  /** `unmendable` of the Application in one poll at `seconds` (`lastFailed`: its last failed attempt's results). */
  const at = (clock: ProblemClock, seconds: number, application: KubeObject, lastFailed: readonly string[] = []) => {
    clock.poll(1_000_000 + seconds * 1000);
    return unmendable(application, clock, lastFailed);
  };

  it('stops for a comparison error that stayed FAIL_FAST_SECONDS, not before, and forgets one that went away', () => {
    const clock = new ProblemClock();
    const broken = app({ conditions: [{ type: 'ComparisonError', message: "unable to resolve 'no-such-branch' to a commit SHA" }] });
    expect(at(clock, 0, broken)).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS - 1, broken)).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, broken)).toBe(`webapp: ComparisonError for ${FAIL_FAST_SECONDS} s: unable to resolve 'no-such-branch' to a commit SHA`);
    const again = new ProblemClock();
    expect(at(again, 0, broken)).toBeUndefined();
    expect(at(again, 10, app({}))).toBeUndefined();
    // Back after a poll without it: its clock starts again.
    expect(at(again, FAIL_FAST_SECONDS + 10, broken)).toBeUndefined();
    expect(at(again, 200, app({ conditions: [{ type: 'SyncError', message: 'x' }] }))).toBeUndefined();
  });

  it("stops at once for a chart's values schema refusing the Helm values, naming the Application and quoting helm's refusal on one line", () => {
    // The condition as Argo CD 3.6.1 writes it: controller/state.go ("Failed to load target
    // state: failed to generate manifest for source %d of %d: %w"), the repository server's gRPC
    // error, util/helm/cmd.go ("failed running helm: %w") over util/exec/exec.go `CmdError`
    // ("`<command>` failed <cause>: <stderr>", the values in a new random file at each attempt,
    // reposerver/repository/repository.go `helmTemplate`), then the cached error after three
    // failures ("Manifest generation error (cached): "); helm v4.3.1's stderr
    // (pkg/chart/common/util/values.go), as the toolchain's helm prints it for cert-manager's chart.
    const refusal = "Error: values don't meet the specifications of the schema(s) in the following chart(s):\ncert-manager:\n- at '': validation failed\n  - at '/crds': additional properties 'install' not allowed\n  - at '/crds/keep': got string, want boolean";
    const attempt = (values: string) =>
      `failed running helm: \`helm template . --name-template cert-manager --namespace cert-manager --kube-version 1.36.3 --values ${values} <api versions removed> --include-crds\` failed exit status 1: ${refusal}`;
    const conditions = [
      `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = ${attempt('/tmp/0b8e9d5e-5f0c-4bb4-9a35-4f1fd1e6a0c3')}`,
      `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = ${attempt('/tmp/9c3a1f6e-2b7d-4e55-8c1e-0d6f3b2a9e71')}`,
      `Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = Manifest generation error (cached): ${attempt('/tmp/9c3a1f6e-2b7d-4e55-8c1e-0d6f3b2a9e71')}`,
    ];
    const expected = "webapp: ComparisonError: the chart refuses its values: values don't meet the specifications of the schema(s) in the following chart(s): cert-manager: - at '': validation failed - at '/crds': additional properties 'install' not allowed - at '/crds/keep': got string, want boolean";
    const clock = new ProblemClock();
    // Each message as first seen: final at once, the same reason whichever attempt wrote it.
    for (const [seconds, message] of conditions.entries()) expect(at(clock, seconds * 10, app({ conditions: [{ type: 'ComparisonError', message }] }))).toBe(expected);
    // Another comparison error still waits FAIL_FAST_SECONDS.
    const other = app({ conditions: [{ type: 'ComparisonError', message: conditions[0]!.replace(refusal, 'Error: INSTALLATION FAILED: chart not found') }] });
    expect(at(new ProblemClock(), 0, other)).toBeUndefined();
  });

  it('stops for an object the API server refuses as invalid, whatever retry note Argo CD appends to the message', () => {
    const clock = new ProblemClock();
    const invalid = 'CronJob.batch "backup" is invalid: spec.schedule: Invalid value: "0 25 * * *"';
    const reason = `one or more objects failed to apply, reason: ${invalid}`;
    // controller/appcontroller.go: "%s. Retrying attempt #%d at %s." with an RFC 3339 time.
    const refused = (attempt: number) => app({ operationState: { phase: 'Running', retryCount: attempt, message: `${reason}. Retrying attempt #${attempt} at 2026-11-26T10:0${attempt}:00Z.` } });
    expect(at(clock, 0, refused(1))).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, refused(2))).toBe(`webapp: the API server refused for ${FAIL_FAST_SECONDS} s: ${invalid}`);
    // A validating webhook's denial of the object as written: the same on every retry.
    const denial = 'admission webhook "webhook.cert-manager.io" denied the request: spec.privateKey.size: Invalid value: 1024: must be between 2048 & 8192 for rsa keyAlgorithm';
    const denied = new ProblemClock();
    expect(at(denied, 0, app({ operationState: { phase: 'Running', message: `one or more objects failed to apply, reason: ${denial}` } }))).toBeUndefined();
    expect(at(denied, FAIL_FAST_SECONDS, app({ operationState: { phase: 'Running', message: `one or more objects failed to apply, reason: ${denial}. Retrying attempt #3 at 2026-11-26T10:03:00Z.` } }))).toBe(
      `webapp: the API server refused for ${FAIL_FAST_SECONDS} s: ${denial}`,
    );
    // An unreachable webhook may start later: waited for.
    const unreachable = app({ operationState: { phase: 'Running', message: 'Internal error occurred: failed calling webhook "webhook.cert-manager.io": connection refused' } });
    const later = new ProblemClock();
    at(later, 0, unreachable);
    expect(at(later, 600, unreachable)).toBeUndefined();
    // A missing CRD may come with a later wave: never a reason to stop early.
    const missing = app({ operationState: { phase: 'Running', retryCount: 1, message: 'the server could not find the requested resource. Retrying attempt #1 at 2026-11-26T10:01:00Z.' } });
    const other = new ProblemClock();
    expect(at(other, 0, missing)).toBeUndefined();
    expect(at(other, 600, missing)).toBeUndefined();
  });

  it('counts a refusal through the retries that send the object again, whose running attempt shows no result yet', () => {
    // Argo CD's backoff (10 s, then 20 s, 40 s...) shows the refusal only between attempts.
    const denial = 'admission webhook "webhook.cert-manager.io" denied the request: spec.privateKey.size: Invalid value: 1024: must be between 2048 & 8192 for rsa keyAlgorithm';
    const waiting = (attempt: number) => app({ operationState: { phase: 'Running', retryCount: attempt, message: `one or more synchronization tasks completed unsuccessfully, reason: ${denial}. Retrying attempt #${attempt} at 2026-11-26T10:0${attempt}:00Z.` } });
    const retrying = (attempt: number) => app({ operationState: { phase: 'Running', retryCount: attempt, message: `Retrying operation. Attempt #${attempt}` } });
    const lastFailed = [`Certificate cert-manager/local-ca-root: ${denial}`];
    const clock = new ProblemClock();
    expect(at(clock, 0, waiting(1), lastFailed)).toBeUndefined();
    expect(at(clock, 10, retrying(1), lastFailed)).toBeUndefined();
    expect(at(clock, 12, waiting(2), lastFailed)).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, retrying(2), lastFailed)).toBe(`webapp: the API server refused for ${FAIL_FAST_SECONDS} s: ${denial}`);
    // The first attempt, not a retry: what an earlier sync failed with does not count.
    const fresh = new ProblemClock();
    const first = app({ operationState: { phase: 'Running', message: 'waiting for completion of hook batch/Job/migrate' } });
    at(fresh, 0, first, lastFailed);
    expect(at(fresh, FAIL_FAST_SECONDS * 2, first, lastFailed)).toBeUndefined();
  });

  it('stops for an automated sync that failed and left the Application OutOfSync; not for one that left it Synced, nor for an operator\'s', () => {
    const failed = (sync: string, automated: object | 'manual') =>
      app({ sync: { status: sync }, operationState: { phase: 'Failed', startedAt: '2026-11-26T10:00:00Z', retryCount: 5, message: 'one or more objects failed to apply (retried 5 times).' } }, automated);
    const clock = new ProblemClock();
    expect(at(clock, 0, failed('OutOfSync', {}))).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, failed('OutOfSync', {}))).toBe(`webapp: sync Failed, still OutOfSync after ${FAIL_FAST_SECONDS} s: one or more objects failed to apply (retried 5 times).`);
    const synced = new ProblemClock();
    at(synced, 0, failed('Synced', {}));
    expect(at(synced, 100, failed('Synced', {}))).toBeUndefined();
    const operator = new ProblemClock();
    at(operator, 0, failed('OutOfSync', 'manual'));
    expect(at(operator, 100, failed('OutOfSync', 'manual'))).toBeUndefined();
    const paused = new ProblemClock();
    at(paused, 0, failed('OutOfSync', { enabled: false }));
    expect(at(paused, 100, failed('OutOfSync', { enabled: false }))).toBeUndefined();
  });

  it('stops for a resource of the Application that waits without end once it stayed so FAIL_FAST_SECONDS, and names it in the report', () => {
    const certificate = { group: 'cert-manager.io', version: 'v1', kind: 'Certificate', namespace: 'webapp', name: 'webapp', health: { status: 'Progressing' } };
    const waiting = app({ sync: { status: 'Synced' }, health: { status: 'Progressing' }, resources: [certificate] });
    const why = 'cert-manager left CertificateRequest webapp/webapp-1 Pending';
    const endless = new Map([['Certificate webapp/webapp', why]]);
    const clock = new ProblemClock();
    clock.poll(0);
    expect(unmendable(waiting, clock, [], endless)).toBeUndefined();
    clock.poll((FAIL_FAST_SECONDS - 1) * 1000);
    expect(unmendable(waiting, clock, [], endless)).toBeUndefined();
    clock.poll(FAIL_FAST_SECONDS * 1000);
    expect(unmendable(waiting, clock, [], endless)).toBe(`webapp: Certificate webapp/webapp waits without end, for ${FAIL_FAST_SECONDS} s: ${why}`);
    // Another Application's resource is not this one's.
    expect(unmendable(app({ resources: [{ ...certificate, namespace: 'billing', name: 'billing' }] }), clock, [], endless)).toBeUndefined();
    const state = applicationState(waiting, 'webapp', 10);
    expect(withEndless(state, waiting, endless).message).toBe(`${state.message}; Certificate webapp/webapp waits without end: ${why}`);
    expect(withEndless(state, waiting, new Map())).toEqual(state);
  });
});

describe('a refresh asked of a Synced, Progressing Application, of one whose sync waits on a hook that ended, of one whose project Argo CD did not find, or of one showing a comparison error (e2e/refresh.ts)', () => {
  const reconciledAt = Date.parse('2026-11-27T13:36:28Z');
  const app = (status: object = {}, annotations?: Record<string, string>): KubeObject => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'gateway-crds', namespace: 'argocd', ...(annotations === undefined ? {} : { annotations }) },
    status: {
      sync: { status: 'Synced' },
      health: { status: 'Progressing', message: 'Caused by apiextensions.k8s.io/CustomResourceDefinition:backends.gateway.envoyproxy.io' },
      reconciledAt: '2026-11-27T13:36:28Z',
      ...status,
    },
  });
  const after = (seconds: number) => reconciledAt + seconds * 1000;

  it(`awaits one when Synced, Progressing, no operation running and last reconciled ${REFRESH_AFTER_SECONDS} s ago or more`, () => {
    expect(awaitsRefresh(app(), after(REFRESH_AFTER_SECONDS))).toBe(true);
    expect(awaitsRefresh(app(), after(REFRESH_AFTER_SECONDS - 1))).toBe(false);
    expect(awaitsRefresh(app({ sync: { status: 'OutOfSync' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ health: { status: 'Healthy' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ health: { status: 'Degraded' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ operationState: { phase: 'Running' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({}, { 'argocd.argoproj.io/refresh': 'normal' }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ reconciledAt: undefined }), after(60))).toBe(false);
  });

  it('asks once per reconciliation, with the annotation argocd app get --refresh sets', async () => {
    const patches: unknown[] = [];
    const client = { mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([object.metadata.name, patch]) } as unknown as KubeClient;
    const refresher = new ProgressingRefresher(client);
    await refresher.poll([app()], after(1));
    expect(patches).toEqual([]);
    await refresher.poll([app()], after(REFRESH_AFTER_SECONDS));
    await refresher.poll([app()], after(REFRESH_AFTER_SECONDS + 2));
    expect(patches).toEqual([['gateway-crds', { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'normal' } } }]]);
    await refresher.poll([app({ reconciledAt: '2026-11-27T13:36:40Z' })], after(30));
    expect(patches).toHaveLength(2);
  });

  it('asks once, per operation, when a hook Job the running sync waits on has ended', async () => {
    const hook = (hookPhase: string) => ({ group: 'batch', version: 'v1', kind: 'Job', namespace: 'webapp', name: 'webapp-migrations', hookType: 'Sync', hookPhase });
    const running = (startedAt: string, hookPhase = 'Running') => ({
      ...app({ sync: { status: 'OutOfSync' }, operationState: { phase: 'Running', startedAt, syncResult: { resources: [hook(hookPhase)] } } }),
      metadata: { name: 'webapp', namespace: 'argocd', annotations: {} },
    });
    expect(runningHookJobs(running('2026-11-28T05:50:43Z'))).toEqual(['webapp/webapp-migrations']);
    expect(runningHookJobs(running('2026-11-28T05:50:43Z', 'Succeeded'))).toEqual([]);
    let job: KubeObject | undefined = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'webapp-migrations', namespace: 'webapp' }, status: { active: 1 } };
    const patches: unknown[] = [];
    const client = {
      get: async (_apiVersion: string, _kind: string, name: string, namespace: string) => (job?.metadata.name === name && job.metadata.namespace === namespace ? job : undefined),
      mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([object.metadata.name, patch]),
    } as unknown as KubeClient;
    const refresher = new ProgressingRefresher(client);
    await refresher.poll([running('2026-11-28T05:50:43Z')], after(1));
    expect(patches).toEqual([]);
    job = { ...job!, status: { succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }] } };
    await refresher.poll([running('2026-11-28T05:50:43Z')], after(2));
    await refresher.poll([running('2026-11-28T05:50:43Z')], after(3));
    expect(patches).toEqual([['webapp', { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'normal' } } }]]);
    // The next sync makes the hook again under its name.
    await refresher.poll([running('2026-11-28T06:10:00Z')], after(4));
    expect(patches).toHaveLength(2);
    expect(jobEnded({ ...job, status: { conditions: [{ type: 'Failed', status: 'True' }] } })).toBe(true);
    expect(jobEnded({ ...job, status: { conditions: [{ type: 'Complete', status: 'False' }] } })).toBe(false);
  });

  it(`asks every ${PROJECT_REFRESH_SECONDS} s, at most ${PROJECT_REFRESHES} times, while Argo CD finds no project of the Application, which its project informer may not hold yet`, async () => {
    const patches: unknown[] = [];
    const client = { mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([object.metadata.name, patch]) } as unknown as KubeClient;
    // The failed reconciliation leaves status.reconciledAt unset.
    const missing = (message: string) => ({
      ...app({ sync: { status: 'Unknown' }, health: { status: 'Unknown' }, reconciledAt: undefined, conditions: [{ type: 'InvalidSpecError', message }] }),
      metadata: { name: 'root', namespace: 'argocd' },
    });
    const notFound = missing('Application referencing project platform which does not exist');
    const refresher = new ProgressingRefresher(client);
    await refresher.poll([notFound], after(1));
    expect(patches).toEqual([['root', { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'normal' } } }]]);
    await refresher.poll([notFound], after(1 + PROJECT_REFRESH_SECONDS - 1));
    expect(patches).toHaveLength(1);
    await refresher.poll([notFound], after(1 + PROJECT_REFRESH_SECONDS));
    expect(patches).toHaveLength(2);
    for (let second = 10; second <= 120; second++) await refresher.poll([notFound], after(second));
    expect(patches).toHaveLength(PROJECT_REFRESHES);
    // Every refresh is asked before the judge calls the error final.
    expect((PROJECT_REFRESHES - 1) * PROJECT_REFRESH_SECONDS).toBeLessThan(FAIL_FAST_SECONDS);
    // Another spec error is Argo CD's verdict on the spec itself, which a refresh does not change.
    await new ProgressingRefresher(client).poll([missing('Application destination spec is invalid: unable to find destination server')], after(20));
    expect(patches).toHaveLength(PROJECT_REFRESHES);
  });

  it(`asks once per comparison error's message, ${REFRESH_AFTER_SECONDS} s after the reconciliation that showed it, at most ${COMPARISON_REFRESHES} times`, async () => {
    const patches: unknown[] = [];
    const client = { mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([object.metadata.name, patch]) } as unknown as KubeClient;
    const failing = (message: string, reconciled = '2026-11-27T13:36:28Z') => ({
      ...app({ sync: { status: 'Unknown' }, health: { status: 'Healthy' }, reconciledAt: reconciled, conditions: [{ type: 'ComparisonError', message }] }),
      metadata: { name: 'monitoring', namespace: 'argocd' },
    });
    const unreachable = 'Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unavailable desc = connection refused';
    const refresher = new ProgressingRefresher(client);
    await refresher.poll([failing(unreachable)], after(REFRESH_AFTER_SECONDS - 1));
    expect(patches).toEqual([]);
    await refresher.poll([failing(unreachable)], after(REFRESH_AFTER_SECONDS));
    // The same error, compared again: the judge's clock goes on, and no other refresh is asked.
    await refresher.poll([failing(unreachable, '2026-11-27T13:36:32Z')], after(30));
    expect(patches).toEqual([['monitoring', { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'normal' } } }]]);
    // A message that changes at every attempt gets COMPARISON_REFRESHES in all.
    for (let attempt = 0; attempt < 2 * COMPARISON_REFRESHES; attempt++) await refresher.poll([failing(`${unreachable} (attempt ${attempt})`)], after(40 + attempt));
    expect(patches).toHaveLength(COMPARISON_REFRESHES);
    // A Healthy, Synced Application without conditions gets none.
    await new ProgressingRefresher(client).poll([app({ health: { status: 'Healthy' } })], after(60));
    expect(patches).toHaveLength(COMPARISON_REFRESHES);
  });

  it('leaves a refresh that fails to the periodic one, without failing the watch', async () => {
    const client = { mergePatch: async () => Promise.reject(new Error('PATCH argocd/Application/gateway-crds: 404 not found')) } as unknown as KubeClient;
    await expect(new ProgressingRefresher(client).poll([app()], after(REFRESH_AFTER_SECONDS))).resolves.toBeUndefined();
  });
});

describe('a Gateway Envoy Gateway left unprogrammed with its Envoy Service and Deployment ready (e2e/envoy-gateway.ts)', () => {
  const since = '2026-11-27T13:52:31Z';
  const at = (seconds: number) => Date.parse(since) + seconds * 1000;
  const owning = (name: string) => ({ [GATEWAY.owningGatewayNameLabel]: name, [GATEWAY.owningGatewayNamespaceLabel]: name });
  const gateway = (name: string, programmed: object): KubeObject => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: name },
    status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', lastTransitionTime: since }, { type: 'Programmed', lastTransitionTime: since, ...programmed }] },
  });
  const service = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: `${name}-gateway`, namespace: 'envoy-gateway-system', labels: owning(name) } });
  const deployment = (name: string, available: boolean): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${name}-gateway`, namespace: 'envoy-gateway-system', labels: owning(name), generation: 1 },
    spec: { replicas: 1 },
    status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: available ? 1 : 0, availableReplicas: available ? 1 : 0, conditions: [{ type: 'Available', status: available ? 'True' : 'False' }] },
  });
  function cluster(objects: Record<string, KubeObject[]>) {
    const patches: [string, unknown][] = [];
    const client = {
      list: async (_apiVersion: string, kind: string) => objects[kind] ?? [],
      mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([`${object.kind} ${object.metadata.namespace}/${object.metadata.name}`, patch]),
    } as unknown as KubeClient;
    const lines: string[] = [];
    return { stuck: new StuckGateways(client, 'envoy-gateway-system', (line) => lines.push(line)), patches, lines };
  }

  it(`annotates the Envoy Service of a Gateway left AddressNotAssigned ${STUCK_GATEWAY_SECONDS} s with its Service and Deployment ready, once per condition`, async () => {
    const { stuck, patches, lines } = cluster({
      Gateway: [gateway('webapp', { status: 'False', reason: 'AddressNotAssigned' }), gateway('billing', { status: 'True', reason: 'Programmed' })],
      Service: [service('webapp'), service('billing')],
      Deployment: [deployment('webapp', true), deployment('billing', true)],
    });
    await stuck.poll(at(STUCK_GATEWAY_SECONDS - 1));
    expect(patches).toEqual([]);
    await stuck.poll(at(STUCK_GATEWAY_SECONDS));
    await stuck.poll(at(STUCK_GATEWAY_SECONDS + 5));
    expect(patches).toEqual([['Service envoy-gateway-system/webapp-gateway', { metadata: { annotations: { [REJUDGE_ANNOTATION]: new Date(at(STUCK_GATEWAY_SECONDS)).toISOString() } } }]]);
    expect(lines).toEqual([
      `Envoy Gateway left Gateway webapp/webapp Programmed=False (AddressNotAssigned) since ${since} with its Envoy Service and Deployment ready (envoyproxy/gateway#9432): Service envoy-gateway-system/webapp-gateway annotated, to be judged again`,
    ]);
  });

  it('leaves alone a Gateway whose Envoy Deployment is not available, whose Service is missing, or that is unprogrammed for another reason', async () => {
    const { stuck, patches } = cluster({
      Gateway: [
        gateway('webapp', { status: 'False', reason: 'NoResources' }),
        gateway('billing', { status: 'False', reason: 'AddressNotAssigned' }),
        gateway('shop', { status: 'False', reason: 'Invalid' }),
      ],
      Service: [service('webapp'), service('shop')],
      Deployment: [deployment('webapp', false), deployment('billing', true), deployment('shop', true)],
    });
    await stuck.poll(at(600));
    expect(patches).toEqual([]);
  });
});
