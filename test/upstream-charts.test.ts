import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type HelmApplication, helmApplication, renderApplicationChart } from '../e2e/real-chart';
import { REAL_CHARTS, isRealChart } from '../e2e/upstream-charts';
import { flaggerArgsOf } from '../e2e/flagger';
import { ClusterEgress } from '../e2e/cluster-egress';
import { envoyGatewayContainerOf, TOPOLOGY_INJECTOR, topologyInjectorDisabled, topologyInjectorRoutes } from '../e2e/envoy-gateway';
import { ENVOY_GATEWAY } from '../src/contract/upstream';
import { STAND_INS } from '../e2e/stand-in-charts';
import type { KubeObject } from '../e2e/kube-client';
import { knownVersions } from '../src/contract/release-versions';
import { HELM_RELEASE_ROWS } from '../src/infrastructure/releases';
import { type Toolchain, locateToolchain } from '../toolchain';
import { DIST, ENVIRONMENT_ORDER, ROOT, findObject, readManifests, temporaryDirectory } from './support';
import { memoized } from './engine-memo';

// The upstream charts the e2e serves for real (e2e/upstream-charts.ts), each packaged from its
// pinned release's Go module by toolchain/build.sh (UPSTREAM_CHARTS), rendered with each
// environment's committed values as Argo CD renders them: the chart's templates and its
// values.schema.json judge the platform's values (and a value no template reads fails), and each environment's AppProject of the
// release must permit every object the chart renders (kind and namespace), or Argo CD refuses
// the sync.

/**
 * The toolchain (build.sh `--print`, read once), with helm and the upstream charts: `npm test`
 * builds it before the unit tier. Without them each render fails, naming what to build (a test
 * that skipped would assert nothing).
 */
let toolchain: Toolchain | undefined;

