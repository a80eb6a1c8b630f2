import * as fs from 'node:fs';
import * as path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { synthesize } from '../src/synth';
import { LABELS } from '../src/contract/contract';
import { FLAGGER } from '../src/contract/upstream';
import { flaggerValues } from '../src/infrastructure/helm-values';
import { validateAgainstSchema } from '../src/validation/schemas';
import { commitCopy, dataCopy } from './project-copy';
import {
  ENVIRONMENT_ORDER,
  committedObjects,
  temporaryDirectory,
  environmentFilesCopy,
  findObject,
  projectEnvironments,
  valuesTexts,
  readManifests,
  refusedSynth,
  treeContents,
  type K8sObject,
  type ValuesTree,
} from './support';

/** A working copy of the committed dist/, so each blue-green step renders onto the one before. */
let outdir: string;


type Units = Record<string, { tag: string }>;

/** The blue-green steps are staging's: only staging's values files are read and rendered. */
const STAGING_ONLY = ['staging'] as const;

/** Staging's values files with its blue-green section replaced. */
function stagingFiles(active: string, units: Units): ValuesTree {
  const files = environmentFilesCopy();
  files.staging.webapp.strategy.blueGreen = { active, units };
  return { staging: files.staging };
}

/** Render staging with its blue-green section replaced. */
function renderStaging(active: string, units: Units): void {
  synthesize({ outdir, texts: valuesTexts(stagingFiles(active, units)), order: STAGING_ONLY, committed: 'outdir' });
}

/** Like renderStaging, but expected to be refused: returns the problems; the dist copy stays as it was. */
function refusedStaging(active: string, units: Units): string[] {
  return refusedSynth(outdir, stagingFiles(active, units), STAGING_ONLY, undefined, 'outdir');
}

function stagingApplication(): K8sObject[] {
  return readManifests(path.join(outdir, 'staging')).get('webapp.yaml')!;
}

function deploymentsOf(objects: readonly K8sObject[]): string[] {
  return objects.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name).sort();
}

