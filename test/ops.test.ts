import { describe, expect, it } from 'vitest';
import { fakeApiServerForTests } from './fake-api-server';
import { parseDuration, parseMatcher } from '../src/cluster/alertmanager';
import { applicationState, converged } from '../src/cluster/application-state';
import { operationInProgress } from '../src/cluster/argo-cd';
import { automatedSyncEnabled, pauseRecord } from '../src/cluster/argo-cd-pause';
import { assessedAfterOperation } from '../src/cluster/argo-cd-sync';
import { UsageError } from '../src/base/errors';
import { ALERTS, EMERGENCY_REPLICAS } from '../src/contract/contract';
import type { LiveObject } from '../src/cluster/connection';
import { fieldDifferences } from '../src/cluster/drift';
import { nodeState } from '../src/cluster/nodes';
import { podState, rolloutState } from '../src/cluster/workloads';
import { SILENCE_BOUNDS, SYNC_PAUSE_ANNOTATIONS } from '../src/contract/choices';
import { HELM_RELEASE_ROWS, INFRASTRUCTURE_RELEASES } from '../src/infrastructure/releases';
import { loadEnvironments } from '../src/environments';
import { liveWorkloadsOf } from '../src/environments/strategy-registry';
import { OPS } from '../src/commands/ops';
import { ROOT, runInProcess } from './support';

const deployment = (spec: object, status: object, generation = 2): LiveObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'webapp', generation }, spec, status });

// The rollout test of `kubectl rollout status` (k8s.io/kubectl v0.36.3
// pkg/polymorphichelpers/rollout_status.go), which `ops sync` waits on.
describe('a rollout, judged as kubectl rollout status judges it', () => {
  it('is complete when every replica is updated and available and no old one is left', () => {
    expect(rolloutState(deployment({ replicas: 2 }, { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 }))).toEqual({ done: true, state: '2/2 available' });
  });

  it('waits while the controller has not seen the new spec, while replicas are old, and while new ones are not available', () => {
    expect(rolloutState(deployment({ replicas: 2 }, { observedGeneration: 1 })).state).toBe('waiting for the controller to see the new spec');
    expect(rolloutState(deployment({ replicas: 2 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 1 })).state).toBe('1 of 2 new replicas updated');
    expect(rolloutState(deployment({ replicas: 2 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 2 })).state).toBe('1 old replicas pending termination');
    expect(rolloutState(deployment({ replicas: 2 }, { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 1 })).state).toBe('1 of 2 updated replicas available');
  });

  it('fails at once when the Deployment exceeded its progress deadline', () => {
    const stuck = deployment({ replicas: 1 }, { observedGeneration: 2, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "webapp-1" has timed out progressing.' }] });
    expect(rolloutState(stuck).failed).toBe('deployment "webapp" exceeded its progress deadline: ReplicaSet "webapp-1" has timed out progressing.');
  });

  it('says why a pod is not ready: not scheduled, a container waiting', () => {
    const pod = (status: object): LiveObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'webapp-1' }, status });
    expect(podState(pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', message: '0/1 nodes are available: 1 node(s) were unschedulable.' }] })).reason).toBe(
      'not scheduled: 0/1 nodes are available: 1 node(s) were unschedulable.',
    );
    expect(podState(pod({ phase: 'Pending', containerStatuses: [{ name: 'webapp', state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } } }] })).reason).toBe('webapp waiting: ImagePullBackOff (not found)');
    expect(podState(pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }))).toEqual({ name: 'webapp-1', phase: 'Running', ready: true, reason: '' });
  });
});

