import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { OPS } from '../src/commands/ops';
import { FORBIDDEN_EXEC_NAMESPACES, OPERATE_ROLE, PERMISSIONS, READ_ROLE, operationsRoleManifests, type Manifest } from '../src/cluster/operations-role';
import { OPERATIONS_ROLE } from '../src/contract/naming';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { INFRASTRUCTURE_RELEASES } from '../src/infrastructure/releases';
import { operationsScope } from '../src/synth/operations-scope';
import { applicationControllerPod, argoCdCompares } from './argo-cd-stand-in';
import { fakeApiServerForTests } from './fake-api-server';
import { permits, resourceRequest } from './rbac';
import { DIST, ROOT, readManifests, runInProcess } from './support';

const PLATFORM = loadPlatform();
const OPERATORS = 'platform-operators';
const READERS = 'platform-readers';
const environmentOf = (name: string) => loadEnvironments().find((environment) => environment.name === name)!;
const manifestsOf = (name: string) => operationsRoleManifests(operationsScope(environmentOf(name), PLATFORM), { operators: OPERATORS, readers: READERS });
const rulesOf = (manifest: Manifest) => (manifest as any).rules as { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/** The CRDs' plurals (schemas/crds), by `group/Kind`; the core kinds' plural is their lower-case name with an `s`. */
const CRD_PLURALS = new Map(
  fs
    .readdirSync(path.join(ROOT, 'schemas', 'crds'))
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(fs.readFileSync(path.join(ROOT, 'schemas', 'crds', file), 'utf8')).map((d) => d.toJS()))
    .filter((crd) => crd?.kind === 'CustomResourceDefinition')
    .map((crd) => [`${crd.spec.group}/${crd.spec.names.kind}`, crd.spec.names.plural as string] as const),
);
const pluralOf = (group: string, kind: string) => CRD_PLURALS.get(`${group}/${kind}`) ?? (kind.endsWith('y') ? `${kind.slice(0, -1).toLowerCase()}ies` : `${kind.toLowerCase()}s`);

