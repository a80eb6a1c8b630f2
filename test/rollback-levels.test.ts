import { describe, expect, it } from 'vitest';
import { REVISION_ANNOTATION } from '../src/cluster/rollout-history';
import { OPS } from '../src/commands/ops';
import { applicationChartId } from '../src/contract/layout';
import { loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { liveWorkloadsOf } from '../src/strategies/values-registry';
import { applicationControllerPod, argoCdCompares } from './argo-cd-stand-in';
import { fakeApiServerForTests } from './fake-api-server';
import { ROOT, runInProcess } from './support';

// ops rollback --level orchestrator|controller: everything the request names is checked
// against the cluster before automated sync is paused, so a refused rollback leaves the
// environment as it found it.
describe('ops rollback: validated before anything is paused', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-rollback-');
  const namespace = loadPlatform().controller.namespace;
  const environment = loadEnvironments().find((candidate) => candidate.name === 'local')!;
  const application = environment.applications[0]!;
  const name = applicationChartId(application.name);
  const serving = liveWorkloadsOf(application).filter((workload) => workload.serves);
  const source = { repoURL: 'https://git.example.com/platform.git', path: `dist/local/${application.name}`, targetRevision: 'main' };
  const entry = (id: number, revision: string) => ({ id, revision, source, deployedAt: `2026-02-0${id}T00:00:00Z`, initiatedBy: { automated: true } });
  const app = (appName: string, history: object[] = []) => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: appName, namespace, annotations: {}, resourceVersion: '7' },
    spec: { source, syncPolicy: { automated: { prune: true, selfHeal: true } } },
    status: { history, sync: { status: 'Synced' } },
  });
  const template = (tag: string) => ({ metadata: { labels: { app: application.name } }, spec: { containers: [{ name: application.name, image: `registry.example.com/webapp:${tag}` }] } });
  const deployments = serving.map((workload) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: workload.deployment, namespace: application.namespace, annotations: { [REVISION_ANNOTATION]: '2' } }, spec: { template: template('v2') } }));
  const replicaSets = serving.flatMap((workload) =>
    [1, 2].map((revision) => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: `${workload.deployment}-${revision}`, namespace: application.namespace, annotations: { [REVISION_ANNOTATION]: String(revision) }, ownerReferences: [{ kind: 'Deployment', name: workload.deployment }] },
      spec: { template: template(`v${revision}`) },
      status: { replicas: 1 },
    })),
  );
  const serve = (history: object[]) => {
    api.objects = { Application: [app('root'), app(name, history)], Pod: [applicationControllerPod(namespace)], Deployment: structuredClone(deployments), ReplicaSet: structuredClone(replicaSets) };
    api.patches.length = 0;
    // The stand-in controller compares at once, and fails any operation it is given (the test looks only at what was asked).
    api.afterPatch = (kind, live, body) => {
      argoCdCompares(kind, live);
      if (body.operation !== undefined) {
        live.status.operationState = { phase: 'Failed', message: 'stand-in', operation: live.operation, startedAt: '2026-02-09T00:00:00Z', finishedAt: '2026-02-09T00:00:01Z' };
        delete live.operation;
      }
    };
  };
  const rollback = (...args: string[]) => runInProcess(OPS, ['rollback', '--env', 'local', '--app', application.name, '--by', 'ana', '--timeout', '5', ...args], ROOT, { KUBECONFIG: kubeconfig() });

  it('refuses a --to-revision the rollout history lacks before pausing anything (exit 1)', async () => {
    serve([entry(1, 'a'.repeat(40))]);
    const run = await rollback('--level', 'orchestrator', '--to-revision', '9');
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain(`Deployment ${application.namespace}/${serving[0]!.deployment}: no revision 9; its revisions: 1, 2`);
    expect(run.stderr + run.stdout).not.toContain('roll git back too');
    expect(api.patches).toEqual([]);
  });

  it('refuses a --to the Application history lacks before pausing anything (exit 1)', async () => {
    serve([entry(1, 'a'.repeat(40)), entry(2, 'b'.repeat(40))]);
    const run = await rollback('--level', 'controller', '--to', '9');
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain(`Application ${name} has no history entry 9 (its entries: 1, 2)`);
    expect(api.patches).toEqual([]);
  });

  it('refuses the controller level before pausing anything when every history entry names the revision that runs (exit 1)', async () => {
    serve([entry(1, 'b'.repeat(40)), entry(2, 'b'.repeat(40))]);
    const run = await rollback('--level', 'controller');
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain(`Application ${name} has no history entry with another revision than the one that runs (${'b'.repeat(12)})`);
    expect(api.patches).toEqual([]);
  });

  it('goes back by default to the newest history entry whose revision differs from the one that runs, however often that one was synced', async () => {
    serve([entry(1, 'a'.repeat(40)), entry(2, 'b'.repeat(40)), entry(3, 'c'.repeat(40)), entry(4, 'c'.repeat(40))]);
    const run = await rollback('--level', 'controller');
    const operation = api.patches.find((patch) => patch.body.operation !== undefined);
    expect(operation?.body.operation.sync.revision, run.stdout + run.stderr).toBe('b'.repeat(40));
    expect(operation?.body.operation.info).toContainEqual({ name: 'Reason', value: 'rollback to history 2' });
    // Paused first: the root, then the application.
    expect(api.patches.findIndex((patch) => patch.name === name && patch.body.spec?.syncPolicy?.automated?.enabled === false)).toBeLessThan(api.patches.indexOf(operation!));
  });
});
