import * as fs from 'node:fs';
import * as path from 'node:path';
import { locateToolchain } from '../../toolchain';
import { loadEnvironments } from '../../src/environments';
import { INFRASTRUCTURE_RELEASES } from '../../src/infrastructure/releases';
import { ALERTS } from '../../src/contract/contract';
import { ALERT_ROUTING } from '../../src/contract/choices';
import { supportedKubernetesMinors } from '../../src/infrastructure/supported-kubernetes';
import { ROOT, temporaryDirectory } from '../support';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import type { E2eReport } from '../../e2e/harness';
import { STAND_IN_MIGRATIONS } from '../../e2e/sql-server-state';
import { migrationsName, smokeName } from '../../src/contract/naming';
import { BROKER_STEP_CONTAINER, DATABASE_STEP_CONTAINER, HTTP_STEP_CONTAINER } from '../../src/constructs/smoke-hook';
import { brokenCopy, removeCopies, rendered, RUN_TIMEOUT_MS, tool } from './cases';
import { runE2eOn } from './e2e-copy';

afterEach(removeCopies);

const renderedCertificates = (environment: string): any[] => rendered(environment, 'cert-manager.io/v1', 'Certificate');

/**
 * What prometheus-operator generated on converged local: each rendered PrometheusRule became a
 * rule file of the Prometheus with the same groups, which promtool loads; the AlertmanagerConfig
 * was merged into the Alertmanager's configuration, which amtool loads and which routes a
 * critical alert to on-call and the team chat, a warning to the chat only, and others nowhere.
 */
