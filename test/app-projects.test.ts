import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderedBootstrapObjects } from '../pulumi/bootstrap-manifests';
import { HELM_CLUSTER_KINDS } from '../src/charts/gitops-chart';
import { loadPlatform } from '../src/environments/platform';
import { INFRASTRUCTURE_RELEASE_NAMES } from '../src/contract/naming';
import { INFRASTRUCTURE_PROJECT, releaseProject } from '../src/contract/platform-charts';
import { DIST, ENVIRONMENT_ORDER, ROOT, findObject, projectEnvironments, readManifests, type K8sObject } from './support';

/**
 * Every AppProject held against what its Applications render (issue: least privilege): each
 * object of each Application's sources (the chart's file in dist/, the Secrets of its group in
 * secrets/) is permitted by its project (kind, namespace), and the project permits nothing
 * more: its kinds are the rendered kinds, its destinations the rendered namespaces and the
 * Application's. Argo CD refuses an object whose kind is not on the project's whitelist or
 * whose namespace is not a destination (argo-cd v3.5.1 docs/user-guide/projects.md).
 */

const PLATFORM = loadPlatform();
const CONTROLLER = PLATFORM.controller.namespace;
/** Argo CD's own configuration: written only by its Helm release. */
const ARGO_CD_CONFIGURATION = ['ConfigMap', 'Secret', 'AppProject'];
const key = (group: string, kind: string) => `${group}/${kind}`;
const groupOf = (object: K8sObject) => (object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '');

/** What an Application's repository sources render: its chart's file, and the sops plugin's Secrets. */
function renderedBy(environment: string, files: Map<string, K8sObject[]>, app: K8sObject): K8sObject[] {
  const sources: any[] = app.spec.sources ?? [app.spec.source];
  return sources.flatMap((source) => {
    // The chart's file in dist/, or the same chart published (Helm over OCI).
    if (source.path === `dist/${environment}` || (source.chart !== undefined && source.chart === app.metadata.name)) {
      return files.get(source.directory?.include ?? `${app.metadata.name}.yaml`) ?? [];
    }
    if (typeof source.path === 'string' && source.path.startsWith(`secrets/${environment}/`)) {
      const dir = path.join(ROOT, source.path);
      return fs
        .readdirSync(dir)
        // The encrypted Secrets the sops plugin decrypts; where none is encrypted yet, the template
        // each one is written from (the same kind, name and namespace).
        .filter((file) => file.endsWith('.sops.yaml') || file.endsWith('.template.yaml'))
        .sort()
        .flatMap((file) => parseAllDocuments(fs.readFileSync(path.join(dir, file), 'utf8')).map((d) => d.toJS() as K8sObject));
    }
    throw new Error(`${app.metadata.name}: a source the test does not read: ${JSON.stringify(source)}`);
  });
}