describe('the drift of one object, field by field', () => {
  const rendered = { metadata: { name: 'webapp', labels: { app: 'webapp' } }, spec: { replicas: 1, template: { spec: { containers: [{ name: 'webapp', image: 'r/p/webapp:v1.4.0', ports: [{ containerPort: 8080 }] }] } } } };

  it('ignores what the cluster adds and reports what git renders differently, containers matched by name', () => {
    const live = {
      metadata: { name: 'webapp', uid: 'u', labels: { app: 'webapp', extra: 'x' } },
      spec: { replicas: 3, template: { spec: { containers: [{ name: 'webapp', image: 'r/p/webapp:v1.3.0', ports: [{ containerPort: 8080, protocol: 'TCP' }], imagePullPolicy: 'Always' }] } } },
      status: { replicas: 3 },
    };
    expect(fieldDifferences(rendered, live)).toEqual([
      { path: 'spec.replicas', desired: '1', live: '3' },
      { path: 'spec.template.spec.containers[name=webapp].image', desired: '"r/p/webapp:v1.4.0"', live: '"r/p/webapp:v1.3.0"' },
    ]);
  });

  it('takes a zero value git renders and the API server leaves out (omitempty) as no difference', () => {
    const withZeros = { ...rendered, spec: { ...rendered.spec, minReadySeconds: 0, template: { spec: { ...rendered.spec.template.spec, hostNetwork: false, securityContext: {} } } } };
    expect(fieldDifferences(withZeros, structuredClone(rendered))).toEqual([]);
  });

  it('reports a field git renders and the cluster lacks, and none for an identical object', () => {
    expect(fieldDifferences(rendered, { ...rendered, metadata: { name: 'webapp' } })).toEqual([{ path: 'metadata.labels', desired: '{"app":"webapp"}', live: '(absent)' }]);
    expect(fieldDifferences(rendered, structuredClone(rendered))).toEqual([]);
  });
});

describe("an Application's health after a sync (a rollback's wait)", () => {
  const app = (status: object): LiveObject => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'billing' }, status });
  const finished = { operationState: { phase: 'Succeeded', finishedAt: '2026-11-27T21:29:34Z' } };

  it('counts only when Argo CD compared the Application after the operation ended, a later second', () => {
    expect(assessedAfterOperation(app({ ...finished, reconciledAt: '2026-11-27T21:29:35Z' }))).toBe(true);
    // The health shown then may be the one from before the sync changed the objects.
    expect(assessedAfterOperation(app({ ...finished, reconciledAt: '2026-11-27T21:29:34Z' }))).toBe(false);
    expect(assessedAfterOperation(app({ ...finished, reconciledAt: '2026-11-27T21:29:20Z' }))).toBe(false);
    expect(assessedAfterOperation(app(finished))).toBe(false);
    // A running operation has not ended; no operation at all has nothing to wait for.
    expect(assessedAfterOperation(app({ operationState: { phase: 'Running' }, reconciledAt: '2026-11-27T21:29:35Z' }))).toBe(false);
    expect(assessedAfterOperation(app({ reconciledAt: '2026-11-27T21:29:35Z' }))).toBe(true);
  });
});

// argo-cd v3.6.1 cmd/argocd/commands/app.go, checkAppWaitConditions: `argocd app wait` waits
// for the operation too, and so does ops status before it says converged.
describe('a sync operation in progress, as argocd app wait judges it', () => {
  const app = (status: object, operation?: object): LiveObject => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'billing' }, ...(operation ? { operation } : {}), status: { sync: { status: 'Synced' }, health: { status: 'Healthy' }, ...status } });
  const finished = { phase: 'Succeeded', finishedAt: '2026-11-27T21:29:34Z' };

  it('is in progress while requested, running, awaiting a retry, or ended and not compared since', () => {
    const automated = { initiatedBy: { automated: true }, sync: {} };
    expect(operationInProgress(app({}, automated))).toBe(true);
    expect(operationInProgress(app({ operationState: { phase: 'Running' } }))).toBe(true);
    // A failed attempt awaiting its retry: Running with a finishedAt, `operation` still set.
    expect(operationInProgress(app({ operationState: { phase: 'Running', finishedAt: '2026-11-27T21:29:34Z', retryCount: 1 }, reconciledAt: '2026-11-27T21:29:40Z' }, automated))).toBe(true);
    expect(operationInProgress(app({ operationState: finished, reconciledAt: '2026-11-27T21:29:20Z' }))).toBe(true);
    expect(operationInProgress(app({ operationState: finished }))).toBe(true);
  });

  it('is over once the controller compared the Application after its end (the same second counts), and for a dry run', () => {
    expect(operationInProgress(app({ operationState: finished, reconciledAt: '2026-11-27T21:29:34Z' }))).toBe(false);
    expect(operationInProgress(app({ operationState: { ...finished, operation: { sync: { dryRun: true } } } }))).toBe(false);
    expect(operationInProgress(app({}))).toBe(false);
  });

  it('keeps a Synced and Healthy Application from counting as converged, and says why', () => {
    const running = applicationState(app({}, { initiatedBy: { automated: true }, sync: {} }), 'billing', 0);
    expect(running).toMatchObject({ sync: 'Synced', health: 'Healthy', operationInProgress: true, message: 'a sync operation is requested' });
    expect(converged(running)).toBe(false);
    const uncompared = applicationState(app({ operationState: finished, reconciledAt: '2026-11-27T21:29:20Z' }), 'billing', 0);
    expect(uncompared.message).toBe('the sync operation ended, not compared since');
    expect(converged(uncompared)).toBe(false);
    expect(converged(applicationState(app({ operationState: finished, reconciledAt: '2026-11-27T21:29:35Z' }), 'billing', 0))).toBe(true);
  });
});