describe('blue-green in staging, as three reviewed changes (1.4)', () => {
  beforeEach(() => {
    // A fresh folder and a start of its own (blue only), whatever staging's values file runs now.
    outdir = path.join(temporaryDirectory(), 'dist');
    renderStaging('blue', { blue: { tag: 'v1.4.2' } });
  });
  afterEach(() => fs.rmSync(path.dirname(outdir), { recursive: true, force: true }));

  it('renders the start: blue only, 3 pods, the Service on version=blue', () => {
    const objects = stagingApplication();
    expect(deploymentsOf(objects)).toEqual(['webapp-blue']);
    expect(findObject(objects, 'Service', 'webapp').spec.selector).toEqual({ app: 'webapp', version: 'blue' });
  });

  it('walks add green -> switch -> remove blue, each step rendering what the procedure says', () => {
    // (1) green beside blue; traffic stays on blue.
    renderStaging('blue', { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.5.0' } });
    let objects = stagingApplication();
    expect(deploymentsOf(objects)).toEqual(['webapp-blue', 'webapp-green']);
    for (const [unit, tag] of [['blue', 'v1.4.2'], ['green', 'v1.5.0']] as const) {
      const deployment = findObject(objects, 'Deployment', `webapp-${unit}`);
      expect(deployment.spec.replicas).toBe(3);
      expect(deployment.spec.template.metadata.labels).toEqual({ app: 'webapp', version: unit });
      expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } });
      const container = deployment.spec.template.spec.containers[0];
      expect(container.image).toBe(`registry.example.com/platform/webapp:${tag}`);
      expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/health', port: 8080 }, initialDelaySeconds: 30, periodSeconds: 10 });
      expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/ready', port: 8080 }, initialDelaySeconds: 5, periodSeconds: 5 });
    }
    expect(findObject(objects, 'Service', 'webapp').spec.selector).toEqual({ app: 'webapp', version: 'blue' });

    // (2) the selector moves to green; both units still run.
    renderStaging('green', { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.5.0' } });
    objects = stagingApplication();
    expect(deploymentsOf(objects)).toEqual(['webapp-blue', 'webapp-green']);
    expect(findObject(objects, 'Service', 'webapp').spec.selector).toEqual({ app: 'webapp', version: 'green' });

    // (3) blue is removed.
    renderStaging('green', { green: { tag: 'v1.5.0' } });
    objects = stagingApplication();
    expect(deploymentsOf(objects)).toEqual(['webapp-green']);
    expect(findObject(objects, 'Service', 'webapp').spec.selector).toEqual({ app: 'webapp', version: 'green' });
  });

  it('refuses adding green and switching to it in one change: green is not running yet', () => {
    expect(refusedStaging('green', { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.5.0' } })).toEqual([
      'src/environments/staging/webapp.yaml: strategy.blueGreen.active "green" is not running yet (dist/staging/webapp.yaml has no green unit); add the unit in its own change, check its health, then switch',
    ]);
  });

  it('refuses removing the unit the committed Service still selects', () => {
    renderStaging('blue', { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.5.0' } });
    expect(refusedStaging('green', { green: { tag: 'v1.5.0' } })).toEqual([
      'src/environments/staging/webapp.yaml: strategy.blueGreen.units.blue (removed) is the unit the committed Service still selects (dist/staging/webapp.yaml); move strategy.blueGreen.active to the other unit in its own change first, then remove it',
    ]);
  });

  it('refuses removing the active unit from the configuration itself', () => {
    expect(refusedStaging('blue', { green: { tag: 'v1.5.0' } })).toEqual([
      'src/environments/staging/webapp.yaml: strategy.blueGreen.active "blue" is not one of the rendered units (green)',
    ]);
  });

  it('refuses a new version on the unit that takes the traffic', () => {
    expect(refusedStaging('blue', { blue: { tag: 'v1.5.0' } })).toEqual([
      'src/environments/staging/webapp.yaml: strategy.blueGreen.units.blue.tag "v1.5.0" changes the unit that takes the traffic (committed v1.4.2); release the new version on the other unit, then switch',
    ]);
  });

  it.each<[string, Units, string, Units, RegExp]>([
    ['switching to a unit not running yet', { blue: { tag: 'v1.4.2' } }, 'green', { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.5.0' } }, /^ {4}active: green$/],
    ['removing the unit the Service selects', { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.5.0' } }, 'green', { green: { tag: 'v1.5.0' } }, /^ {4}units:$/],
    ['a new version on the unit the Service selects', { blue: { tag: 'v1.4.2' } }, 'blue', { blue: { tag: 'v1.5.0' } }, /^ {8}tag: v1\.5\.0$/],
  ])('names the values file and the line of the field behind a refused step: %s', (_step, committedUnits, active, units, field) => {
    renderStaging('blue', committedUnits);
    const files = environmentFilesCopy();
    files.staging.webapp.strategy.blueGreen = { active, units };
    const texts = valuesTexts(files);
    const file = 'src/environments/staging/webapp.yaml';
    const line = texts.get(file)!.split('\n').findIndex((text) => field.test(text)) + 1;
    expect(line).toBeGreaterThan(1);
    expect(() => synthesize({ outdir, texts, committed: 'outdir' })).toThrow(`${file}:${line}: strategy.blueGreen.`);
  });

  it('refuses to judge a step against a rendered chart that does not read as YAML, and says how to mend it', () => {
    const file = path.join(outdir, 'staging', 'webapp.yaml');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^kind: Service$/m, 'kind: Service\nspec: [unclosed'));
    const problems = refusedStaging('blue', { blue: { tag: 'v1.4.2' }, green: { tag: 'v1.5.0' } });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^dist\/staging\/webapp\.yaml: cannot be read as YAML \(.+\), so the blue-green step cannot be checked against it; restore it, or remove it to render without this check$/,
    );
  });

  it('refuses, naming the commit to restore from, when the chart committed in HEAD does not read as YAML', () => {
    const root = dataCopy();
    try {
      const file = path.join(root, 'dist', 'staging', 'webapp.yaml');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^kind: Service$/m, 'kind: Service\nspec: [unclosed'));
      commitCopy(root);
      const before = treeContents(path.join(root, 'dist'));
      // Staging's values as written: the committed chart cannot be read, whatever the step.
      const texts = valuesTexts({ staging: environmentFilesCopy().staging });
      expect(() => synthesize({ outdir: path.join(root, 'dist'), root, texts, order: STAGING_ONLY })).toThrow(
        /dist\/staging\/webapp\.yaml in HEAD: cannot be read as YAML \(.+\), so the blue-green step cannot be checked against it; restore it from an earlier commit where it reads \(git checkout <commit> -- dist\/staging\/webapp\.yaml\) and commit that first/,
      );
      expect(treeContents(path.join(root, 'dist'))).toEqual(before);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a unit without a tag', () => {
    expect(refusedStaging('blue', { blue: { tag: 'v1.4.2' }, green: {} as { tag: string } })).toEqual([
      'src/environments/staging/webapp.yaml: strategy.blueGreen.units.green.tag is required and must be a string',
    ]);
  });
});

describe('canary in production (2.3)', () => {
  const objects = committedObjects('production');
  const canary = findObject(objects, 'Canary', 'webapp');

  it('targets the application Deployment with the contract numbers', () => {
    expect(canary.apiVersion).toBe('flagger.app/v1beta1');
    expect(canary.spec.targetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'webapp' });
    expect(canary.spec.progressDeadlineSeconds).toBe(60);
    expect(canary.spec.service.port).toBe(80);
    expect(canary.spec.service.targetPort).toBe(8080);
    expect(canary.spec.analysis).toMatchObject({ interval: '30s', threshold: 5, maxWeight: 50, stepWeight: 10 });
    expect(canary.spec.analysis.metrics).toEqual(
      expect.arrayContaining([
        { name: 'request-success-rate', templateRef: { name: 'request-success-rate', namespace: 'webapp' }, thresholdRange: { min: 99 }, interval: '1m' },
        { name: 'request-duration', templateRef: { name: 'request-duration', namespace: 'webapp' }, thresholdRange: { max: 500 }, interval: '30s' },
      ]),
    );
  });

  // Flagger initializes a Canary only when its target's selector holds one of the labels it
  // builds selectors from, and labels the primary's pods `<the first it holds>: <value>-primary`:
  // the disruption budget, the PodMonitor and the network policies select them by `app`. The
  // e2e shows the real Flagger refusing a target that holds none (test/e2e/broken-controllers.test.ts).
  it('selects the target\'s pods by `app`, the first label Flagger builds its selectors from, left at Flagger\'s default', () => {
    const deployment = findObject(objects, 'Deployment', canary.spec.targetRef.name);
    const held = FLAGGER.selectorLabels.filter((label) => Object.hasOwn(deployment.spec.selector.matchLabels, label));
    expect(held[0]).toBe(LABELS.app);
    expect(flaggerValues()).not.toHaveProperty('selectorLabels');
  });

  // Flagger v1.44.0 docs/gitbook/tutorials/gatewayapi-progressive-delivery.md: with the
  // gatewayapi provider Flagger generates the HTTPRoute `<service>` for `service.hosts` on
  // `service.gatewayRefs`, and the Services; the chart renders neither.
  it('shifts traffic through the Gateway with Flagger\'s gatewayapi:v1 provider, and the chart leaves the Services and the HTTPRoute to Flagger', () => {
    const gateway = findObject(objects, 'Gateway', 'webapp');
    const https = gateway.spec.listeners.find((l: any) => l.protocol === 'HTTPS');
    expect(canary.spec.provider).toBe('gatewayapi:v1');
    expect(canary.spec.ingressRef).toBeUndefined();
    expect(canary.spec.service.hosts).toEqual([https.hostname]);
    expect(canary.spec.service.gatewayRefs).toEqual([{ name: gateway.metadata.name, namespace: gateway.metadata.namespace, sectionName: https.name }]);
    expect(objects.filter((o) => o.kind === 'Service' && o.metadata.namespace === 'webapp')).toEqual([]);
    expect(objects.filter((o) => o.kind === 'HTTPRoute' && o.metadata.name === 'webapp')).toEqual([]);
  });

  // Flagger's built-in request-success-rate and request-duration for the gatewayapi provider
  // read Envoy's series with labels the Prometheus Operator's scrape does not produce; the
  // templates read the application's own series (4: /metrics on 8080, scraped by the
  // PodMonitor), restricted to the canary's pods, with Flagger's template variables
  // (fluxcd/flagger v1.44.0 docs/gitbook/usage/metrics.md).
  it('measures the canary with MetricTemplates over the application\'s own series, read from the monitoring stack\'s Prometheus', () => {
    const templates = objects.filter((o) => o.kind === 'MetricTemplate');
    expect(templates.map((t) => t.metadata.name).sort()).toEqual(['request-duration', 'request-success-rate']);
    const podMonitor = objects.find((o) => o.kind === 'PodMonitor')!;
    expect(podMonitor.spec.podMetricsEndpoints).toEqual([{ port: 'http', path: '/metrics' }]);
    for (const template of templates) {
      expect(template.metadata.namespace).toBe(canary.metadata.namespace);
      expect(template.spec.provider).toEqual({ type: 'prometheus', address: 'http://kube-prometheus-stack-prometheus.monitoring:9090' });
      expect(template.spec.query).toContain('namespace="{{ namespace }}"');
      expect(template.spec.query).toContain('pod=~"{{ target }}-[0-9a-zA-Z]+(-[0-9a-zA-Z]+)"');
      expect(template.spec.query).toContain('[{{ interval }}]');
      expect(validateAgainstSchema(template)).toEqual([]);
      // Flagger substitutes the variables before asking Prometheus: the result must parse.
      const query = template.spec.query.replaceAll('{{ namespace }}', 'webapp').replaceAll('{{ target }}', 'webapp').replaceAll('{{ interval }}', '1m');
      expect(promqlErrors(query), template.metadata.name).toEqual([]);
    }
    const successRate = findObject(objects, 'MetricTemplate', 'request-success-rate').spec.query;
    expect(successRate).toMatch(/^100 \* sum\(rate\(http_requests_total\{.*, status!~"5\.\."\}\[\{\{ interval \}\}\]\)\) \/ sum\(rate\(http_requests_total\{/);
    const duration = findObject(objects, 'MetricTemplate', 'request-duration').spec.query;
    expect(duration).toMatch(/^1000 \* histogram_quantile\(0\.99, sum by \(le\) \(rate\(http_request_duration_seconds_bucket\{/);
  });

  // The canary's Deployment pods are `<target>-<hash>-<hash>`; the primary's have one more
  // part and must not count (Prometheus anchors regular expressions).
  it('counts only the canary Deployment\'s pods, not the primary\'s', () => {
    const canaryPods = new RegExp('^webapp-[0-9a-zA-Z]+(-[0-9a-zA-Z]+)$');
    expect(canaryPods.test('webapp-7d9c8b6f5-x2k4q')).toBe(true);
    expect(canaryPods.test('webapp-primary-7d9c8b6f5-x2k4q')).toBe(false);
  });

  it('waits for an operator to promote or roll back, through the load tester gates (3.2)', () => {
    const gates = canary.spec.analysis.webhooks.filter((w: any) => w.type !== 'rollout');
    expect(gates).toEqual([
      { name: 'promotion-gate', type: 'confirm-promotion', url: 'http://flagger-loadtester.flagger-system/gate/check' },
      { name: 'rollback-gate', type: 'rollback', url: 'http://flagger-loadtester.flagger-system/rollback/check' },
    ]);
  });

  it('validates against the Flagger CRD', () => {
    expect(validateAgainstSchema(canary)).toEqual([]);
  });
});

/** Every node of a PromQL parse tree that the parser marked as an error. */
function promqlErrors(expression: string): string[] {
  const errors: string[] = [];
  parser.parse(expression).iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(`error at ${node.from}: "${expression.slice(node.from, node.to + 1)}"`);
    },
  });
  return errors;
}

const APPLICATIONS = ENVIRONMENT_ORDER.flatMap((environment) => projectEnvironments()[environment]!.applications.map((app) => [environment, app.name, app.namespace] as const));

describe.each(APPLICATIONS)('alerting in %s, application %s (2.4, 6)', (environment, application, namespace) => {
  const objects = committedObjects(environment);
  // Each application's rules and monitor are in its own namespace (its chart).
  const own = objects.filter((o) => o.metadata.namespace === namespace);
  const rule = findObject(own, 'PrometheusRule', 'deployment-rules');
  const [group] = rule.spec.groups;
  const alert = (name: string) => group.rules.find((r: any) => r.alert === name);

  it('holds exactly the two alerts of deployment.rules', () => {
    expect(rule.spec.groups).toHaveLength(1);
    expect(group.name).toBe('deployment.rules');
    expect(group.rules.map((r: any) => r.alert)).toEqual(['DeploymentFailed', 'HighErrorRateDuringDeployment']);
  });

  it('fires DeploymentFailed after 10m of Progressing=False, critical', () => {
    const failed = alert('DeploymentFailed');
    expect(failed.expr).toMatch(/^kube_deployment_status_condition\{.*condition="Progressing".*status="false".*\} == 1$/);
    expect(failed.expr).toContain(`namespace="${namespace}"`);
    expect(failed.for).toBe('10m');
    expect(failed.labels).toEqual({ severity: 'critical' });
    expect(failed.annotations.summary).toContain('{{ $labels.deployment }}');
    expect(failed.annotations.description).toContain('has been failing for more than 10 minutes');
  });

  it('fires HighErrorRateDuringDeployment above 5 % 5xx over 5m for 2m, warning, as a percentage', () => {
    const high = alert('HighErrorRateDuringDeployment');
    expect(high.expr).toBe(
      `sum by (namespace) (rate(http_requests_total{namespace="${namespace}", status=~"5.."}[5m])) / sum by (namespace) (rate(http_requests_total{namespace="${namespace}"}[5m])) > 0.05`,
    );
    expect(high.for).toBe('2m');
    expect(high.labels).toEqual({ severity: 'warning' });
    expect(high.annotations.summary).toMatch(/error rate is high during deployment/i);
    expect(high.annotations.description).toContain('{{ $value | humanizePercentage }}');
  });

  it('writes expressions that parse as PromQL', () => {
    for (const r of group.rules) expect(promqlErrors(r.expr), r.alert).toEqual([]);
    // The check itself finds a broken expression.
    expect(promqlErrors('sum(rate(http_requests_total[5m]) > ')).not.toEqual([]);
  });

  it('scrapes :8080/metrics of the application pods, Flagger primary included', () => {
    const monitor = findObject(own, 'PodMonitor', application);
    expect(monitor.spec.podMetricsEndpoints).toEqual([{ port: 'http', path: '/metrics' }]);
    expect(monitor.spec.selector).toEqual({ matchExpressions: [{ key: 'app', operator: 'In', values: [application, `${application}-primary`] }] });
    const ports = objects
      .filter((o) => o.kind === 'Deployment')
      .flatMap((o) => o.spec.template.spec.containers[0].ports ?? []);
    for (const port of ports) expect(port).toMatchObject({ name: 'http', containerPort: 8080 });
  });

  it('routes every alert to the team chat and critical ones to on-call as well, addresses from Secrets only', () => {
    const routing = findObject(objects, 'AlertmanagerConfig', 'platform-alert-routing');
    expect(routing.metadata.namespace).toBe('monitoring');
    // The two alerts of 2.4 and the backup failure.
    expect(routing.spec.route.matchers).toEqual([
      { name: 'alertname', matchType: '=~', value: 'DeploymentFailed|HighErrorRateDuringDeployment|DatabaseBackupFailed' },
    ]);
    expect(routing.spec.route.routes).toEqual([
      { receiver: 'on-call', matchers: [{ name: 'severity', matchType: '=', value: 'critical' }], continue: true },
      { receiver: 'team-chat', matchers: [{ name: 'severity', matchType: '=~', value: 'critical|warning' }] },
    ]);
    expect(routing.spec.receivers).toEqual([
      { name: 'on-call', webhookConfigs: [{ urlSecret: { name: 'on-call-webhook', key: 'url' }, sendResolved: true }] },
      { name: 'team-chat', slackConfigs: [{ apiURL: { name: 'chat-webhook', key: 'url' }, sendResolved: true }] },
    ]);
    // No address in git: neither receiver carries a URL of its own.
    expect(JSON.stringify(routing)).not.toMatch(/https?:\/\//);
  });

  it('labels rules, monitor and routing for the monitoring stack, and they validate against their CRDs', () => {
    for (const kind of ['PrometheusRule', 'PodMonitor', 'AlertmanagerConfig']) {
      const object = objects.find((o) => o.kind === kind)!;
      expect(object.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
      expect(validateAgainstSchema(object)).toEqual([]);
    }
  });

  it('keeps a revision history on every Deployment, for orchestrator-level rollback (1.5)', () => {
    const deployments = objects.filter((o) => o.kind === 'Deployment');
    expect(deployments.length).toBeGreaterThan(0);
    for (const deployment of deployments) expect(deployment.spec.revisionHistoryLimit, deployment.metadata.name).toBe(10);
  });
});