describe.each(ENVIRONMENT_ORDER)('the AppProjects of %s', (environment) => {
  const files = readManifests(path.join(DIST, environment));
  const gitops = files.get('gitops.yaml')!;
  const projects = gitops.filter((o) => o.kind === 'AppProject');
  const root = renderedBootstrapObjects(environment).application as K8sObject;
  const children = gitops.filter((o) => o.kind === 'Application');
  const releases = (files.get('infrastructure.yaml') ?? []).filter((o) => o.kind === 'Application');
  const all = [root, ...children, ...releases];
  const values = projectEnvironments()[environment]!;
  const applicationNames = values.applications.map((application) => application.name);

  it('gives every Application a project of its own, none shared, default untouched', () => {
    const used = all.map((app) => app.spec.project);
    expect(new Set(used).size).toBe(used.length);
    expect(used).not.toContain('default');
    expect(projects.map((p) => p.metadata.name).sort()).toEqual([...used, 'default'].sort());
    for (const app of children) expect(app.spec.project, app.metadata.name).toBe(app.metadata.name);
    for (const app of releases) expect(app.spec.project, app.metadata.name).toBe(releaseProject(app.metadata.name));
    expect(root.spec.project).toBe(PLATFORM.controller.project);
  });

  it('names every source repository exactly, and lets an Application read only its own sources', () => {
    for (const app of all) {
      const project = findObject(projects, 'AppProject', app.spec.project);
      const repos: string[] = (app.spec.sources ?? [app.spec.source]).map((source: any) => source.repoURL);
      for (const repo of project.spec.sourceRepos) expect(repo, app.metadata.name).not.toMatch(/[*?![\]]/);
      expect([...new Set(repos)].sort(), app.metadata.name).toEqual([...project.spec.sourceRepos].sort());
      expect(project.spec.sourceNamespaces ?? [], app.metadata.name).toEqual([]);
    }
  });

  // Each project against what its Application renders, both ways.
  it.each([...[root], ...children].map((app) => [app.metadata.name, app] as const))('permits exactly what %s renders', (_name, app) => {
    const project = findObject(projects, 'AppProject', app.spec.project);
    const objects = renderedBy(environment, files, app);
    expect(objects.length, app.metadata.name).toBeGreaterThan(0);
    const namespacedKinds = new Set<string>();
    const clusterKinds = new Set<string>();
    const namespaces = new Set<string>([app.spec.destination.namespace]);
    for (const object of objects) {
      if (object.metadata.namespace === undefined) clusterKinds.add(key(groupOf(object), object.kind));
      else {
        namespacedKinds.add(key(groupOf(object), object.kind));
        namespaces.add(object.metadata.namespace);
      }
    }
    const kinds = (list: any[] | undefined) => (list ?? []).map((k) => key(k.group, k.kind)).sort();
    expect(kinds(project.spec.namespaceResourceWhitelist), app.metadata.name).toEqual([...namespacedKinds].sort());
    expect(kinds(project.spec.clusterResourceWhitelist), app.metadata.name).toEqual([...clusterKinds].sort());
    expect(project.spec.destinations.map((d: any) => d.namespace).sort(), app.metadata.name).toEqual([...namespaces].sort());
    for (const destination of project.spec.destinations) expect(destination.server).toBe('https://kubernetes.default.svc');
  });

  it("gives each application's project its own namespace, no RBAC and no cluster-scoped kind, nowhere privileged pods run", () => {
    const privileged = (files.get('infrastructure.yaml') ?? [])
      .filter((o) => o.kind === 'Namespace' && o.metadata.labels?.['pod-security.kubernetes.io/enforce'] !== 'restricted')
      .map((o) => o.metadata.name);
    expect(privileged).toContain('monitoring');
    for (const application of values.applications) {
      const project = findObject(projects, 'AppProject', application.name);
      expect(project.spec.destinations.map((d: any) => d.namespace), application.name).toEqual([application.namespace]);
      expect(privileged).not.toContain(application.namespace);
      expect(project.spec.clusterResourceWhitelist, application.name).toEqual([]);
      expect(project.spec.namespaceResourceWhitelist.filter((k: any) => k.group === 'rbac.authorization.k8s.io'), application.name).toEqual([]);
    }
    // The database's and the broker's projects are theirs; no application's reaches them.
    for (const component of ['database', 'broker']) {
      const project = findObject(projects, 'AppProject', component);
      expect(project.spec.destinations.map((d: any) => d.namespace), component).toEqual([values[component as 'database' | 'broker'].namespace]);
      for (const name of applicationNames) expect(findObject(projects, 'AppProject', name).spec.destinations.map((d: any) => d.namespace)).not.toContain(values[component as 'database' | 'broker'].namespace);
    }
  });

  it("lets the infrastructure write no AppProject and none of Argo CD's configuration: only the root writes AppProjects, only the argocd release the rest", () => {
    const infrastructure = findObject(projects, 'AppProject', INFRASTRUCTURE_PROJECT);
    const infrastructureKinds = infrastructure.spec.namespaceResourceWhitelist.map((k: any) => k.kind);
    for (const kind of ARGO_CD_CONFIGURATION) expect(infrastructureKinds).not.toContain(kind);
    const writesAppProjects = projects.filter((p) => p.spec.namespaceResourceWhitelist?.some((k: any) => k.kind === 'AppProject') || p.spec.namespaceResourceWhitelist === undefined && p.spec.destinations.some((d: any) => d.namespace === CONTROLLER));
    expect(writesAppProjects.map((p) => p.metadata.name).sort()).toEqual([PLATFORM.controller.project, releaseProject(INFRASTRUCTURE_RELEASE_NAMES.argoCd)].sort());
  });

  it("gives each Helm release its chart's repository and its namespace alone; only Argo CD's own release deploys into Argo CD's namespace", () => {
    expect(releases.length).toBeGreaterThan(0);
    for (const app of releases) {
      const project = findObject(projects, 'AppProject', app.spec.project);
      expect(project.spec.sourceRepos, app.metadata.name).toEqual([app.spec.source.repoURL]);
      expect(project.spec.destinations.map((d: any) => d.namespace), app.metadata.name).toEqual([app.spec.destination.namespace]);
      // Gateway API's CRDs chart also ships an admission policy and its binding (gateway-crds-helm
      // v1.9.1 templates/standard-gatewayapi-crds.yaml): a project without them refuses the whole sync.
      expect(project.spec.clusterResourceWhitelist.map((k: any) => key(k.group, k.kind)).sort(), app.metadata.name).toEqual(HELM_CLUSTER_KINDS.map((k) => key(k.group, k.kind)).sort());
      if (app.metadata.name !== INFRASTRUCTURE_RELEASE_NAMES.argoCd) expect(app.spec.destination.namespace, app.metadata.name).not.toBe(CONTROLLER);
    }
    // The cluster rights Helm charts need (CRDs, ClusterRoles, webhooks) are the releases' alone.
    for (const project of projects.filter((p) => !p.metadata.name.startsWith(releaseProject('')))) {
      const kinds = (project.spec.clusterResourceWhitelist ?? []).map((k: any) => k.group);
      expect(kinds, project.metadata.name).not.toContain('rbac.authorization.k8s.io');
      expect(kinds, project.metadata.name).not.toContain('apiextensions.k8s.io');
    }
  });
});
