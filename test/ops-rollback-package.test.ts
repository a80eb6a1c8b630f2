import { describe, expect, it } from 'vitest';
import { fakeApiServerForTests } from './fake-api-server';
import { REFRESH_ANNOTATION, REFRESH_TIMESTAMP_ANNOTATION } from '../src/cluster/argo-cd';
import { applicationControllerPod, argoCdCompares } from './argo-cd-stand-in';
import { SYNC_PAUSE_ANNOTATIONS } from '../src/contract/choices';
import { INFRASTRUCTURE_RELEASES } from '../src/infrastructure/releases';
import { loadEnvironments } from '../src/environments';
import type { ReleaseName } from '../src/contract/release-versions';
import { OPS } from '../src/commands/ops';
import { loadPlatform } from '../src/environments/platform';
import { ROOT, runInProcess } from './support';
import { projectChartVersions } from '../src/synth/chart-versions';

describe('ops rollback --level package: an infrastructure release back to a chart version of its history', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-package-rollback-');
  const namespace = loadPlatform().controller.namespace;
  const release = INFRASTRUCTURE_RELEASES.flaggerLoadTester;
  // The version local's values pin the release to (infrastructure.versions).
  const pinned = loadEnvironments().find((environment) => environment.name === 'local')!.infrastructure.versions[release.name as ReleaseName];
  // A later and an earlier version than the pin, as history entries (chart versions are data here).
  const next = pinned.replace(/\d+$/, (patch) => String(Number(patch) + 1));
  const older = '0.0.1';
  const automated = { syncPolicy: { automated: { prune: true, selfHeal: true } } };
  const application = (name: string, spec: object, status: object = {}) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace, annotations: {} }, spec, status });
  /** The release's Application after syncs of `versions`, oldest first, the last one deployed. */
  const releaseApplication = (versions: readonly string[]) => {
    const source = { repoURL: release.chart.repoURL, chart: release.chart.chart, targetRevision: versions.at(-1) };
    return application(release.name, { source, ...automated }, {
      sync: { status: 'Synced', revision: versions.at(-1) },
      health: { status: 'Healthy' },
      history: versions.map((version, i) => ({ id: i, revision: version, source: { ...source, targetRevision: version }, deployedAt: `2026-01-0${i + 1}T00:00:00Z`, initiatedBy: { automated: true } })),
    });
  };
  /** Argo CD's controller for a sync operation: ends it as `phase`, and on success records the version synced in the history. */
  const controller = (phase: 'Succeeded' | 'Failed', leftBehind: object[] = []) => (kind: string, app: any, body: any) => {
    argoCdCompares(kind, app);
    if (kind !== 'Application' || body.operation === undefined) return;
    const version = app.spec.source.targetRevision;
    const history = app.status.history;
    // The operation ends, then Argo CD compares the Application again (a later reconciledAt).
    const operationState = { phase, message: phase === 'Failed' ? 'one or more objects failed to apply' : 'successfully synced', operation: app.operation, syncResult: { revision: version }, finishedAt: '2026-02-01T00:00:00Z' };
    delete app.operation;
    if (phase === 'Failed') return void (app.status = { ...app.status, operationState });
    const entry = { id: history.at(-1).id + 1, revision: version, source: { ...app.spec.source }, deployedAt: '2026-02-01T00:00:00Z', initiatedBy: body.operation.initiatedBy };
    app.status = { ...app.status, operationState, reconciledAt: '2026-02-01T00:00:01Z', sync: { status: leftBehind.length > 0 ? 'OutOfSync' : 'Synced', revision: version }, history: [...history, entry], resources: leftBehind };
  };
  const serve = (versions: readonly string[]) => {
    api.objects = { Application: [application('root', automated), application('infrastructure', automated), releaseApplication(versions)], Pod: [applicationControllerPod(namespace)] };
    api.patches.length = 0;
  };
  const rollback = (...args: string[]) => runInProcess(OPS, ['rollback', '--env', 'local', '--level', 'package', '--release', release.name, '--by', 'ana', ...args], ROOT, { KUBECONFIG: kubeconfig() });

  it('pauses the root, infrastructure and the release, in that order, then sets the previous version and syncs it, unforced, without pruning', async () => {
    serve([pinned, next]);
    const extra = { kind: 'ConfigMap', name: 'upgrade-only', namespace: 'flagger-system', status: 'OutOfSync', requiresPruning: true };
    api.afterPatch = controller('Succeeded', [extra]);
    const run = await rollback('--reason', 'INC-7');
    expect(run.status, run.stderr).toBe(0);
    const pause = { metadata: { annotations: { [SYNC_PAUSE_ANNOTATIONS.by]: 'ana', [SYNC_PAUSE_ANNOTATIONS.reason]: 'INC-7', [REFRESH_ANNOTATION]: 'normal', [REFRESH_TIMESTAMP_ANNOTATION]: expect.any(String) } }, spec: { syncPolicy: { automated: { enabled: false } } } };
    expect(api.patches.slice(0, 4)).toEqual([
      { kind: 'Application', name: 'root', body: pause },
      { kind: 'Application', name: 'infrastructure', body: pause },
      { kind: 'Application', name: release.name, body: pause },
      { kind: 'Application', name: release.name, body: { spec: { source: { targetRevision: pinned } } } },
    ]);
    const { operation } = api.patches[4]!.body;
    expect(operation.initiatedBy).toEqual({ username: 'ana' });
    expect(operation.sync).toEqual({ prune: false, syncStrategy: { hook: { force: false } } });
    expect(run.stdout).toMatch(new RegExp(`history:\\n  0  ${pinned}  .*automated\\n  1  ${next}  `));
    expect(run.stdout).toContain(`deployed ${next}; going back to ${pinned} (the newest other version of the history)`);
    expect(run.stdout).toContain(`PASS synced revision: ${pinned}`);
    expect(run.stdout).toContain(`PASS newest history entry 2: ${pinned}`);
    expect(run.stdout).toContain(`left in the cluster, not in ${pinned} (--prune deletes them, as automated sync does after resume where its policy prunes): ConfigMap flagger-system/upgrade-only`);
    expect(run.stdout).toContain(`automated sync stays paused (root, infrastructure, ${release.name}).`);
    expect(run.stdout).toContain(`this checkout's src/environments/local/environment.yaml pins ${release.name} to ${pinned} already; once the merged branch does too, npm run ops -- resume --env local`);
  });

  it('goes back to --to, with a forced sync and pruning when asked, and says that git\'s pin must follow', async () => {
    serve([older, pinned, next]);
    api.afterPatch = controller('Succeeded');
    const run = await rollback('--to', older, '--force', '--prune', '--output', 'json');
    expect(run.status, run.stderr).toBe(0);
    expect(api.patches[3]!.body).toEqual({ spec: { source: { targetRevision: older } } });
    expect(api.patches[4]!.body.operation.sync).toEqual({ prune: true, syncStrategy: { hook: { force: true } } });
    expect(JSON.parse(run.stdout)).toEqual({ environment: 'local', release: release.name, level: 'package', from: next, to: older, passed: true, detail: `release ${release.name} back on chart version ${older} (from ${next})`, leftToPrune: [] });
    expect(run.stderr).toContain(`git's pin must follow: infrastructure.versions.${release.name} of src/environments/local/environment.yaml to ${older} (this checkout pins ${pinned}): npm run upgrade -- --env local --release ${release.name} --version ${older} --allow-downgrade, review, merge; then npm run ops -- resume --env local`);
  });

  it('goes back to the chart version of the history entry --to-revision names (Argo CD\'s history id)', async () => {
    serve([older, pinned, next]);
    api.afterPatch = controller('Succeeded');
    const run = await rollback('--to-revision', '0');
    expect(run.status, run.stderr).toBe(0);
    expect(api.patches[3]!.body).toEqual({ spec: { source: { targetRevision: older } } });
    expect(run.stdout).toContain(`deployed ${next}; going back to ${older} (history entry 0)`);
  });

  it('refuses a --to-revision its history does not have, naming the entries, changing nothing', async () => {
    serve([pinned, next]);
    const run = await rollback('--to-revision', '7');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`--to-revision 7: the history of Application ${release.name} has no entry 7 (its entries: 0, 1)`);
    expect(api.patches).toEqual([]);
  });

  it('takes the newest version other than the deployed one, however often the deployed one was synced', async () => {
    serve([older, next, next]);
    api.afterPatch = controller('Succeeded');
    const run = await rollback();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`deployed ${next}; going back to ${older}`);
  });

  it('refuses, changing nothing, when the history has no other version, or not the one --to names (exit 1)', async () => {
    serve([pinned, pinned]);
    const none = await rollback();
    expect(none.status).toBe(1);
    expect(none.stderr).toContain(`release ${release.name}: its history has no chart version other than the deployed ${pinned}: give --to, or change the version in git`);
    serve([pinned, next]);
    const unknown = await rollback('--to', '9.9.9');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain(`--to 9.9.9: the history of Application ${release.name} has no chart version 9.9.9 (its versions: ${pinned}, ${next})`);
    expect(api.patches).toEqual([]);
  });

  it('fails with the sync\'s reason and leaves automated sync paused when the sync fails (exit 1)', async () => {
    serve([pinned, next]);
    api.afterPatch = controller('Failed');
    const run = await rollback();
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`ops rollback (package): FAILED: sync of ${release.name} to ${pinned}: sync Failed: one or more objects failed to apply`);
    expect(run.stdout).toContain(`run the rollback again once that is mended, or npm run ops -- resume --env local to return ${release.name} to git's pin (${pinned} in this checkout)`);
    expect(api.objects['Application']!.every((app) => app.spec.syncPolicy.automated.enabled === false)).toBe(true);
  });

  it('refuses, changing nothing, while Argo CD runs another operation on the release (exit 1)', async () => {
    serve([pinned, next]);
    api.objects['Application']![2]!.status.operationState = { phase: 'Running', startedAt: '2026-02-01T00:00:00Z', operation: { initiatedBy: { username: 'bob' } } };
    const run = await rollback();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`Application ${release.name} has a sync operation running (started 2026-02-01T00:00:00Z): its history lacks what it deploys until it ends`);
    expect(api.patches).toEqual([]);
  });
});