describe.each(ENVIRONMENT_ORDER)("the live operations' roles of %s", (name) => {
  const manifests = manifestsOf(name);
  const environment = environmentOf(name);
  const roles = manifests.filter((m) => m.kind === 'Role' || m.kind === 'ClusterRole');

  it('grants no wildcard: every group, resource, verb and name is spelled out', () => {
    for (const role of roles) {
      for (const rule of rulesOf(role)) {
        for (const value of [...rule.apiGroups, ...rule.resources, ...rule.verbs, ...(rule.resourceNames ?? [])]) expect(value, `${role.kind} ${role.metadata.name}`).not.toContain('*');
      }
    }
  });

  it("lets no one exec or port-forward in Argo CD's, kube-system's or the infrastructure's namespaces; no ClusterRole holds exec, port-forward, logs, Jobs or Deployments writes", () => {
    expect([...FORBIDDEN_EXEC_NAMESPACES].sort()).toEqual(['argocd', 'cert-manager', 'envoy-gateway-system', 'flagger-system', 'kube-system', 'monitoring']);
    for (const namespace of [...FORBIDDEN_EXEC_NAMESPACES, PLATFORM.controller.namespace]) {
      for (const group of [OPERATORS, READERS]) {
        for (const resource of ['pods/exec', 'pods/portforward']) {
          for (const verb of ['create', 'get']) expect(permits(manifests, group, { verb, apiGroup: '', resource, namespace, name: 'any' }), `${group} ${verb} ${resource} in ${namespace}`).toBe(false);
        }
        expect(permits(manifests, group, { verb: 'create', apiGroup: 'batch', resource: 'jobs', namespace }), `${group} Jobs in ${namespace}`).toBe(false);
        expect(permits(manifests, group, { verb: 'patch', apiGroup: 'apps', resource: 'deployments', namespace, name: 'any' }), `${group} Deployments in ${namespace}`).toBe(false);
      }
    }
    for (const role of roles.filter((r) => r.kind === 'ClusterRole')) {
      for (const rule of rulesOf(role)) {
        expect(rule.resources.filter((resource) => ['pods/exec', 'pods/portforward', 'pods/log', 'secrets'].includes(resource))).toEqual([]);
        if (rule.apiGroups.includes('apps') || rule.apiGroups.includes('batch') || rule.apiGroups.includes('argoproj.io')) expect(rule.verbs.filter((verb) => WRITES.includes(verb))).toEqual([]);
      }
    }
  });

  it('lets the operators exec and port-forward only in the applications\', the database\'s and the broker\'s namespaces, where the verbs do', () => {
    const allowed = (resource: string) =>
      roles.filter((role) => role.kind === 'Role' && rulesOf(role).some((rule) => rule.resources.includes(resource))).map((role) => role.metadata.namespace).sort();
    const applications = environment.applications.map((application) => application.namespace);
    expect(allowed('pods/exec')).toEqual([...applications, environment.database.namespace, environment.broker.namespace].sort());
    expect(allowed('pods/portforward')).toEqual([...applications].sort());
    expect(allowed('pods/log')).toEqual([...applications].sort());
  });

  it("patches Argo CD's Applications only by name: exactly the environment's, as rendered in dist/ (and the root)", () => {
    const files = readManifests(path.join(DIST, name));
    const rendered = [...files.values()].flat().filter((o) => o.kind === 'Application').map((o) => o.metadata.name);
    const patching = roles.flatMap((role) => rulesOf(role).filter((rule) => rule.resources.includes('applications') && rule.verbs.includes('patch')).map((rule) => ({ role, rule })));
    expect(patching).toHaveLength(1);
    expect(patching[0]!.role.kind).toBe('Role');
    expect(patching[0]!.role.metadata.namespace).toBe(PLATFORM.controller.namespace);
    expect(patching[0]!.rule.resourceNames).toEqual([...new Set(['root', ...rendered])].sort());
    expect(permits(manifests, OPERATORS, { verb: 'patch', apiGroup: 'argoproj.io', resource: 'applications', namespace: PLATFORM.controller.namespace, name: 'not-ours' })).toBe(false);
    // AppProjects are never written.
    expect(roles.flatMap(rulesOf).filter((rule) => rule.resources.includes('appprojects')).flatMap((rule) => rule.verbs)).toEqual(['get', 'list']);
  });

  it('gives the readers no write, no Secret, no exec, no port-forward, no log', () => {
    for (const role of roles.filter((r) => r.metadata.name === READ_ROLE)) {
      for (const rule of rulesOf(role)) {
        expect(rule.verbs).toEqual(['get', 'list']);
        expect(rule.resources.filter((resource) => resource.includes('/') || resource === 'secrets')).toEqual([]);
      }
    }
    const readerBindings = manifests.filter((m) => (m as any).subjects?.[0]?.name === READERS);
    expect(readerBindings.map((m) => (m as any).roleRef.name)).toEqual(readerBindings.map(() => READ_ROLE));
  });

  // drift reads every object it compares: every kind rendered into dist/ but Secrets (never read).
  it('lets the readers read every kind the environment renders, but Secrets', () => {
    const objects = [...readManifests(path.join(DIST, name)).values()].flat();
    for (const object of objects.filter((o) => o.kind !== 'Secret')) {
      const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
      const request = { verb: 'get', apiGroup: group, resource: pluralOf(group, object.kind), name: object.metadata.name, ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }) };
      expect(permits(manifests, READERS, request), `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`).toBe(true);
    }
  });

  it("binds the broker chart's Role (the users' password Secrets, by name) to the operators in the broker's namespace, and to no reader", () => {
    const bindings = manifests.filter((m) => m.kind === 'RoleBinding' && (m as any).roleRef.name === OPERATIONS_ROLE);
    expect(bindings.map((b) => [b.metadata.namespace, (b as any).subjects[0].name])).toEqual([[environment.broker.namespace, OPERATORS]]);
  });
});