/** UPSTREAM_CHARTS of toolchain/build.sh: chart, version, module and folder of each line. */
const UPSTREAM_ROWS = (() => {
  const script = fs.readFileSync(path.join(ROOT, 'toolchain', 'build.sh'), 'utf8');
  const pins = Object.fromEntries([...script.matchAll(/^([A-Z_]+)=(v[\d.]+)$/gm)].map((m) => [m[1]!, m[2]!]));
  const block = /^UPSTREAM_CHARTS=\(\n([\s\S]*?)\n\)$/m.exec(script)?.[1] ?? '';
  return block.split('\n').map((line) => {
    const expanded = line.trim().replace(/^"|"$/g, '').replace(/\$\{([A-Z_]+)#v\}|\$([A-Z_]+)/g, (_, stripped?: string, plain?: string) => (stripped ? pins[stripped]!.slice(1) : pins[plain!]!));
    const [chart, version, module, folder] = expanded.split(' ');
    return { chart: chart!, version: version!, module: module!, folder: folder! };
  });
})();

/**
 * Kubernetes' cluster-scoped kinds the real charts render, and the namespaced ones: a kind in
 * neither fails the test, so that a new kind is classified before its project is judged.
 */
const CLUSTER_SCOPED = new Set(['/Namespace', 'apiextensions.k8s.io/CustomResourceDefinition', 'rbac.authorization.k8s.io/ClusterRole', 'rbac.authorization.k8s.io/ClusterRoleBinding', 'admissionregistration.k8s.io/MutatingWebhookConfiguration', 'admissionregistration.k8s.io/ValidatingWebhookConfiguration', 'admissionregistration.k8s.io/ValidatingAdmissionPolicy', 'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding']);
const NAMESPACED = new Set(['apps/Deployment', 'batch/Job', 'rbac.authorization.k8s.io/Role', 'rbac.authorization.k8s.io/RoleBinding', '/ConfigMap', '/Service', '/ServiceAccount', '/Secret', 'policy/PodDisruptionBudget', 'networking.k8s.io/NetworkPolicy', 'autoscaling/HorizontalPodAutoscaler']);
const kindKey = (object: KubeObject) => `${object.apiVersion.includes('/') ? object.apiVersion.split('/')[0] : ''}/${object.kind}`;

/** Each environment's Applications of a real chart, with their AppProject. */
const RELEASES = ENVIRONMENT_ORDER.flatMap((environment) => {
  const files = readManifests(path.join(DIST, environment));
  const projects = (files.get('gitops.yaml') ?? []).filter((o) => o.kind === 'AppProject');
  return (files.get('infrastructure.yaml') ?? [])
    .filter((o) => o.kind === 'Application')
    .flatMap((o) => {
      const app = helmApplication(o as KubeObject);
      return app !== undefined && isRealChart(app.chart) ? [{ environment, app, appProject: findObject(projects, 'AppProject', o.spec.project) }] : [];
    });
});

const work = temporaryDirectory('platform-gitops-upstream-charts-');
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/**
 * One render per chart, version and release (the environments often give the same values); in
 * the README flows' unit runs, one for their five states while the values stay the same
 * (test/engine-memo.ts).
 */
const renders = new Map<string, KubeObject[]>();
function rendered(app: HelmApplication, version = app.version): KubeObject[] {
  const key = JSON.stringify([app.chart, version, app.release]);
  if (!renders.has(key)) {
    toolchain ??= locateToolchain(ROOT);
    const chart = toolchain.upstreamChart(app.chart, version);
    const helm = toolchain.bin('helm', 'helm');
    const kubeVersion = toolchain.versions.kubernetes;
    renders.set(key, memoized(['helm template', helm, chart, kubeVersion, key], () => renderApplicationChart(helm, chart, { ...app, version }, path.join(work, String(renders.size)), kubeVersion)));
  }
  return renders.get(key)!;
}

/** Every leaf of a values tree (a scalar, or a list as a whole), with its path. */
function leaves(tree: unknown, at: string[] = []): { at: string[]; value: unknown }[] {
  if (typeof tree === 'object' && tree !== null && !Array.isArray(tree) && Object.keys(tree).length > 0) {
    return Object.entries(tree).flatMap(([key, value]) => leaves(value, [...at, key]));
  }
  return [{ at, value: tree }];
}

/** Another value of the same kind, which a chart that reads the value renders differently. */
function changed(value: unknown): unknown {
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'string') return `${value}-changed`;
  if (Array.isArray(value)) return [...value, ...value];
  return { changed: true };
}

/** The values (dotted paths) whose change the chart renders nothing different for. */
function ignoredValues(app: HelmApplication): string[] {
  const original = JSON.stringify(rendered(app));
  return leaves(app.release.values)
    .filter(({ at, value }) => {
      const values = structuredClone(app.release.values) as Record<string, unknown>;
      const parent = at.slice(0, -1).reduce<any>((node, key) => node[key], values);
      parent[at.at(-1)!] = changed(value);
      try {
        return JSON.stringify(rendered({ ...app, release: { ...app.release, values } })) === original;
      } catch {
        return false; // refused: the chart reads it
      }
    })
    .map(({ at }) => at.join('.'));
}

describe('the upstream charts the e2e serves for real', () => {
  it('are every version the release table knows of each of their releases, from that release\'s module', () => {
    const expected = HELM_RELEASE_ROWS.filter((row) => isRealChart(row.chart.chart))
      .flatMap((row) => (knownVersions(row.name).length > 0 ? knownVersions(row.name) : [row.chart.version]).map((version) => `${row.chart.chart} ${version}`))
      .sort();
    expect(UPSTREAM_ROWS.map((row) => `${row.chart} ${row.version}`).sort()).toEqual(expected);
    expect([...new Set(UPSTREAM_ROWS.map((row) => row.chart))].sort()).toEqual([...REAL_CHARTS].sort());
    for (const row of UPSTREAM_ROWS) {
      // The module is the release's own: its Go module version is the chart's, or the app's for Flagger's charts.
      expect(row.module, row.chart).toMatch(/^github\.com\/(cert-manager\/cert-manager|envoyproxy\/gateway|fluxcd\/flagger)@v\d+\.\d+\.\d+$/);
    }
  });

  it('are served for an Application of every environment', () => {
    for (const environment of ENVIRONMENT_ORDER) {
      expect(RELEASES.filter((r) => r.environment === environment).map((r) => r.app.chart).sort(), environment).toEqual([...REAL_CHARTS].sort());
    }
  });
});

describe("each real chart with each environment's values", () => {
  it.each(RELEASES.map((r) => [`${r.environment} ${r.app.application}`, r] as const))('%s: renders, and its project permits every object', (_id, { environment, app, appProject }) => {
    const objects = rendered(app);
    expect(objects.length).toBeGreaterThan(0);
    const clusterKinds = new Set((appProject.spec.clusterResourceWhitelist ?? []).map((k: any) => `${k.group}/${k.kind}`));
    const namespacedKinds = appProject.spec.namespaceResourceWhitelist === undefined ? undefined : new Set(appProject.spec.namespaceResourceWhitelist.map((k: any) => `${k.group}/${k.kind}`));
    const destinations = new Set(appProject.spec.destinations.map((d: any) => d.namespace));
    for (const object of objects) {
      const id = `${environment} ${app.application}: ${object.kind} ${object.metadata.name}`;
      const kind = kindKey(object);
      if (CLUSTER_SCOPED.has(kind)) {
        expect(clusterKinds.has(kind), `${id}: the project permits no cluster-scoped ${kind}`).toBe(true);
        continue;
      }
      expect(NAMESPACED.has(kind), `${id}: ${kind} is not classified in this test`).toBe(true);
      if (namespacedKinds !== undefined) expect(namespacedKinds.has(kind), `${id}: the project permits no ${kind}`).toBe(true);
      // Argo CD puts an object without a namespace in the Application's destination.
      const namespace = object.metadata.namespace ?? app.release.namespace;
      expect(destinations.has(namespace), `${id}: the project's destinations lack ${namespace}`).toBe(true);
    }
  });

  it.each(RELEASES.filter((r) => knownVersions(r.app.application).length > 1).map((r) => [`${r.environment} ${r.app.application}`, r] as const))(
    '%s: every other version the release table knows accepts the same values (npm run upgrade moves between them)',
    (_id, { app }) => {
      for (const version of knownVersions(app.application)) expect(rendered(app, version).length, version).toBeGreaterThan(0);
    },
  );

  // A chart without a values schema ignores a key it does not read (only cert-manager's has
  // one): each value the platform gives is changed in turn, and the chart must render
  // something else for it.
  it.each(RELEASES.map((r) => [`${r.environment} ${r.app.application}`, r] as const))('%s: the chart reads every value the platform gives it', (_id, { app }) => {
    expect(ignoredValues(app)).toEqual([]);
  });

  it('finds a value the chart does not read', () => {
    const flagger = RELEASES.find((r) => r.app.chart === 'flagger')!.app;
    const values = { ...flagger.release.values, meshprovider: 'gatewayapi:v1' };
    expect(ignoredValues({ ...flagger, release: { ...flagger.release, values } })).toEqual(['meshprovider']);
  });

  it("refuses a value the chart's schema refuses, naming the Application and the chart", () => {
    const certManager = RELEASES.find((r) => r.app.chart === 'cert-manager')!.app;
    const refused = { ...certManager, release: { ...certManager.release, values: { ...certManager.release.values, crds: { enabled: true, keep: true, install: true } } } };
    expect(() => rendered(refused)).toThrow(new RegExp(`^Application ${certManager.application}: chart cert-manager ${certManager.version.replace(/\./g, '\\.')} refuses its values: [\\s\\S]*crds[\\s\\S]*install`));
  });

  // The harness starts each real controller from the Deployment Argo CD created from the chart.
  it.each(RELEASES.filter((r) => REAL_CHARTS.includes(r.app.chart) && STAND_INS[r.app.chart]?.controller !== undefined).map((r) => [`${r.environment} ${r.app.application}`, r] as const))(
    '%s: renders the controller Deployment the harness waits for',
    (_id, { app }) => {
      const name = STAND_INS[app.chart]!.controller;
      expect(rendered(app).filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name)).toContain(name);
    },
  );

  it.each(RELEASES.filter((r) => r.app.chart === 'flagger').map((r) => [r.environment, r] as const))("%s: Flagger's controller starts with the chart's flags for the platform's values", (_id, { app }) => {
    const deployment = rendered(app).find((o) => o.kind === 'Deployment')!;
    const args = flaggerArgsOf(deployment);
    expect(args).toContain(`-mesh-provider=${app.release.values.meshProvider}`);
    expect(args).toContain(`-metrics-server=${app.release.values.metricsServer}`);
  });

  it.each(RELEASES.filter((r) => r.app.chart === 'gateway-helm').map((r) => [r.environment, r] as const))("%s: Envoy Gateway's control plane reads the configuration its chart renders", (_id, { app }) => {
    const objects = rendered(app);
    const container = envoyGatewayContainerOf(objects.find((o) => o.kind === 'Deployment' && o.metadata.name === STAND_INS['gateway-helm']!.controller)!);
    expect(container.args[0]).toBe('server');
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === container.config.configMap);
    expect(configMap?.data?.[container.config.key]).toMatch(/^kind: EnvoyGateway$/m);
  });

  // The chart's topology injector configuration calls its Service; the harness's egress sends
  // that Service's ClusterIP and port to the control plane's webhook listener on loopback.
  it.each(RELEASES.filter((r) => r.app.chart === 'gateway-helm').map((r) => [r.environment, r] as const))("%s: the egress routes the topology injector's Service to Envoy Gateway's webhook listener", (_id, { app }) => {
    const objects = rendered(app);
    const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === STAND_INS['gateway-helm']!.controller)!;
    const container = envoyGatewayContainerOf(deployment);
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === container.config.configMap)!.data![container.config.key]!;
    expect(topologyInjectorDisabled(config)).toBe(false);
    const configuration = objects.find((o) => o.kind === 'MutatingWebhookConfiguration' && o.metadata.name === `${TOPOLOGY_INJECTOR.configurationPrefix}.${deployment.metadata.namespace}`)!;
    expect(configuration.webhooks.map((w: { clientConfig: { service: { path: string } } }) => w.clientConfig.service.path)).toEqual([TOPOLOGY_INJECTOR.path]);
    const ref = configuration.webhooks[0].clientConfig.service as { name: string; namespace: string; port: number };
    // The API server allocates the ClusterIP; any will do.
    const services = objects.filter((o) => o.kind === 'Service').map((o) => ({ ...o, spec: { ...o.spec, clusterIP: '10.96.0.42' } }));
    const egress = new ClusterEgress();
    for (const route of topologyInjectorRoutes(configuration, services, deployment)) egress.route(route.address, route.port, route.localPort);
    expect(egress.target('10.96.0.42', ref.port)).toEqual({ host: '127.0.0.1', port: ENVOY_GATEWAY.webhookPort });
    // A Service whose port sends elsewhere is refused, naming it.
    const elsewhere = services.map((o) => (o.metadata.name === ref.name ? { ...o, spec: { ...o.spec, ports: o.spec.ports.map((p: { port: number }) => (p.port === ref.port ? { ...p, targetPort: 9444 } : p)) } } : o));
    expect(() => topologyInjectorRoutes(configuration, elsewhere, deployment)).toThrow(`calls Service ${ref.namespace}/${ref.name} port ${ref.port}, which sends to 9444, not to Envoy Gateway's webhook port ${ENVOY_GATEWAY.webhookPort}`);
  });
});