describe("ops rollback --level package --app: an application's published chart back to a chart version of its history", () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-app-package-rollback-');
  const namespace = loadPlatform().controller.namespace;
  const environment = loadEnvironments().find((candidate) => candidate.name === 'local')!;
  const app = environment.applications[0]!.name;
  // The version this checkout's versions file gives the application, a later and an earlier one (data, not pinned).
  const pinned = projectChartVersions(ROOT, 'local')[app]!.version;
  const next = pinned.replace(/\d+$/, (patch) => String(Number(patch) + 1));
  const older = '0.0.1';
  const automated = { syncPolicy: { automated: { prune: true, selfHeal: true } } };
  const application = (name: string, spec: object, status: object = {}) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace, annotations: {} }, spec, status });
  // Several sources, the Helm chart second, so its position matters (the Secrets from git first).
  const secrets = { repoURL: 'git@github.com:example/platform-gitops.git', targetRevision: 'main', path: `secrets/local/${app}`, plugin: { name: 'sops' } };
  const chart = { repoURL: `ghcr.io/example/platform-gitops-charts/local`, chart: app, helm: { releaseName: app } };
  const commit = 'a'.repeat(40);
  /** The application's Application after syncs of `versions`, oldest first, as Argo CD records several sources (types.go RevisionHistory: sources, revisions). */
  const published = (versions: readonly string[]) =>
    application(app, { sources: [secrets, { ...chart, targetRevision: versions.at(-1) }], ...automated }, {
      sync: { status: 'Synced', revisions: [commit, versions.at(-1)] },
      health: { status: 'Healthy' },
      history: versions.map((version, i) => ({ id: i, revisions: [commit, version], sources: [secrets, { ...chart, targetRevision: version }], deployedAt: `2026-01-0${i + 1}T00:00:00Z`, initiatedBy: { automated: true } })),
    });
  /** Argo CD's controller for a sync of several sources: the operation Succeeded, each source's revision in the status and a new history entry. */
  const controller = (kind: string, live: any, body: any) => {
    argoCdCompares(kind, live);
    if (kind !== 'Application' || Array.isArray(body) || body.operation === undefined) return;
    const revisions = live.spec.sources.map((source: any) => (source.chart === undefined ? commit : source.targetRevision));
    const entry = { id: live.status.history.at(-1).id + 1, revisions, sources: structuredClone(live.spec.sources), deployedAt: '2026-02-01T00:00:00Z', initiatedBy: body.operation.initiatedBy };
    const operationState = { phase: 'Succeeded', message: 'successfully synced', operation: live.operation, syncResult: { revisions }, finishedAt: '2026-02-01T00:00:00Z' };
    delete live.operation;
    live.status = { ...live.status, operationState, reconciledAt: '2026-02-01T00:00:01Z', sync: { status: 'Synced', revisions }, history: [...live.status.history, entry] };
  };
  const serve = (target: object) => {
    api.objects = { Application: [application('root', automated), application('infrastructure', automated), target], Pod: [applicationControllerPod(namespace)] };
    api.patches.length = 0;
    api.afterPatch = controller;
  };
  const rollback = (...args: string[]) => runInProcess(OPS, ['rollback', '--env', 'local', '--level', 'package', '--app', app, '--by', 'ana', ...args], ROOT, { KUBECONFIG: kubeconfig() });

  it('pauses the root and the application (not infrastructure), sets the previous version at the Helm source\'s position, syncs and verifies it', async () => {
    serve(published([pinned, next]));
    const run = await rollback('--reason', 'INC-8');
    expect(run.status, run.stderr).toBe(0);
    const pause = { metadata: { annotations: { [SYNC_PAUSE_ANNOTATIONS.by]: 'ana', [SYNC_PAUSE_ANNOTATIONS.reason]: 'INC-8', [REFRESH_ANNOTATION]: 'normal', [REFRESH_TIMESTAMP_ANNOTATION]: expect.any(String) } }, spec: { syncPolicy: { automated: { enabled: false } } } };
    expect(api.patches.slice(0, 3)).toEqual([
      { kind: 'Application', name: 'root', body: pause },
      { kind: 'Application', name: app, body: pause },
      {
        kind: 'Application',
        name: app,
        body: [
          { op: 'test', path: '/spec/sources/1/chart', value: app },
          { op: 'replace', path: '/spec/sources/1/targetRevision', value: pinned },
        ],
      },
    ]);
    expect(api.patches[3]!.body.operation.sync).toEqual({ prune: false, syncStrategy: { hook: { force: false } } });
    const live = api.objects['Application']![2]!;
    expect(live.spec.sources).toEqual([secrets, { ...chart, targetRevision: pinned }]);
    expect(api.objects['Application']![1]!.spec.syncPolicy.automated.enabled).toBeUndefined();
    expect(run.stdout).toMatch(new RegExp(`history:\\n  0  ${pinned}  .*automated\\n  1  ${next}  `));
    expect(run.stdout).toContain(`Application ${app}: spec.sources[1].targetRevision ${next} -> ${pinned}`);
    expect(run.stdout).toContain(`PASS synced revision: ${pinned}`);
    expect(run.stdout).toContain(`PASS newest history entry 2: ${pinned}`);
    expect(run.stdout).toContain(`automated sync stays paused (root, ${app}).`);
    expect(run.stdout).toContain(`git's pin: this checkout's src/environments/local/chart-versions.json gives ${app} chart version ${pinned} already; once the merged branch does too, npm run ops -- resume --env local`);
  });

  it('says how git must follow when it goes back to a version git does not give', async () => {
    serve(published([older, pinned, next]));
    const run = await rollback('--to', older, '--output', 'json');
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ environment: 'local', application: app, level: 'package', from: next, to: older, passed: true, detail: `application ${app} back on chart version ${older} (from ${next})`, leftToPrune: [] });
    expect(run.stderr).toContain(
      `git's pin must follow: ${app}'s chart version is what synth writes into dist/local/gitops.yaml from src/environments/local/chart-versions.json (this checkout: ${pinned}), so going back to ${older} for good is a release of the previous tag or values (npm run release or promote (docs/releases.md), then npm run publish -- --env local) or a revert of the commit that moved it, review, merge; then npm run ops -- resume --env local`,
    );
  });

  // An environment that moved from git to its published charts keeps the git entries: commits, never chart versions.
  it('goes back only to chart versions, passing over the history entries of git, before the move to the chart', async () => {
    const moved = published([pinned]);
    const gitEra = { id: 0, revisions: [commit, commit], sources: [secrets, { repoURL: secrets.repoURL, targetRevision: 'main', path: 'dist/local' }], deployedAt: '2025-12-01T00:00:00Z', initiatedBy: { automated: true } };
    moved.status = { ...moved.status, history: [gitEra, ...(moved.status as any).history.map((entry: any) => ({ ...entry, id: entry.id + 1 }))] };
    serve(moved);
    const run = await rollback();
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`  0  ${commit} (no chart: ${secrets.repoURL} ${secrets.path} at ${commit}, ${secrets.repoURL} dist/local at ${commit})  `);
    expect(run.stderr).toContain(`application ${app}: its history has no chart version other than the deployed ${pinned}: give --to, or change the version in git`);
    expect((await rollback('--to', commit)).stderr).toContain(`--to ${commit}: the history of Application ${app} has no chart version ${commit} (its versions: ${pinned})`);
    expect(api.patches).toEqual([]);
  });

  it('refuses a --to version its history does not have before pausing anything (exit 1)', async () => {
    serve(published([pinned, next]));
    const run = await rollback('--to', '9.9.9');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`--to 9.9.9: the history of Application ${app} has no chart version 9.9.9 (its versions: ${pinned}, ${next}); a version never deployed goes through git: a release: npm run release or promote`);
    expect(api.patches).toEqual([]);
  });

  // Seen on the e2e cluster: Synced and Healthy at the new version while its PostSync hook still runs, the history one entry short.
  it('refuses while a sync operation runs, before pausing anything: the history lacks what it deploys (exit 1)', async () => {
    const syncing = published([pinned]);
    syncing.spec = { ...syncing.spec, sources: [secrets, { ...chart, targetRevision: next }] };
    syncing.status = { ...syncing.status, operationState: { phase: 'Running', startedAt: '2026-02-01T00:00:00Z' } };
    serve(syncing);
    const run = await rollback();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`Application ${app} has a sync operation running (started 2026-02-01T00:00:00Z): its history lacks what it deploys until it ends; wait for it (npm run ops -- status --env local), then roll back`);
    expect(api.patches).toEqual([]);
  });

  it('refuses an application whose Application follows git, not a published chart, naming the levels that apply (exit 1)', async () => {
    serve(application(app, { source: { repoURL: secrets.repoURL, targetRevision: 'main', path: 'dist/local' }, ...automated }, { sync: { status: 'Synced', revision: commit }, history: [{ id: 0, revision: commit, source: { repoURL: secrets.repoURL, path: 'dist/local' } }] }));
    const run = await rollback();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`Application ${app} has no Helm chart source (spec.source.chart or spec.sources[].chart): local follows git (dist/local), not a published chart; roll ${app} back at the orchestrator or controller level (--level orchestrator|controller --app ${app})`);
    expect(api.patches).toEqual([]);
  });

  it('refuses --app with --release as a usage error (exit 2)', async () => {
    serve(published([pinned, next]));
    const before = api.requests.length;
    const run = await rollback('--release', INFRASTRUCTURE_RELEASES.flaggerLoadTester.name);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--release and --app are mutually exclusive at --level package');
    expect(api.requests.slice(before)).toEqual([]);
  });
});