describe('pausing automated sync', () => {
  const app = (automated: object | undefined, annotations: Record<string, string> = {}): LiveObject => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'webapp', annotations },
    spec: { syncPolicy: automated === undefined ? {} : { automated } },
  });

  // argo-cd v3.6.1 pkg/apis/application/v1alpha1/types.go, SyncPolicy.IsAutomatedSyncEnabled.
  it('reads automated sync as Argo CD does: set, and enabled unless enabled is false', () => {
    expect(automatedSyncEnabled(app({ prune: true, selfHeal: true }))).toBe(true);
    expect(automatedSyncEnabled(app({ prune: true, selfHeal: true, enabled: false }))).toBe(false);
    expect(automatedSyncEnabled(app(undefined))).toBe(false);
  });

  it('reads who paused and why from the Application', () => {
    expect(pauseRecord(app({ enabled: false }, { [SYNC_PAUSE_ANNOTATIONS.by]: 'ana', [SYNC_PAUSE_ANNOTATIONS.reason]: 'incident 42' }))).toEqual({ by: 'ana', reason: 'incident 42' });
    expect(pauseRecord(app({}))).toBeUndefined();
  });
});

describe("each strategy's live workloads", () => {
  it('marks the Deployment that serves: the rolling one, the active blue-green unit, Flagger\'s primary', () => {
    for (const environment of loadEnvironments()) {
      for (const application of environment.applications) {
        const workloads = liveWorkloadsOf(application);
        const serving = workloads.filter((w) => w.serves).map((w) => w.deployment);
        const strategy = application.strategy;
        if (strategy.type === 'rolling') expect(serving).toEqual([application.name]);
        else if (strategy.type === 'blue-green') expect(serving).toEqual([`${application.name}-${strategy.blueGreen.active}`]);
        else expect(serving).toEqual([`${application.name}-primary`]);
      }
    }
  });
});