function expectGeneratedMonitoring(report: E2eReport): void {
  const dir = temporaryDirectory('platform-gitops-generated-');
  try {
    const prometheus = Object.entries(report.monitoring.ruleFiles);
    expect(prometheus.map(([id]) => id)).toHaveLength(1);
    const files = prometheus[0]![1];
    const rules = rendered('local', 'monitoring.coreos.com/v1', 'PrometheusRule');
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      const file = Object.keys(files).find((name) => name.startsWith(`${rule.metadata.namespace}-${rule.metadata.name}-`));
      expect(file, `rule file of PrometheusRule ${rule.metadata.namespace}/${rule.metadata.name}: ${Object.keys(files).join(', ')}`).toBeDefined();
      expect(parseDocument(files[file!]!).toJS().groups).toEqual(rule.spec.groups);
      fs.writeFileSync(path.join(dir, file!), files[file!]!);
      const checked = tool('prometheus', 'promtool', ['check', 'rules', file!], dir);
      expect(checked.status, checked.output).toBe(0);
    }
    expect(Object.keys(files)).toHaveLength(rules.length);

    const configs = Object.values(report.monitoring.alertmanagerConfigs);
    expect(configs).toHaveLength(1);
    fs.writeFileSync(path.join(dir, 'alertmanager.yaml'), configs[0]!);
    const checked = tool('alertmanager', 'amtool', ['check-config', 'alertmanager.yaml'], dir);
    expect(checked.status, checked.output).toBe(0);
    const [routing] = rendered('local', 'monitoring.coreos.com/v1alpha1', 'AlertmanagerConfig');
    const receiver = (name: string) => `${routing.metadata.namespace}/${routing.metadata.name}/${name}`;
    const routed = (...labels: string[]) => tool('alertmanager', 'amtool', ['config', 'routes', 'test', '--config.file=alertmanager.yaml', ...labels], dir).output.trim();
    expect(routed(`alertname=${ALERTS.deploymentFailed.name}`, `severity=${ALERTS.deploymentFailed.severity}`, 'namespace=webapp')).toBe([ALERT_ROUTING.onCall.receiver, ALERT_ROUTING.teamChat.receiver].map(receiver).join(','));
    expect(routed(`alertname=${ALERTS.highErrorRate.name}`, `severity=${ALERTS.highErrorRate.severity}`, 'namespace=webapp')).toBe(receiver(ALERT_ROUTING.teamChat.receiver));
    expect(routed('alertname=Watchdog', 'severity=none')).toBe('null');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('e2e: the committed project converges on a real control plane and Argo CD', () => {
  it(
    'converges local: every Application Synced and Healthy, every environment accepted by the API server',
    () => {
      const copy = brokenCopy(); // unbroken: the committed project as it is
      const { status, report, output } = runE2eOn(copy, ['--env', 'local']);
      // Convergence first: every later check reads what converged, and a run that stopped
      // names the Application and its error at the end of its output.
      const notConverged = report.applications.filter((a) => a.sync !== 'Synced' || a.health !== 'Healthy');
      expect(notConverged, `${report.stopped ?? 'not stopped'}\n${output.slice(-6000)}`).toEqual([]);
      expect(report.applications.length).toBeGreaterThan(1);
      expect(report.kubernetes.startsWith(`v${supportedKubernetesMinors().at(-1)}.`), report.kubernetes).toBe(true);
      expect(report.argocd).toMatch(/^v3\./);
      // Envoy Gateway's control plane and its CRDs chart are the real ones, at the platform's version.
      const { envoyGateway, gatewayApiCrds } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === envoyGateway.name)).toEqual({ release: envoyGateway.name, chart: envoyGateway.chart.chart, version: envoyGateway.chart.version, runs: 'real' });
      expect(report.controllers.find((c) => c.release === gatewayApiCrds.name)?.runs).toBe('real chart');
      // cert-manager's own webhook and controllers issued every rendered Certificate: the CA
      // from the self-signed issuer, each other one from that CA, for the names it asks for.
      const { certManager } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === certManager.name)).toEqual({ release: certManager.name, chart: certManager.chart.chart, version: certManager.chart.version, runs: 'real' });
      const rendered = renderedCertificates('local');
      expect(report.certificates.map((c) => `${c.namespace}/${c.name}`)).toEqual(rendered.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).sort());
      const ca = rendered.find((c) => c.spec.isCA === true)!;
      for (const certificate of rendered) {
        const issued = report.certificates.find((c) => c.namespace === certificate.metadata.namespace && c.name === certificate.metadata.name)!;
        expect(issued.ready, issued.name).toBe('True');
        expect(issued.issuer, issued.name).toBe(`CN=${ca.spec.commonName}`);
        for (const name of certificate.spec.dnsNames ?? []) expect(issued.subjectAltName, issued.name).toContain(`DNS:${name}`);
      }
      // prometheus-operator (v0.94.1, kube-prometheus-stack's) generated the rule files and the Alertmanager configuration.
      const { kubePrometheusStack } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === kubePrometheusStack.name)).toEqual({ release: kubePrometheusStack.name, chart: kubePrometheusStack.chart.chart, version: locateToolchain(ROOT).versions['prometheus-operator'], runs: 'real' });
      expectGeneratedMonitoring(report);
      // 1.6: Argo CD's notifications controller (the argocd binary's) announced each application's
      // deployment in the team chat, the run's webhook sink; the platform's own Applications post nothing.
      const applications = loadEnvironments().find((env) => env.name === 'local')!.applications.map((application) => application.name);
      for (const name of applications) {
        expect(report.notifications, output.slice(-3000)).toContainEqual(expect.stringMatching(new RegExp(`^${name} \\(dist/local\\): deployed, sync succeeded at revision [0-9a-f]{40}$`)));
      }
      expect(report.notifications.filter((text) => !applications.some((name) => text.startsWith(`${name} (`)))).toEqual([]);
      // 1.3 step 5: each application's Sync hook ran its migrations image, played on loopback:
      // its connection string, read from the Secret its pod names, reached SQL Server through the
      // database's Service and logged in as the login the setup hook made, with the password that
      // hook gave it; the image then applied every migration to a database that had none.
      for (const { name, namespace } of loadEnvironments().find((env) => env.name === 'local')!.applications) {
        const hook = report.migrations.filter((run) => run.job === migrationsName(name));
        expect(hook.length, JSON.stringify(report.migrations)).toBeGreaterThan(0);
        expect(hook[0]).toMatchObject({ exitCode: 0, message: `Applied ${STAND_IN_MIGRATIONS.map((m) => m.id).join(', ')}. Done.` });
        expect(hook.every((run) => run.exitCode === 0), JSON.stringify(hook)).toBe(true);
        // 4.1: its PostSync smoke hook's HTTP step, the rendered script, ran against one of the
        // application's pods its Service sends to, with the smoke Secret's credentials; then its
        // database step logged in to SQL Server through the database's Service as the setup
        // hook's login, with the password that hook gave it; then its broker step, played as its
        // container (user, read-only root, /tmp emptyDir), logged in to a broker through the
        // bootstrap Service as the application's KafkaUser, with the password Strimzi gave it.
        const smoke = report.smoke.filter((run) => run.pod.startsWith(`${namespace}/${smokeName(name)}-`));
        expect(smoke.length, JSON.stringify(report.smoke)).toBeGreaterThan(0);
        for (const run of smoke) {
          expect(run).toMatchObject({
            reached: expect.stringMatching(new RegExp(`^pod ${namespace}/${name}-`)),
            steps: [HTTP_STEP_CONTAINER, DATABASE_STEP_CONTAINER, BROKER_STEP_CONTAINER],
            exitCode: 0,
            output: 'smoke: health, login, declarations passed\nsmoke: database passed\nsmoke: broker passed',
          });
        }
      }
      expect(report.dryRun.map((r) => r.environment)).toEqual(['local', 'testing', 'staging', 'production']);
      expect(report.dryRun.flatMap((r) => r.failures)).toEqual([]);
      // The phases npm run bench prints, in the order they ended: the start, each Application
      // once when it first converged, and the operator's sync; the dry-run, which runs beside
      // the convergence, wherever it ended.
      const phases = report.phases.map((p) => p.phase);
      expect(phases.slice(0, 5)).toEqual(['toolchain checked', 'control plane started', 'git, charts and registry served', 'Argo CD started', 'bootstrapped']);
      const converged = phases.filter((p) => / \(wave \d+\) (Synced and )?Healthy$/.test(p)).map((p) => p.split(' ')[0]);
      expect([...converged].sort()).toEqual(report.applications.map((a) => a.name).sort());
      expect(phases.filter((p) => p !== 'dry-run').at(-1)).toBe("operator's sync");
      expect(phases.filter((p) => p === 'dry-run')).toHaveLength(1);
      const seconds = report.phases.map((p) => p.seconds);
      expect(seconds).toEqual([...seconds].sort((a, b) => a - b));
      expect(report.passed).toBe(true);
      expect(status).toBe(0);
    },
    RUN_TIMEOUT_MS,
  );
});
