import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { committedObjects, ENVIRONMENT_ORDER, type K8sObject, ROOT } from './support';

// The contract's limits table (docs/platform-contract.md, section 8) as found in what each
// environment renders: each row is read back from the committed objects, never from the
// constants, and pinned by the snapshot (test/snapshots/limits.test.ts.snap). A row holds one
// value in every environment where it is rendered. Release data (tags, names) is never read,
// so a release or a promotion leaves this test as it is.

type Row = (objects: readonly K8sObject[]) => unknown[];

const byKind = (objects: readonly K8sObject[], kind: string) => objects.filter((object) => object.kind === kind);
const appDeployments = (objects: readonly K8sObject[]) => byKind(objects, 'Deployment').filter((d) => d.spec.template.spec.containers.some((c: any) => c.livenessProbe?.httpGet?.path === '/health'));
const containers = (objects: readonly K8sObject[]) => appDeployments(objects).flatMap((d) => d.spec.template.spec.containers as any[]);
const canaries = (objects: readonly K8sObject[]) => byKind(objects, 'Canary');
const metric = (objects: readonly K8sObject[], name: string) => canaries(objects).flatMap((c) => c.spec.analysis.metrics.filter((m: any) => m.name === name));
const alert = (objects: readonly K8sObject[], name: string) =>
  byKind(objects, 'PrometheusRule')
    .flatMap((rule) => rule.spec.groups.filter((group: any) => group.name === 'deployment.rules'))
    .flatMap((group) => group.rules.filter((rule: any) => rule.alert === name));

/** Seconds an Argo CD Application may spend retrying a sync: its backoff waits added up. */
function retryBudget(application: K8sObject): number {
  const retry = application.spec.syncPolicy?.retry;
  const seconds = (text: string) => Number(text.replace(/s$/, ''));
  let total = 0;
  for (let attempt = 0; attempt < retry.limit; attempt++) {
    total += Math.min(seconds(retry.backoff.duration) * retry.backoff.factor ** attempt, seconds(retry.backoff.maxDuration));
  }
  return total;
}
const applications = (objects: readonly K8sObject[], which: (application: K8sObject) => boolean) => byKind(objects, 'Application').filter(which).map(retryBudget);
const isHelmRelease = (application: K8sObject) => application.spec.source?.chart !== undefined;

/** The rows of section 8, each read from the rendered objects. */
const ROWS: Readonly<Record<string, Row>> = {
  'rolling update maxUnavailable / maxSurge': (o) =>
    appDeployments(o).filter((d) => d.spec.strategy?.type === 'RollingUpdate').map((d) => `${d.spec.strategy.rollingUpdate.maxUnavailable} / ${d.spec.strategy.rollingUpdate.maxSurge}`),
  'liveness probe': (o) => containers(o).map((c) => `initial delay ${c.livenessProbe.initialDelaySeconds} s, period ${c.livenessProbe.periodSeconds} s`),
  'readiness probe': (o) => containers(o).map((c) => `initial delay ${c.readinessProbe.initialDelaySeconds} s, period ${c.readinessProbe.periodSeconds} s`),
  'blue-green replicas per unit': (o) => appDeployments(o).filter((d) => ['blue', 'green'].includes(d.spec.template.metadata.labels.version)).map((d) => d.spec.replicas),
  'canary progress deadline': (o) => canaries(o).map((c) => `${c.spec.progressDeadlineSeconds} s`),
  'canary analysis interval / threshold / maxWeight / stepWeight': (o) =>
    canaries(o).map((c) => `${c.spec.analysis.interval} / ${c.spec.analysis.threshold} / ${c.spec.analysis.maxWeight} / ${c.spec.analysis.stepWeight}`),
  'canary request-success-rate': (o) => metric(o, 'request-success-rate').map((m) => `threshold ${m.thresholdRange.min}, interval ${m.interval}`),
  'canary request-duration': (o) => metric(o, 'request-duration').map((m) => `threshold ${m.thresholdRange.max}, interval ${m.interval}`),
  'wait for infrastructure pods ready': (o) => applications(o, isHelmRelease).map((s) => `${s} s`),
  'wait for database pod ready': (o) => applications(o, (a) => a.metadata.name === 'database').map((s) => `${s} s`),
  'wait for broker operator ready': (o) => applications(o, (a) => a.spec.source?.chart === 'strimzi-kafka-operator').map((s) => `${s} s`),
  'wait for broker cluster Ready': (o) => applications(o, (a) => a.metadata.name === 'broker').map((s) => `${s} s`),
  'controller sync timeout': (o) => [
    ...applications(o, (a) => !isHelmRelease(a) && !['database', 'broker'].includes(a.metadata.name)).map((s) => `${s} s`),
    ...byKind(o, 'Job').filter((j) => j.metadata.annotations?.['argocd.argoproj.io/hook'] === 'Sync').map((j) => `${j.spec.activeDeadlineSeconds} s`),
  ],
  'rollout status timeout': (o) => appDeployments(o).map((d) => `${d.spec.progressDeadlineSeconds} s`),
  'alert DeploymentFailed': (o) => alert(o, 'DeploymentFailed').map((r) => `for ${r.for}`),
  'alert HighErrorRateDuringDeployment': (o) => alert(o, 'HighErrorRateDuringDeployment').map((r) => `ratio above ${/> ([\d.]+)$/.exec(r.expr)?.[1]}, for ${r.for}`),
  'database port': (o) => byKind(o, 'StatefulSet').flatMap((s) => s.spec.template.spec.containers.flatMap((c: any) => (c.ports ?? []).map((p: any) => p.containerPort))),
  'broker listener port': (o) => byKind(o, 'Kafka').flatMap((k) => k.spec.kafka.listeners.filter((l: any) => l.name === 'plain').map((l: any) => l.port)),
  'application container port': (o) => containers(o).flatMap((c) => c.ports.map((p: any) => p.containerPort)),
  'service port': (o) =>
    byKind(o, 'Service')
      .filter((s) => s.spec.ports?.some((p: any) => p.targetPort === 8080 || p.targetPort === 'http'))
      .flatMap((s) => s.spec.ports.map((p: any) => p.port)),
};