describe('npm run ops command line', () => {
  it('lists its verbs, and refuses an unknown one with exit 2', async () => {
    const unknown = await runInProcess(OPS, ['rollout', '--env', 'local'], ROOT, {});
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/status.*drift.*sync.*verify.*version.*bluegreen.*pause.*resume/s);
  });

  it('refuses a verb without --env, a bad --output and pause without a reason, with exit 2', async () => {
    expect((await runInProcess(OPS, ['status'], ROOT, {})).stderr).toContain('--env <environment> is required');
    expect((await runInProcess(OPS, ['status', '--env', 'local', '--output', 'yaml'], ROOT, {})).status).toBe(2);
    const pause = await runInProcess(OPS, ['pause', '--env', 'local'], ROOT, {});
    expect(pause.status).toBe(2);
    expect(pause.stderr).toContain('--reason <text> is required');
  });

  it('refuses to sync an environment that does not sync automatically unless it is confirmed, before touching a cluster', async () => {
    const manual = loadEnvironments().find((environment) => !environment.autoSync)!;
    const result = await runInProcess(OPS, ['sync', '--env', manual.name, '--app', manual.applications[0]!.name], ROOT, { KUBECONFIG: '/nonexistent/kubeconfig' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${manual.name} does not sync automatically`);
    expect(result.stderr).toContain(`--confirm ${manual.name}`);
  });

  it('refuses the blue-green gates for an application of another strategy, and an unknown step, before touching a cluster', async () => {
    const environment = loadEnvironments().find((env) => env.applications.some((app) => app.strategy.type !== 'blue-green'))!;
    const application = environment.applications.find((app) => app.strategy.type !== 'blue-green')!;
    const other = await runInProcess(OPS, ['bluegreen', '--env', environment.name, '--app', application.name, '--step', 'ready'], ROOT, { KUBECONFIG: '/nonexistent/kubeconfig' });
    expect(other.status).toBe(1);
    expect(other.stderr).toContain(`${application.name} uses the ${application.strategy.type} strategy, not blue-green`);
    const step = await runInProcess(OPS, ['bluegreen', '--env', environment.name, '--app', application.name, '--step', 'switch'], ROOT, {});
    expect(step.status).toBe(2);
    expect(step.stderr).toContain('--step must be one of ready, health, endpoints');
  });

  it('refuses a rollback level it does not have, and options of the other level, before touching a cluster', async () => {
    const level = await runInProcess(OPS, ['rollback', '--env', 'local', '--app', 'webapp', '--level', 'schema'], ROOT, {});
    expect(level.status).toBe(2);
    expect(level.stderr).toContain('--level must be one of orchestrator, controller, database, package');
    for (const [args, message] of [
      [['--level', 'orchestrator', '--to', '3'], '--to is for --level controller or database or package; the orchestrator level takes --to-revision'],
      [['--level', 'database', '--to-revision', '3'], '--to-revision is for --level orchestrator or package; the controller level takes --to <id>, the database level --to <migration>'],
      [['--level', 'database'], '--to <migration> is required with --level database'],
      [['--level', 'database', '--to', "x'; DROP TABLE y"], `--to "x'; DROP TABLE y" is not a migration id`],
      [['--level', 'controller', '--to', 'first'], '--to "first" must be a whole number'],
    ] as const) {
      const run = await runInProcess(OPS, ['rollback', '--env', 'local', '--app', 'webapp', ...args], ROOT, {});
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });

  it('refuses the package level without a release of the table or an application, with both, or with both --to and --to-revision, before touching a cluster (exit 2)', async () => {
    // Only a Helm release has a chart version to roll back; Argo CD is installed from its manifests.
    const names = HELM_RELEASE_ROWS.map((row) => row.name).join(', ');
    const release = INFRASTRUCTURE_RELEASES.flaggerLoadTester.name;
    const { argoCd } = INFRASTRUCTURE_RELEASES;
    for (const [args, message] of [
      [['--level', 'package'], `--level package takes --release <infrastructure release> (one of ${names}) or --app <application> (whose Application installs its published chart)`],
      [['--level', 'package', '--release', 'loadtester'], `--release "loadtester" is not an infrastructure release (src/infrastructure/releases.ts): one of ${names}`],
      [['--level', 'package', '--release', argoCd.name], `--release "${argoCd.name}" installs ${argoCd.manifests.repoURL} ${argoCd.manifests.version}'s manifests, not a Helm chart`],
      [['--level', 'package', '--release', argoCd.name], `its tag goes back through git: infrastructure.versions.${argoCd.name} of src/environments/local/environment.yaml (npm run upgrade -- --env local --release ${argoCd.name} --version <tag> --allow-downgrade)`],
      [['--level', 'package', '--release', release, '--app', 'webapp'], "--release and --app are mutually exclusive at --level package: --release <infrastructure release> rolls back a release, --app <application> an application's published chart"],
      [['--level', 'package', '--app', 'nosuch'], '--app "nosuch" is not an application of local'],
      [['--level', 'controller', '--app', 'webapp', '--to-revision', '2'], '--to-revision is for --level orchestrator or package; the controller level takes --to <id>, the database level --to <migration>'],
      [['--level', 'package', '--release', release, '--to', '1.0.0', '--to-revision', '2'], 'give --to <chart version> or --to-revision <history id>, not both'],
      [['--level', 'controller', '--app', 'webapp', '--release', release], '--release is for --level package; the orchestrator, controller and database levels take --app <application>'],
    ] as const) {
      const run = await runInProcess(OPS, ['rollback', '--env', 'local', ...args], ROOT, { KUBECONFIG: '/nonexistent/kubeconfig' });
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });

  it('refuses a check of an unknown component, naming the three', async () => {
    const result = await runInProcess(OPS, ['check', '--env', 'local', '--component', 'monitoring'], ROOT, {});
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--component must be one of infrastructure, database, broker');
  });

  // `ops role`: test/operations-role.test.ts.

  it('names a kube context the kubeconfig does not have, as a bad argument (exit 2)', async () => {
    const result = await runInProcess(OPS, ['status', '--env', 'local', '--context', 'nosuch'], ROOT, { KUBECONFIG: `${ROOT}/test/fixtures/kubeconfig-two-contexts.yaml` });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--context "nosuch" is not in the kubeconfig (its contexts: one, two)');
  });

  it('refuses a malformed --load-tester-url as a bad argument (exit 2), before connecting', async () => {
    const environment = loadEnvironments().find((env) => env.applications.some((app) => app.strategy.type === 'canary'))!;
    const application = environment.applications.find((app) => app.strategy.type === 'canary')!;
    const result = await runInProcess(OPS, ['canary', '--env', environment.name, '--app', application.name, '--load-tester-url', 'not a url'], ROOT, { KUBECONFIG: '/nonexistent/kubeconfig' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--load-tester-url "not a url" must be an http:// or https:// URL');
  });

  it('words a negative number as the option\'s rule, not the parser\'s "ambiguous" (exit 2)', async () => {
    for (const args of [['--timeout', '-5'], ['--timeout=-5']]) {
      const result = await runInProcess(OPS, ['pause', '--env', 'local', '--reason', 'x', ...args], ROOT, { KUBECONFIG: '/nonexistent/kubeconfig' });
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('--timeout "-5" must be a whole number of seconds, at least 1');
      expect(result.stderr).not.toContain('ambiguous');
    }
  });

  it('prints one JSON document with --output json when it fails, an unreachable cluster included', async () => {
    const unreachable = await runInProcess(OPS, ['status', '--env', 'local', '--output', 'json', '--context', 'nosuch'], ROOT, { KUBECONFIG: `${ROOT}/test/fixtures/kubeconfig-two-contexts.yaml` });
    expect(unreachable.status).toBe(2);
    expect(JSON.parse(unreachable.stdout)).toEqual({ command: 'ops status', passed: false, exitCode: 2, error: '--context "nosuch" is not in the kubeconfig (its contexts: one, two)' });
    const refused = await runInProcess(OPS, ['resume', '--env', 'production', '--output', 'json'], ROOT, { KUBECONFIG: '/nonexistent/kubeconfig' });
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ command: 'ops resume', passed: false, exitCode: 1, error: expect.stringContaining('--confirm production') });
  });
});

