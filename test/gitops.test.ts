import { pluginExpectation, secretCatalog } from '../src/secrets/catalog';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { STAND_INS } from '../e2e/stand-in-charts';
import { loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { HELM_RELEASE_ROWS, INFRASTRUCTURE_RELEASES, RELEASE_ROWS, isHelmRelease, releaseKustomizationPath, releaseNamespace } from '../src/infrastructure/releases';
import { deliveredChartIds } from '../src/synth';
import { APPLICATIONS_STAGE, DELIVERY_STAGES, ROOT_APPLICATION, stageWave } from '../src/contract/platform-charts';
import { renderedBootstrapObjects } from '../pulumi/bootstrap-manifests';
import { validateAgainstSchema } from '../src/validation/schemas';
import { WAITS_SECONDS } from '../src/contract/contract';
import { DIST, ENVIRONMENT_ORDER, ROOT, committedObjects, findObject, projectEnvironments, readManifests, type K8sObject } from './support';
import { committedArgoCdSettings } from './argo-cd-build';

const REPOSITORY = 'git@github.com:example/platform-gitops.git';
const BRANCH = loadPlatform().repository.targetRevision;
const wave = (object: K8sObject) => Number(object.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0);
const applications = (objects: readonly K8sObject[]) => objects.filter((o) => o.kind === 'Application');

/** The API group of each CRD file read so far (schemas/crds): the files are large, and every environment asks again. */
const crdGroupOfFile = new Map<string, string>();

/** API groups whose CRDs a chart installs: the groups of the CRD files it ships (schemas/crds). */
function crdGroupsOf(chart: string): string[] {
  return (STAND_INS[chart]?.crds ?? []).map((file) => {
    if (!crdGroupOfFile.has(file)) crdGroupOfFile.set(file, parseAllDocuments(fs.readFileSync(path.join(ROOT, 'schemas', 'crds', file), 'utf8'))[0]!.toJS().spec.group);
    return crdGroupOfFile.get(file)!;
  });
}

describe('the branch the Applications follow', () => {
  // Argo CD resolves targetRevision against the repository's refs (e2e: Applications
  // following a branch that does not exist never sync).
  it('is a branch of this repository', () => {
    const refs = [`refs/heads/${BRANCH}`, `refs/remotes/origin/${BRANCH}`];
    const found = refs.filter((ref) => spawnSync('git', ['-C', ROOT, 'rev-parse', '--verify', '--quiet', ref]).status === 0);
    expect(found, `${BRANCH} is neither ${refs.join(' nor ')}`).not.toEqual([]);
  });

  it('is the branch the README and the runbook name', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(`on branch \`${BRANCH}\``);
    const runbook = fs.readFileSync(path.join(ROOT, 'docs', 'runbook.md'), 'utf8');
    // "master" is the contract's word (1.3); a guide names the branch itself.
    for (const text of [readme, runbook]) expect(text).not.toMatch(/(?:branch|merged? to|push(?:ing)? to) `?master\b/);
  });
});

describe.each(ENVIRONMENT_ORDER)('custom resources of %s and the Applications that install their CRDs', (environment) => {
  // Argo CD dry-runs every object of a sync before applying any and refuses the whole
  // sync when a kind is unknown (argo-cd gitops-engine pkg/sync/sync_context.go: "the
  // server could not find the requested resource"), so a custom resource must be synced
  // by an Application of a later root wave than the one holding the chart Application
  // that installs its CRD. Shown on the real engines by test/e2e/broken-sources.test.ts.
  const files = readManifests(path.join(DIST, environment));
  const gitops = files.get('gitops.yaml')!;
  const waveOfFile = new Map<string, number>();
  for (const app of applications(gitops)) {
    for (const source of [app.spec.source, ...(app.spec.sources ?? [])]) {
      if (source?.directory?.include) waveOfFile.set(source.directory.include, wave(app));
    }
  }
  const crdGroups = new Map<string, string>(); // group -> file of the chart Application installing it
  for (const [file, objects] of files) {
    for (const app of applications(objects).filter((a) => a.spec.source?.chart)) {
      for (const group of crdGroupsOf(app.spec.source.chart)) crdGroups.set(group, file);
    }
  }

  it.each([...files.keys()])('%s syncs no custom resource before its CRD is installed', (file) => {
    for (const object of files.get(file)!) {
      const group = object.apiVersion.split('/')[0]!;
      const installer = crdGroups.get(group);
      if (!installer || object.kind === 'Application' || object.kind === 'AppProject') continue;
      expect(file, `${object.kind} ${object.metadata.name} (${group})`).not.toBe(installer);
      expect(waveOfFile.get(file), `${file} syncs ${object.kind} ${object.metadata.name}`).toBeGreaterThan(waveOfFile.get(installer)!);
    }
  });
});

describe.each(ENVIRONMENT_ORDER)('GitOps wiring and infrastructure of %s (1.1, 1.3, 5)', (environment) => {
  const objects = committedObjects(environment);
  const apps = applications(objects);
  const live = environment !== 'production';

  // The table's order (cert-manager, Envoy Gateway, Argo CD, then the rest: 1.3 step 4) is
  // tested on the table (test/releases.test.ts); this is the render of the table.
  it('installs each release of the table as one Application: its chart at the pinned version, namespace and wave', () => {
    const environmentValues = loadEnvironments().find((env) => env.name === environment)!;
    const context = { environment: environmentValues, platform: loadPlatform() };
    const helm = apps.filter((app) => app.spec.source?.chart !== undefined);
    expect(helm.map((app) => app.metadata.name)).toEqual(HELM_RELEASE_ROWS.map((release) => release.name));
    for (const release of RELEASE_ROWS) {
      const app = findObject(apps, 'Application', release.name);
      // A release from its upstream's manifests: the kustomization synth renders (test/argo-cd-kustomization.test.ts).
      expect(app.spec.source, release.name).toMatchObject(
        isHelmRelease(release)
          ? { repoURL: release.chart.repoURL, chart: release.chart.chart, targetRevision: release.chart.version, helm: { releaseName: release.name } }
          : { repoURL: REPOSITORY, path: releaseKustomizationPath(environment, release) },
      );
      expect(app.spec.destination.namespace, release.name).toBe(releaseNamespace(release, context));
      expect(wave(app), release.name).toBe(release.syncWave);
      // Its namespace is a Namespace object of this chart (or argocd, the bootstrap's): never created on install.
      expect(app.spec.syncPolicy.syncOptions, release.name).toEqual(release.syncOptions);
      expect(app.spec.ignoreDifferences, release.name).toEqual(release.ignoreDifferences);
    }
  });

  it('installs the Gateway API standard CRDs (and Envoy Gateway\'s), one release owning them', () => {
    const crds = findObject(apps, 'Application', 'gateway-crds');
    expect(crds.spec.source.chart).toBe('gateway-crds-helm');
    expect(crds.spec.source.helm.valuesObject).toEqual({ crds: { gatewayAPI: { enabled: true, channel: 'standard' }, envoyGateway: { enabled: true } } });
    // Envoy Gateway's EnvoyProxy CRD alone is larger than a client-side apply's annotation.
    expect(crds.spec.syncPolicy.syncOptions).toContain('ServerSideApply=true');
    // gateway-helm installs the same CRDs unless told not to (charts/gateway-helm values.tmpl.yaml `crds.enabled`).
    expect(findObject(apps, 'Application', 'envoy-gateway').spec.source.helm.valuesObject.crds).toEqual({ enabled: false });
  });

  // cert-manager v1.21 docs (content/docs/usage/gateway.md): Gateway API support is enabled
  // with the `config.gatewayAPI.enabled` Helm value; without it the gatewayHTTPRoute solver
  // never creates its HTTPRoute.
  it('enables cert-manager\'s Gateway API support', () => {
    const config = findObject(apps, 'Application', 'cert-manager').spec.source.helm.valuesObject.config;
    expect(config).toEqual({ apiVersion: 'controller.config.cert-manager.io/v1alpha1', kind: 'ControllerConfiguration', gatewayAPI: { enabled: true } });
  });

  // Argo CD v3.5.1 docs/user-guide/helm.md: an OCI Helm chart's repoURL is the registry path
  // without `oci://`, the chart name apart (util/helm/client.go IsHelmOciRepo).
  it('installs Envoy Gateway from its OCI chart, at the version of the release table', () => {
    const source = findObject(apps, 'Application', 'envoy-gateway').spec.source;
    expect(source).toMatchObject({ repoURL: 'docker.io/envoyproxy', chart: 'gateway-helm', targetRevision: INFRASTRUCTURE_RELEASES.envoyGateway.chart.version });
    expect(source.repoURL).not.toMatch(/^[a-z]+:\/\//);
  });

  it(live ? 'syncs every Application but Argo CD\'s own automatically with prune and self-heal' : 'never syncs an Application automatically (planned)', () => {
    for (const app of apps.filter((a) => a.metadata.name !== 'argocd')) {
      if (live) expect(app.spec.syncPolicy.automated, app.metadata.name).toEqual({ prune: true, selfHeal: true });
      else expect(app.spec.syncPolicy.automated, app.metadata.name).toBeUndefined();
    }
  });

  // Argo CD's release carries the sops plugin, which runs beside the age key: a commit that
  // changed its script would run there in local, testing and staging without anyone's action.
  // Changing Argo CD is an operator's sync after review, in every environment.
  it('never syncs Argo CD\'s own release automatically, and says so to the app of apps\' health check', () => {
    const argocd = findObject(apps, 'Application', 'argocd');
    expect(argocd.spec.syncPolicy.automated).toBeUndefined();
    expect(argocd.metadata.annotations?.['platform-gitops.io/sync']).toBe('operator');
    expect(apps.filter((app) => app.metadata.annotations?.['platform-gitops.io/sync'] !== undefined).map((app) => app.metadata.name)).toEqual(['argocd']);
    // Its parent's health counts its health only: OutOfSync until an operator syncs must not
    // hold the waves after it (the check is Lua that Argo CD runs: the e2e cluster runs it).
    const health = committedArgoCdSettings(environment).configs.cm['resource.customizations.health.argoproj.io_Application']!;
    expect(health).toContain('obj.metadata.annotations["platform-gitops.io/sync"] == "operator" then\n  hs.status = st.health.status');
    expect(health.indexOf('platform-gitops.io/sync')).toBeLessThan(health.indexOf('st.sync.status ~= "Synced"'));
  });

  it('retries every sync within the 300 s budget, longer only for the database and the broker', () => {
    for (const app of apps) {
      const { limit, backoff } = app.spec.syncPolicy.retry;
      expect(backoff.duration).toBe('10s');
      expect(backoff.factor).toBe(2);
      const expected = ['database', 'broker'].includes(app.metadata.name) ? { limit: 6, max: '290s' } : { limit: 5, max: '150s' };
      expect({ limit, max: backoff.maxDuration }, app.metadata.name).toEqual(expected);
    }
  });

  it('roots an app of apps at dist/<environment>/, with one child per chart in delivery order', () => {
    const root = renderedBootstrapObjects(environment).application as K8sObject;
    expect(root.spec.source).toEqual({ repoURL: REPOSITORY, targetRevision: BRANCH, path: `dist/${environment}`, directory: { include: 'gitops.yaml' } });
    const env = projectEnvironments()[environment]!;
    const children = deliveredChartIds(env).map((name) => findObject(apps, 'Application', name));
    // One wave per stage; every application's chart in the applications' wave.
    const stages = DELIVERY_STAGES.flatMap(({ id }) => (id === APPLICATIONS_STAGE ? env.applications.map(() => id) : [id]));
    expect(children.map(wave)).toEqual(stages.map((stage) => stageWave(stage)));
    // The infrastructure first (1.3.4), the issuers once cert-manager's CRDs exist; the
    // applications after the database and broker they use, before the environment-wide monitoring.
    expect(DELIVERY_STAGES.map((stage) => stage.id)).toEqual(['infrastructure', 'issuers', 'database', 'broker', 'monitoring', APPLICATIONS_STAGE]);
    for (const child of children) {
      const sources = child.spec.sources ?? [child.spec.source];
      expect(sources[0]).toEqual({ repoURL: REPOSITORY, targetRevision: BRANCH, path: `dist/${environment}`, directory: { include: `${child.metadata.name}.yaml` } });
    }
    // Encrypted Secrets sync with their chart, decrypted by the sops plugin, which is told the
    // catalog's Secrets of the folder (each refused unless it is exactly one of them).
    const group = env.applications[0]!.name;
    expect(findObject(apps, 'Application', group).spec.sources[1]).toEqual({
      repoURL: REPOSITORY,
      targetRevision: BRANCH,
      path: `secrets/${environment}/${group}`,
      plugin: { name: 'sops', env: [{ name: 'SECRETS', value: pluginExpectation(secretCatalog(env).filter((secret) => secret.group === group)) }] },
    });
  });

  it('has exactly one child Application per rendered chart file, and the root syncs only the wiring', () => {
    const files = [...readManifests(path.join(DIST, environment)).keys()];
    const includes = apps.map((app) => (app.spec.sources ?? [app.spec.source])[0].directory?.include).filter((include) => include !== undefined);
    const root = renderedBootstrapObjects(environment).application as K8sObject;
    expect([...includes, root.spec.source.directory.include].sort()).toEqual(files.sort());
    expect(root.spec.source.directory.include).toBe('gitops.yaml');
  });

  it('leaves the root Application to the bootstrap: an Application syncing itself waits for its own health forever', () => {
    expect(apps.map((app) => app.metadata.name)).not.toContain(ROOT_APPLICATION);
  });

  // Argo CD ends any sync operation older than its timeout, retries included, and never
  // retries one it ended (v3.6.1 controller/appcontroller.go: `StartedAt.Add(ctrl.syncTimeout)`,
  // "operation is terminating due to timeout", then `!terminating &&` before a retry), nor
  // starts another automated sync of that revision ("Skipping auto-sync: failed previous sync
  // attempt"). The root's sync waits, wave by wave, for each child Application to be healthy,
  // and `infrastructure`'s for each release: a timeout shorter than that ordered walk leaves a
  // first install half-done until the next commit.
  // The same model as src/infrastructure/ordered-sync.ts (an Application's time: its retries' span),
  // computed from the rendered tree instead of the stage table: the two agree.
  it('lets the sync of the root walk every wave: the operation timeout is the longest ordered wait below it', () => {
    const files = readManifests(path.join(DIST, environment));
    const include = (app: K8sObject): string | undefined => (app.spec.sources ?? [app.spec.source])[0].directory?.include;
    /** Argo CD's retries span (RetryStrategy.NextRetryAt): duration x factor^n, at most maxDuration, `limit` times. */
    const retrySpan = (retry: { limit: number; backoff: { duration: string; factor: number; maxDuration: string } }) =>
      Array.from({ length: retry.limit }, (_, n) => Math.min(parseInt(retry.backoff.duration, 10) * retry.backoff.factor ** n, parseInt(retry.backoff.maxDuration, 10)))
        .reduce((a, b) => a + b, 0);
    /** How long an Application may take to be healthy: its children's waves one after another, or its own retries. */
    const longest = (children: readonly K8sObject[]): number => {
      const byWave = new Map<number, number>();
      for (const child of children) {
        const grandchildren = applications(files.get(include(child) ?? '') ?? []);
        const own = grandchildren.length > 0 ? longest(grandchildren) : retrySpan(child.spec.syncPolicy.retry);
        byWave.set(wave(child), Math.max(byWave.get(wave(child)) ?? 0, own));
      }
      return [...byWave.values()].reduce((a, b) => a + b, 0);
    };
    const root = renderedBootstrapObjects(environment).application as K8sObject;
    const walk = longest(applications(files.get(include(root)!)!));
    const values = committedArgoCdSettings(environment);
    expect(Number(values.configs.params['controller.sync.timeout.seconds'])).toBe(walk);
    // Every wait the contract bounds (8) fits: three infrastructure waits, the database's and the broker's.
    expect(walk).toBeGreaterThan(3 * WAITS_SECONDS.infrastructurePodsReady + WAITS_SECONDS.databasePodReady + WAITS_SECONDS.brokerClusterReady);
    // docs/infrastructure.md gives the figure.
    expect(fs.readFileSync(path.join(ROOT, 'docs', 'infrastructure.md'), 'utf8')).toContain(`but ${walk.toLocaleString('en-US')} s, the contract's waits`);
  });

  // One owner per namespace: its metadata (the Pod Security labels above all) is the
  // infrastructure project's. The infrastructure chart renders every namespace the platform
  // uses as a Namespace object, before any release or chart deploys into it; argocd is the
  // bootstrap's (it exists before any Application). No Application creates one on install
  // (`CreateNamespace=true` would make it a second manager of the same metadata).
  it('has the infrastructure chart render every namespace the platform uses, once, and no Application create one', () => {
    const manifests = readManifests(path.join(DIST, environment));
    const namespaceObjects = [...manifests.entries()].flatMap(([file, objects]) => objects.filter((o) => o.kind === 'Namespace').map((o) => ({ file, name: o.metadata.name })));
    expect(new Set(namespaceObjects.map((n) => n.file))).toEqual(new Set(['infrastructure.yaml']));
    const names = namespaceObjects.map((n) => n.name);
    expect(names).toEqual([...new Set(names)]);
    const used = new Set([...objects.map((o) => o.metadata.namespace), ...apps.map((app) => app.spec.destination.namespace)].filter((n): n is string => n !== undefined));
    expect([...used].filter((namespace) => namespace !== 'argocd' && !names.includes(namespace))).toEqual([]);
    expect(names).not.toContain('argocd');
    for (const app of apps) expect(app.spec.syncPolicy.syncOptions ?? [], app.metadata.name).not.toContain('CreateNamespace=true');
  });

  // Each AppProject against what its Applications render: test/app-projects.test.ts.

  // argo-cd v3.5.1 docs/user-guide/projects.md, "The Default Project": Argo CD creates
  // `default` allowing every source, destination and kind; this is its locked form.
  it('locks Argo CD\'s default project', () => {
    expect(findObject(objects, 'AppProject', 'default').spec).toEqual({
      description: expect.any(String),
      sourceRepos: [],
      sourceNamespaces: [],
      destinations: [],
      namespaceResourceBlacklist: [{ group: '*', kind: '*' }],
    });
    expect(apps.map((app) => app.spec.project)).not.toContain('default');
  });

  it('validates Application, AppProject, ClusterIssuer and Certificate objects against their CRDs', () => {
    const kinds = ['Application', 'AppProject', 'ClusterIssuer', 'Certificate'];
    const checked = objects.filter((o) => kinds.includes(o.kind));
    expect(new Set(checked.map((o) => o.kind))).toEqual(new Set(kinds));
    for (const object of checked) expect(validateAgainstSchema(object), `${object.kind}/${object.metadata.name}`).toEqual([]);
  });
});

describe('issuers per environment (2.7)', () => {
  const issuers = (environment: string) => committedObjects(environment).filter((o) => o.kind === 'ClusterIssuer');

  it('signs local certificates with a self-signed CA inside the cluster', () => {
    const objects = committedObjects('local');
    expect(issuers('local').map((i) => i.metadata.name)).toEqual(['local-ca-bootstrap', 'local-ca']);
    expect(findObject(objects, 'ClusterIssuer', 'local-ca-bootstrap').spec).toEqual({ selfSigned: {} });
    expect(findObject(objects, 'Certificate', 'local-ca-root').spec).toMatchObject({ isCA: true, secretName: 'local-ca-root' });
    expect(findObject(objects, 'ClusterIssuer', 'local-ca').spec).toEqual({ ca: { secretName: 'local-ca-root' } });
  });

  it.each([
    ['testing', 'letsencrypt-staging', 'https://acme-staging-v02.api.letsencrypt.org/directory'],
    ['staging', 'letsencrypt-staging', 'https://acme-staging-v02.api.letsencrypt.org/directory'],
    ['production', 'letsencrypt-production', 'https://acme-v02.api.letsencrypt.org/directory'],
  ])('uses ACME in %s (%s) with the contact and an HTTP-01 solver on the Gateway\'s http listener', (environment, name, server) => {
    const [issuer] = issuers(environment);
    const gateway = committedObjects(environment).find((o) => o.kind === 'Gateway')!;
    const certificate = committedObjects(environment).find((o) => o.kind === 'Certificate' && o.metadata.namespace === gateway.metadata.namespace)!;
    const http = gateway.spec.listeners.find((l: any) => l.protocol === 'HTTP');
    expect(issuer!.metadata.name).toBe(name);
    // cert-manager v1.21.1 pkg/issuer/acme/http/httproute.go: the challenge's HTTPRoute takes
    // these parentRefs, in the Certificate's namespace (the Gateway's, which admits Same).
    expect(issuer!.spec.acme).toEqual({
      email: 'platform-team@example.com',
      server,
      privateKeySecretRef: { name: `${name}-account` },
      // One solver per application, selected by its host (the Certificate's dnsNames).
      solvers: [
        {
          selector: { dnsNames: [certificate.spec.dnsNames[0]] },
          http01: {
            gatewayHTTPRoute: {
              parentRefs: [
                { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gateway.metadata.name, namespace: gateway.metadata.namespace, sectionName: http.name },
              ],
            },
          },
        },
      ],
    });
    expect(http.port).toBe(80);
  });
});

// Convergence item 5: Flagger scales the Canary's target Deployment (to zero between
// analyses: fluxcd/flagger v1.44.0 docs/gitbook/usage/how-it-works.md); Argo CD must not
// put git's replicas back, neither in its diff (ignoreDifferences) nor when it syncs
// (RespectIgnoreDifferences=true: argo-cd v3.5.1 docs/user-guide/sync-options.md).
describe('what Flagger owns', () => {
  it.each(ENVIRONMENT_ORDER)("%s: each application's Application ignores the replicas of each of its Canary targets, and only those", (environment) => {
    const objects = committedObjects(environment);
    const names = projectEnvironments()[environment]!.applications.map((app) => app.name);
    for (const name of names) checkFlaggerOwned(objects, findObject(objects, 'Application', name), objects.filter((o) => o.kind === 'Canary' && o.metadata.name === name));
    // The one other exception is the Strimzi CRD field the API server drops (its own test below).
    for (const app of applications(objects).filter((a) => ![...names, 'strimzi-kafka-operator'].includes(a.metadata.name))) {
      expect(app.spec.ignoreDifferences, app.metadata.name).toBeUndefined();
    }
  });

  function checkFlaggerOwned(objects: readonly K8sObject[], application: K8sObject, canaries: readonly K8sObject[]): void {
    const expected = canaries.map((canary) => ({
      group: canary.spec.targetRef.apiVersion.split('/')[0],
      kind: canary.spec.targetRef.kind,
      name: canary.spec.targetRef.name,
      namespace: canary.metadata.namespace,
      jsonPointers: ['/spec/replicas'],
    }));
    expect(application.spec.ignoreDifferences ?? []).toEqual(expected);
    if (canaries.length > 0) expect(application.spec.syncPolicy.syncOptions).toContain('RespectIgnoreDifferences=true');
    else expect(application.spec.syncPolicy.syncOptions ?? []).not.toContain('RespectIgnoreDifferences=true');
  }

  it('has a Canary to protect in production', () => {
    expect(committedObjects('production').filter((o) => o.kind === 'Canary')).toHaveLength(1);
  });
});

describe('the Strimzi operator Application', () => {
  // strimzi/strimzi-kafka-operator issue 13074: the kafkas CRD declares an empty
  // `properties` map the API server drops, so the stored CRD never equals the chart's.
  it('does not compare the one field of the kafkas CRD the API server drops, while the CRD still declares it', () => {
    const crd = parseAllDocuments(fs.readFileSync(path.join(ROOT, 'schemas', 'crds', 'strimzi-kafka.yaml'), 'utf8'))[0]!.toJS();
    const declared = crd.spec.versions.map((v: any) => v.schema.openAPIV3Schema.properties.status.properties.clusterSecurity.properties);
    expect(declared.every((p: unknown) => p !== undefined && Object.keys(p as object).length === 0)).toBe(true);
    for (const environment of ENVIRONMENT_ORDER) {
      const app = findObject(committedObjects(environment), 'Application', 'strimzi-kafka-operator');
      expect(app.spec.ignoreDifferences).toEqual([
        {
          group: 'apiextensions.k8s.io',
          kind: 'CustomResourceDefinition',
          name: crd.metadata.name,
          jqPathExpressions: ['.spec.versions[].schema.openAPIV3Schema.properties.status.properties.clusterSecurity.properties'],
        },
      ]);
    }
  });
});

describe('a self-signed CA issuer', () => {
  // cert-manager reports a CA ClusterIssuer Ready=False until its Secret exists, and Argo CD's
  // health check (resource_customizations/cert-manager.io/ClusterIssuer) reads that as
  // Degraded, which fails the sync: the issuer must wait for the root certificate's wave.
  it.each(ENVIRONMENT_ORDER)('in %s comes a wave after the root certificate it reads its key pair from', (environment) => {
    const objects = readManifests(path.join(DIST, environment)).get('issuers.yaml')!;
    for (const issuer of objects.filter((o) => o.kind === 'ClusterIssuer' && o.spec.ca)) {
      const root = objects.find((o) => o.kind === 'Certificate' && o.spec.secretName === issuer.spec.ca.secretName)!;
      expect(wave(issuer)).toBeGreaterThan(wave(root));
    }
  });
});