/**
 * Rows of the table that no rendered object holds: operator procedures (the runbook's fix of
 * a crash loop, an Alertmanager silence), each with where its constant is.
 */
const NOT_RENDERED: Readonly<Record<string, string>> = {
  'example limits in a fix': 'EXAMPLE_FIX (src/contract/contract.ts), what npm run ops -- emergency crashloop --fix raises a crash-looping container to (test/crash-loops.test.ts)',
  'silence example': 'ALERTS.silenceDuration (src/contract/contract.ts), the default --duration of npm run ops -- silence (test/e2e/alertmanager.test.ts)',
};

/** The rows of section 8 of the contract, by their first column. */
function contractRows(): string[] {
  const text = fs.readFileSync(path.join(ROOT, 'docs/platform-contract.md'), 'utf8');
  const section = text.slice(text.indexOf('## 8. Limits'), text.indexOf('## 9.'));
  return [...section.matchAll(/^\| ([^|]+?) \| [^|]+ \|$/gm)].map((match) => match[1]!).filter((row) => row !== 'Item' && !row.startsWith('---'));
}

/** Each row's one value in `objects`, or "not rendered"; more than one value is a finding of its own. */
function limitsOf(objects: readonly K8sObject[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(ROWS).map(([row, read]) => {
      const values = [...new Set(read(objects).map((value) => JSON.stringify(value)))].map((value) => JSON.parse(value) as unknown);
      return [row, values.length === 0 ? 'not rendered' : values.length === 1 ? values[0] : { 'several values': values }];
    }),
  );
}

describe('the limits table (8) as rendered', () => {
  const perEnvironment = Object.fromEntries(ENVIRONMENT_ORDER.map((environment) => [environment, limitsOf(committedObjects(environment))]));

  it('reads every row of the contract, or says why it renders nowhere', () => {
    const read = new Set([...Object.keys(ROWS), ...Object.keys(NOT_RENDERED)]);
    // One row of the contract holds two ports: read as two.
    const rows = contractRows().flatMap((row) => (row === 'application container port' ? ['application container port', 'service port'] : [row]));
    expect(rows.filter((row) => !read.has(row))).toEqual([]);
    expect([...read].filter((row) => !rows.includes(row))).toEqual([]);
  });

  it('holds one value per row in every environment, the same in all', () => {
    for (const row of Object.keys(ROWS)) {
      const found = new Set(Object.values(perEnvironment).map((limits) => JSON.stringify(limits[row])).filter((value) => value !== '"not rendered"'));
      expect([...found], row).toHaveLength(1);
    }
  });

  it('pins every row', () => {
    const table = Object.fromEntries(Object.keys(ROWS).map((row) => [row, Object.values(perEnvironment).map((limits) => limits[row]).find((value) => value !== 'not rendered')]));
    expect(table).toMatchSnapshot();
  });
});