describe('ops silence: its input, before Alertmanager is reached', () => {
  it('reads Prometheus durations as Alertmanager does, the contract\'s example first', () => {
    expect(parseDuration(ALERTS.silenceDuration, '--duration')).toBe(60 * 60 * 1000);
    expect(parseDuration('1h30m', '--duration')).toBe(90 * 60 * 1000);
    expect(parseDuration('2d', '--duration')).toBe(48 * 60 * 60 * 1000);
    for (const bad of ['', '0h', '1.5h', '30m1h', 'h', '1 h', '-1h']) expect(() => parseDuration(bad, '--duration'), bad).toThrow(/--duration ".*" must be a positive duration/);
  });

  it('reads matchers as amtool writes them', () => {
    expect(parseMatcher('namespace=webapp', '--matcher')).toEqual({ name: 'namespace', value: 'webapp', isRegex: false, isEqual: true });
    expect(parseMatcher('severity!=info', '--matcher')).toEqual({ name: 'severity', value: 'info', isRegex: false, isEqual: false });
    expect(parseMatcher('pod=~webapp-.*', '--matcher')).toEqual({ name: 'pod', value: 'webapp-.*', isRegex: true, isEqual: true });
    expect(parseMatcher('pod!~a|b', '--matcher')).toEqual({ name: 'pod', value: 'a|b', isRegex: true, isEqual: false });
    expect(() => parseMatcher('9x=1', '--matcher')).toThrow('--matcher "9x=1" must be <label>=<value>');
    expect(() => parseMatcher('namespace', '--matcher')).toThrow(UsageError);
  });

  it('refuses a silence without a comment, two modes at once, and options of another mode (exit 2)', async () => {
    const run = (...args: string[]) => runInProcess(OPS, ['silence', '--env', 'local', '--alertmanager-url', 'http://127.0.0.1:9', ...args], ROOT, {});
    const noComment = await run('--alert', 'DeploymentFailed');
    expect(noComment.status).toBe(2);
    expect(noComment.stderr).toContain('--comment <text> is required');
    expect((await run('--alert', 'DeploymentFailed', '--comment', 'x', '--list')).stderr).toContain('give one of --alert <name> (create), --list or --expire <id>');
    expect((await run('--list', '--duration', '2h')).stderr).toContain('--matcher, --duration, --allow-long and --comment go with --alert');
    expect((await run('--alert', 'DeploymentFailed', '--comment', 'x', '--matcher', 'alertname=Other')).stderr).toContain('--matcher cannot name alertname');
    expect((await runInProcess(OPS, ['silence', '--env', 'local', '--alertmanager-url', 'localhost:9093', '--list'], ROOT, {})).stderr).toContain('must be an http:// or https:// URL');
  });

  it(`bounds a silence to ${SILENCE_BOUNDS.days} days unless --allow-long, and to ${SILENCE_BOUNDS.allowLongDays} days then, before Alertmanager is reached (exit 2)`, async () => {
    // An unreachable Alertmanager: a refusal that came after connecting would name the connection instead.
    const run = (...args: string[]) => runInProcess(OPS, ['silence', '--env', 'local', '--alertmanager-url', 'http://127.0.0.1:9', '--alert', 'DeploymentFailed', '--comment', 'INC-1', ...args], ROOT, {});
    for (const duration of [`${SILENCE_BOUNDS.days + 1}d`, `${SILENCE_BOUNDS.days * 24}h1m`]) {
      const long = await run('--duration', duration);
      expect(long.status, duration).toBe(2);
      expect(long.stderr, duration).toContain(`--duration "${duration}" is longer than ${SILENCE_BOUNDS.days} days: give --allow-long for a longer silence (at most ${SILENCE_BOUNDS.allowLongDays} days)`);
    }
    for (const duration of ['1000y', '300000y']) {
      const long = await run('--duration', duration);
      expect(long.status, duration).toBe(2);
      expect(long.stderr, duration).toContain(`--duration "${duration}" is longer than ${SILENCE_BOUNDS.allowLongDays} days, the bound of --allow-long`);
    }
    const allowed = await run('--duration', `${SILENCE_BOUNDS.days + 1}d`, '--allow-long');
    expect(allowed.stderr).not.toContain('longer than');
    const tooLong = await run('--duration', '1000y', '--allow-long');
    expect(tooLong.status).toBe(2);
    expect(tooLong.stderr).toContain(`--duration "1000y" is longer than ${SILENCE_BOUNDS.allowLongDays} days, the bound of --allow-long`);
    expect((await runInProcess(OPS, ['silence', '--env', 'local', '--list', '--allow-long', '--alertmanager-url', 'http://127.0.0.1:9'], ROOT, {})).stderr).toContain('--matcher, --duration, --allow-long and --comment go with --alert');
  });

  it('expires only a silence id, Alertmanager\'s UUID, refusing anything else before it is reached (exit 2)', async () => {
    for (const id of ['..', '../silences', '', 'abc', '7c2a7e1e-0000-4000-8000-00000000000g']) {
      const run = await runInProcess(OPS, ['silence', '--env', 'local', '--alertmanager-url', 'http://127.0.0.1:9', '--expire', id], ROOT, {});
      expect(run.status, id).toBe(2);
      expect(run.stderr, id).toContain(`--expire "${id}" must be a silence id (a UUID, as ops silence --list shows it)`);
    }
  });
});