describe('npm run ops -- role', () => {
  it('prints each rule with the verbs that need it, from the one table the roles are made from', async () => {
    const result = await runInProcess(OPS, ['role', '--env', 'local', '--group', OPERATORS, '--readers-group', READERS], ROOT, {});
    expect(result.status, result.stderr).toBe(0);
    const documents = parseAllDocuments(result.stdout);
    // What it prints is what the bootstrap applies.
    expect(documents.map((d) => d.toJS())).toEqual(JSON.parse(JSON.stringify(manifestsOf('local'))));
    // Each rule's comment, in the order of the rules.
    const comments = [...result.stdout.matchAll(/^\s*# (needed by: .*)$/gm)].map((match) => match[1]);
    expect(comments.length).toBe(documents.flatMap((d) => (d.toJS().rules ?? []) as unknown[]).length);
    const scope = operationsScope(environmentOf('local'), PLATFORM);
    const expected = [READ_ROLE, OPERATE_ROLE].flatMap((roleName) => {
      const level = roleName === READ_ROLE ? 'read' : 'operate';
      return manifestsOf('local')
        .filter((m) => (m.kind === 'ClusterRole' || m.kind === 'Role') && m.metadata.name === roleName)
        .flatMap((m) =>
          PERMISSIONS.filter((p) => p.level === level && (m.kind === 'ClusterRole' ? p.scope === 'cluster' : p.scope !== 'cluster' && scopeHolds(p.scope, m.metadata.namespace!, scope))).map((p) => `needed by: ${p.neededBy.join('; ')}`),
        );
    });
    expect(comments).toEqual(expected);
    for (const permission of PERMISSIONS) expect(permission.neededBy.length).toBeGreaterThan(0);
  });

  it('refuses an empty group, and the same group for both roles, with exit code 2', async () => {
    const empty = await runInProcess(OPS, ['role', '--env', 'local', '--group', ' '], ROOT, {});
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('--group must name a group');
    const same = await runInProcess(OPS, ['role', '--env', 'local', '--group', 'a', '--readers-group', 'a'], ROOT, {});
    expect(same.status).toBe(2);
    expect(same.stderr).toContain('--readers-group must differ from --group');
  });
});

function scopeHolds(scope: string, namespace: string, of: ReturnType<typeof operationsScope>): boolean {
  if (scope === 'controller') return namespace === of.controllerNamespace;
  if (scope === 'applications') return of.applicationNamespaces.includes(namespace);
  if (scope === 'database') return namespace === of.databaseNamespace;
  return namespace === of.brokerNamespace;
}

// The verbs against the fake API server: each request they send is one the role permits.
describe("the verbs' requests, each permitted by the role that runs them", () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-operations-role-');
  const namespace = PLATFORM.controller.namespace;
  const manifests = manifestsOf('local');
  const release = INFRASTRUCTURE_RELEASES.flaggerLoadTester;
  const automated = { syncPolicy: { automated: { prune: true, selfHeal: true } } };
  const application = (appName: string, spec: object, status: object = {}) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: appName, namespace, annotations: {} }, spec, status });
  const serve = () => {
    const source = { repoURL: release.chart.repoURL, chart: release.chart.chart, targetRevision: release.chart.version };
    const releaseApp = application(release.name, { source, ...automated }, { sync: { status: 'Synced', revision: release.chart.version }, health: { status: 'Healthy' }, history: [] });
    api.objects = { Application: [application('root', automated), application('infrastructure', automated), releaseApp], Pod: [applicationControllerPod(namespace)] };
    api.requests.length = 0;
    api.afterPatch = (kind, app) => argoCdCompares(kind, app);
  };
  const denied = (group: string) => api.requests.map((line) => ({ line, request: resourceRequest(line) })).filter(({ request }) => request !== undefined && !permits(manifests, group, request));

  it.each([
    ['status', ['status', '--env', 'local']],
    ['drift --no-refresh', ['drift', '--env', 'local', '--no-refresh']],
  ])('%s: every request is a reader\'s', async (_name, args) => {
    serve();
    await runInProcess(OPS, args, ROOT, { KUBECONFIG: kubeconfig() });
    expect(api.requests.length).toBeGreaterThan(0);
    expect(denied(READERS).map((d) => d.line)).toEqual([]);
  });

  it("rollback --level package: every request is an operator's (the pauses, the version, the sync), and no write a reader's", async () => {
    serve();
    const releaseApp = api.objects['Application']!.find((app) => app.metadata.name === release.name)!;
    const source = releaseApp.spec.source;
    const older = '0.0.1';
    releaseApp.status.history = [older, source.targetRevision].map((version: string, i: number) => ({ id: i, revision: version, source: { ...source, targetRevision: version }, deployedAt: `2026-01-0${i + 1}T00:00:00Z`, initiatedBy: { automated: true } }));
    // Argo CD's controller: a sync operation ends Succeeded at the version asked for.
    api.afterPatch = (kind, app, body) => {
      argoCdCompares(kind, app);
      if (kind !== 'Application' || body.operation === undefined) return;
      const version = app.spec.source.targetRevision;
      const operationState = { phase: 'Succeeded', message: 'successfully synced', operation: app.operation, syncResult: { revision: version }, finishedAt: '2026-02-01T00:00:00Z' };
      delete app.operation;
      const entry = { id: app.status.history.at(-1).id + 1, revision: version, source: { ...app.spec.source }, deployedAt: '2026-02-01T00:00:00Z', initiatedBy: body.operation.initiatedBy };
      app.status = { ...app.status, operationState, reconciledAt: '2026-02-01T00:00:01Z', sync: { status: 'Synced', revision: version }, health: { status: 'Healthy' }, history: [...app.status.history, entry] };
    };
    const run = await runInProcess(OPS, ['rollback', '--env', 'local', '--level', 'package', '--release', release.name, '--by', 'ana', '--reason', 'INC-2'], ROOT, { KUBECONFIG: kubeconfig() });
    expect(run.status, run.stderr).toBe(0);
    const writes = api.requests.filter((line) => !line.startsWith('GET '));
    expect(writes.length).toBeGreaterThan(3);
    expect(denied(OPERATORS).map((d) => d.line)).toEqual([]);
    expect(denied(READERS).map((d) => d.line)).toEqual(writes);
  });

  it.each([
    ['pause', ['pause', '--env', 'local', '--reason', 'INC-1', '--by', 'ana']],
    ['resume', ['resume', '--env', 'local']],
  ])("%s: every request is an operator's, and its patches no reader's", async (_name, args) => {
    serve();
    await runInProcess(OPS, args, ROOT, { KUBECONFIG: kubeconfig() });
    const patches = api.requests.filter((line) => line.startsWith('PATCH '));
    expect(patches.length).toBeGreaterThan(0);
    expect(denied(OPERATORS).map((d) => d.line)).toEqual([]);
    expect(denied(READERS).map((d) => d.line)).toEqual(patches);
  });
});