describe('ops silence and canary: finding their servers in the cluster', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-silence-');

  it('looks for a ready pod of the monitoring stack\'s Alertmanager and names what it found none of', async () => {
    api.objects = {
      Pod: [
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'alertmanager-main-0', namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'alertmanager' } }, status: { phase: 'Pending' } },
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'prometheus-main-0', namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      ],
    };
    const run = await runInProcess(OPS, ['silence', '--env', 'local', '--list'], ROOT, { KUBECONFIG: kubeconfig(), ALERTMANAGER_URL: '' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('no ready Alertmanager pod (app.kubernetes.io/name=alertmanager) in namespace monitoring');
    // The ready Prometheus pod beside it is not taken: the list asks for Alertmanager's label.
    expect(api.requests.at(-1)).toBe('GET /api/v1/namespaces/monitoring/pods');
  });

  it('looks for a ready load tester pod in Flagger\'s namespace and names what it found none of', async () => {
    api.objects = { Pod: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'flagger-loadtester-1', namespace: 'flagger-system', labels: { app: 'loadtester' } }, status: { phase: 'Pending' } }] };
    const run = await runInProcess(OPS, ['canary', '--env', 'production', '--app', 'webapp'], ROOT, { KUBECONFIG: kubeconfig() });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('no ready load tester pod (app=loadtester) in namespace flagger-system');
  });
});

describe('ops emergency: a node\'s health, and the input', () => {
  const node = (conditions: object[], unschedulable?: boolean): LiveObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, spec: unschedulable === undefined ? {} : { unschedulable }, status: { conditions } });

  it('reads a node as kubectl get nodes shows it, with the pressures that are on', () => {
    expect(nodeState(node([{ type: 'Ready', status: 'True' }, { type: 'MemoryPressure', status: 'False' }]))).toEqual({ name: 'node-a', ready: true, unschedulable: false, problems: [] });
    expect(nodeState(node([{ type: 'Ready', status: 'Unknown', message: 'Kubelet stopped posting node status.' }, { type: 'DiskPressure', status: 'True' }], true))).toEqual({
      name: 'node-a',
      ready: false,
      unschedulable: true,
      problems: ['not Ready: Kubelet stopped posting node status.', 'DiskPressure'],
    });
  });

  it('scales to the contract\'s example, 5 replicas, and says so in its usage', async () => {
    expect(EMERGENCY_REPLICAS.outageScaleTarget).toBe(5);
    const help = await runInProcess(OPS, ['emergency', '--help'], ROOT, {});
    expect(help.stdout).toContain('scaled to 5 replicas (the contract\'s example)');
  });

  it('refuses an unknown action, a node where none goes, a missing one, and an outage without a reason (exit 2)', async () => {
    for (const [args, message] of [
      [['emergency', 'restart', '--env', 'local'], 'the action must be one of outage, restore, crashloop, drain, uncordon'],
      [['emergency', 'outage', 'node-a', '--env', 'local'], 'outage takes no node'],
      [['emergency', 'drain', '--env', 'local'], 'drain takes one node'],
      [['emergency', 'uncordon', 'a', 'b', '--env', 'local'], 'uncordon takes one node'],
      [['emergency', 'drain', 'node-a', '--env', 'local', '--reason', 'x'], '--reason and --app go with outage, restore and crashloop'],
      [['emergency', 'crashloop', '--env', 'local'], '--app <application> is required'],
      [['emergency', 'crashloop', '--env', 'local', '--app', 'webapp', '--fix'], '--reason <text> is required'],
      [['emergency', 'outage', '--env', 'local', '--reason', 'x', '--fix'], '--fix goes with crashloop'],
      [['emergency', 'drain', 'node-a', '--env', 'local', '--replicas', '3'], '--replicas goes with outage'],
      [['emergency', 'restore', '--env', 'local', '--reason', 'x'], '--app <application> is required'],
      [['emergency', 'restore', '--env', 'local', '--app', 'webapp'], '--reason <text> is required'],
      [['emergency', 'restore', 'node-a', '--env', 'local', '--app', 'webapp', '--reason', 'x'], 'restore takes no node'],
      [['emergency', 'outage', '--env', 'local', '--reason', 'x', '--backup', 'webapp-day1.bak'], '--backup goes with restore'],
      [['emergency', 'outage', '--env', 'local', '--replicas', '0', '--reason', 'x'], '--replicas "0" must be a whole number, at least 1'],
      [['emergency', 'outage', '--env', 'local', '--replicas', '-3', '--reason', 'x'], '--replicas "-3" must be a whole number, at least 1'],
      [['emergency', 'outage', '--env', 'local'], '--reason <text> is required'],
    ] as const) {
      // Refused before the kubeconfig is read.
      const run = await runInProcess(OPS, args, ROOT, { KUBECONFIG: '/nonexistent/kubeconfig' });
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });
});
