import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { locateToolchain } from '../../toolchain';
import { ROOT_APPLICATION } from '../../src/contract/platform-charts';
import { applicationChartId, chartFile } from '../../src/contract/layout';
import { brokerUsers, loadEnvironments } from '../../src/environments';
import { topicsVisibleTo } from '../../src/cluster/kafka-topics';
import { INFRASTRUCTURE_RELEASES } from '../../src/infrastructure/releases';
import { ALERTS, CANARY } from '../../src/contract/contract';
import { ALERT_ROUTING } from '../../src/contract/choices';
import { supportedKubernetesMinors } from '../../src/infrastructure/supported-kubernetes';
import { committedObjects, ROOT, temporaryDirectory } from '../support';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { breakRendered, e2eProjectCopy, followPublishedCharts, makeBlueGreen, makeCanary, runE2eOn } from './e2e-copy';
import type { E2eReport } from '../../e2e/harness';
import { standInUpgrade } from '../../e2e/stand-in-charts';

// A real control plane (Kubernetes 1.36) and a real Argo CD, built from their modules
// (toolchain), syncing the committed dist/ from a git server over SSH. Each case is
// one whole run: minutes, not seconds.
const RUN_TIMEOUT_MS = 20 * 60_000;

const copies: string[] = [];
afterEach(() => {
  for (const copy of copies.splice(0)) fs.rmSync(copy, { recursive: true, force: true });
});

/** The committed objects of an environment (dist/<environment>/) of one apiVersion and kind. */
function rendered(environment: string, apiVersion: string, kind: string): any[] {
  return committedObjects(environment).filter((object) => object.apiVersion === apiVersion && object.kind === kind);
}

const renderedCertificates = (environment: string): any[] => rendered(environment, 'cert-manager.io/v1', 'Certificate');

/** A test tool of the toolchain (promtool, amtool) run on files of `dir`: its exit code and output. */
function tool(component: 'prometheus' | 'alertmanager', name: string, args: readonly string[], dir: string): { status: number | null; output: string } {
  const result = spawnSync(locateToolchain(ROOT).bin(component, name), [...args], { cwd: dir, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

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

function brokenCopy(): string {
  const copy = e2eProjectCopy();
  copies.push(copy);
  return copy;
}

/** One step of a scenario run through `--exec`: what it expected and what it got. */
interface ScenarioStep {
  readonly name: string;
  readonly expected: number;
  readonly exitCode: number;
  readonly output: string;
  readonly stdout: string;
}

/**
 * Run `script` (test/e2e/<script>) with `npm run e2e -- --env local --exec` on `copy`; it writes
 * its steps to the file named by `resultsVariable`. Every step ended as expected, and so did
 * the command: the run, and the scenario's results besides its steps.
 */
/**
 * `npm run e2e -- --env local --exec` on the copy with scenario scripts of test/e2e/ run one
 * after the other (each only if the one before passed), each writing its results to a file
 * named in its variable; every step of every scenario must have ended as expected.
 */
function runScenarios<T extends Record<string, { steps: ScenarioStep[] }>>(copy: string, scenarios: { readonly [K in keyof T]: string }): { status: number | null; report: E2eReport; output: string; results: T } {
  const files = Object.fromEntries(Object.keys(scenarios).map((script) => [script, path.join(copy, '..', `${path.basename(copy)}-${script}.json`)]));
  copies.push(...Object.values(files));
  const command = Object.keys(scenarios).map((script) => `node ${path.join(ROOT, 'test', 'e2e', script)}`).join(' && ');
  const variables = Object.fromEntries(Object.entries(scenarios).map(([script, variable]) => [variable as string, files[script]!]));
  const { status, report, output } = runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--exec', command], variables);
  const results: Record<string, { steps: ScenarioStep[] }> = {};
  for (const [script, file] of Object.entries(files)) {
    expect(fs.existsSync(file), `${script} wrote no results (exit ${report.exec?.exitCode}):\n${output.slice(-6000)}`).toBe(true);
    results[script] = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(results[script]!.steps.filter((step) => step.exitCode !== step.expected).map((step) => `${script} ${step.name}: exit ${step.exitCode}\n${step.output.slice(-2000)}`)).toEqual([]);
  }
  expect(report.exec?.exitCode).toBe(0);
  return { status, report, output, results: results as T };
}

function runScenario<T extends { steps: ScenarioStep[] }>(copy: string, script: string, resultsVariable: string): { status: number | null; report: E2eReport; output: string; results: T } {
  const { results, ...run } = runScenarios<Record<string, T>>(copy, { [script]: resultsVariable });
  return { ...run, results: results[script]! };
}

/** What test/e2e/ops-scenario.mjs found: each verb gave the exit code it must, and said why. */
function expectLiveOperations({ replicas, steps }: { replicas: number; steps: ScenarioStep[] }): void {
  const outputOf = (name: string) => steps.find((step) => step.name === name)!.output;
  // Every verb ran as a member of the group the bootstrap grants the operations' roles, which hold no Secret.
  expect(steps.find((step) => step.name === 'the operator cannot read Secrets')?.exitCode).toBe(403);
  expect(outputOf('status after convergence')).toContain('local: every Application Synced and Healthy, every workload rolled out');
  expect(outputOf('verify the route and the endpoints')).toMatch(/PASS endpoints: .*all of webapp/);
  // 1.3.4-1.3.6: each component's pods, in the contract's order, and its resources Ready.
  expect(outputOf('check infrastructure')).toMatch(/PASS certificate manager: pods of cert-manager ready[\s\S]*PASS ingress controller: [\s\S]*PASS controller: [\s\S]*PASS ClusterIssuer /);
  expect(outputOf('check database')).toMatch(/PASS Job webapp\/webapp-migrations: Complete/);
  // Inside SQL Server's container (sqlcmd through the API server's exec): the history newest first, the tables.
  const history = /PASS migration history of webapp \(__EFMigrationsHistory, newest first\): (\S+(?:, \S+)*)/.exec(outputOf('check database'));
  expect(history?.[1]?.split(', ')).toEqual([...history![1]!.split(', ')].sort().reverse());
  expect(outputOf('check database')).toMatch(/PASS tables of webapp: .*dbo\.__EFMigrationsHistory/);
  expect(outputOf('check broker')).toMatch(/PASS Kafka kafka\/kafka-cluster: Ready=True[\s\S]*PASS KafkaTopic [\s\S]*PASS KafkaUser /);
  // 1.3.6: the topics each user sees on a broker's 9092 (kafka-topics.sh in the broker's container,
  // the password from the user's Secret), exactly those its ACLs allow; a credential Kafka no longer
  // accepts fails the check, naming the user and Kafka's refusal.
  for (const user of brokerUsers(loadEnvironments().find((env) => env.name === 'local')!)) {
    const topics = topicsVisibleTo(user.acls).join(', ');
    expect(outputOf('check broker')).toMatch(new RegExp(`PASS topics user ${user.name} sees on Pod kafka/kafka-cluster-dual-role-0:9092: ${topics}\n`));
  }
  const refused = outputOf('check broker with a credential that no longer matches the Secret');
  expect(refused).toMatch(/FAIL topics user billing sees on Pod kafka\/kafka-cluster-dual-role-0:9092: Error while executing topic command : Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512\n/);
  expect(refused).toMatch(/PASS topics user webapp sees /);
  expect(refused).toMatch(/local: broker not ready: topics user billing sees on Pod kafka\/kafka-cluster-dual-role-0:9092\n/);
  expect(outputOf('check broker after the credential is back')).toMatch(/PASS topics user billing sees [^\n]*: declarations\n/);
  expect(steps.find((step) => step.name === "the operator reads only the broker users' password Secrets")?.output).toBe(JSON.stringify({ 'get webapp-broker-user': 200, 'list in kafka': 403, 'get database-admin': 403 }));
  // The change made by hand while paused: drift names the field, status the pause, sync undoes it.
  expect(outputOf('drift shows the change made by hand')).toContain(`spec.replicas: git ${replicas}, live ${replicas + 1}`);
  const paused = JSON.parse(steps.find((step) => step.name === 'status shows the pause and the drift')!.stdout);
  expect(paused.applications.find((a: { name: string }) => a.name === 'webapp').paused).toEqual({ by: 'e2e-person', reason: 'e2e: scaling by hand' });
  expect(outputOf('sync undoes the change')).toMatch(/sync of Application webapp: Succeeded/);
  expect(outputOf('production is synced only when confirmed')).toContain('give --confirm production');
  // Self-heal stopped while paused (the change stayed 15 s), back after resume.
  expect(outputOf('still drifted while paused')).toContain(`spec.replicas: git ${replicas}, live ${replicas + 1}`);
  expect(outputOf('self-heal after resume')).toContain('no drift');
  // Inside the containers, and the blue-green gates through the API server to kwok's kubelet.
  expect(outputOf('version of every pod')).toContain('every pod runs the version its values file declares');
  expect(outputOf('version catches a pod that runs another version')).toMatch(/MISMATCH: runs v0\.0\.1, the values file declares v/);
  expect(outputOf('blue-green: the new unit ready')).toMatch(/PASS: Deployment billing-green \(green, v[\d.]+\)/);
  expect(outputOf('blue-green: the new unit healthy')).toMatch(/PASS: GET \/health on green's Pod billing-green-.*: HTTP 200/);
  expect(outputOf('blue-green: a new unit whose /health fails')).toMatch(/FAIL: GET \/health on green's Pod .*503/);
  expect(outputOf("blue-green: the endpoints are the active unit's")).toMatch(/PASS: Service billing\/billing: \d+ ready endpoints, all of billing-blue/);
  expect(outputOf('blue-green gates refuse a rolling application')).toContain('webapp uses the rolling strategy, not blue-green');
  // 1.5: each level moved the live state back, recorded, and left automated sync paused.
  expect(outputOf('rollback at the orchestrator level')).toMatch(/rolled back from revision (\d+) to revision (\d+)'s template/);
  expect(outputOf('rollback at the controller level')).toMatch(/Application webapp history:[\s\S]*sync of Application webapp: Succeeded[\s\S]*rolled back to history \d+/);
  const afterRollbacks = JSON.parse(steps.find((step) => step.name === 'still paused after the rollbacks')!.stdout);
  expect(afterRollbacks.applications.find((a: { name: string }) => a.name === 'webapp').paused).toEqual({ by: 'e2e-person', reason: 'rollback (controller)' });
  expect(afterRollbacks.applications.find((a: { name: string }) => a.name === 'webapp').lastSync).toMatch(/^Succeeded \(e2e-person/);
  // 1.5 database level: a Job of the migrations image, verified in the history; a failing Job says why.
  expect(outputOf('rollback at the database level')).toMatch(/migrations applied \(__EFMigrationsHistory, newest first\)[\s\S]*Job webapp\/(webapp-db-\w{5}): the migrations image updates database webapp to (\S+)[\s\S]*Job webapp\/\1: Complete[\s\S]*done: database webapp at \2 \(was /);
  expect(outputOf('database rollback to a migration the image does not carry')).toMatch(/Job webapp\/webapp-db-\w{5} failed: BackoffLimitExceeded.*No migration was found with the name '20261015000000_HotfixByHand'/);
  expect(outputOf('database rollback to a migration never applied')).toContain('20990101000000_NeverApplied is not an applied migration of database webapp');
  // 7.2 data recovery: the application's own backups only, stopped, restored, started with 2, resumed.
  expect(outputOf("restore refuses another database's backup")).toMatch(/--backup billing-day\d+\.bak is not one of database webapp's backups/);
  expect(outputOf('emergency restore')).toMatch(
    /restoring \/var\/opt\/mssql\/backup\/webapp-day\d+\.bak .*: verified readable[\s\S]*Application webapp: paused[\s\S]*scaled from \d+ to 0[\s\S]*pods of webapp gone: 0 pods left[\s\S]*database webapp restored[\s\S]*Job webapp\/webapp-db-\w{5}: the migrations image applies what the restored database lacks[\s\S]*Complete[\s\S]*Deployment webapp\/webapp \(\w+\): scaled to 2[\s\S]*Application webapp: resumed/,
  );
  // 7 crash loop: seen with its last run's end and log, then the contract's example fix rolled out.
  expect(outputOf('the crash loop and its last log')).toMatch(/container webapp: restarted 4 times, CrashLoopBackOff; last run ended OOMKilled \(exit 137\)[\s\S]*\| fatal: out of memory/);
  expect(outputOf('the example fix')).toMatch(/Application webapp: paused[\s\S]*now memory 1Gi, cpu 500m, liveness initial delay 60 s[\s\S]*fixed: every container runs/);
  // 1.5 package level: the release's history with both versions, the pause of the root, its
  // parent and the release, the sync to the pinned version and the checks; git's pin is that
  // version already. A version the history does not have is refused.
  const { release, pinned, next, configMap } = standInUpgrade();
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  expect(outputOf('rollback at the package level')).toMatch(
    new RegExp(
      [
        `Application ${release} history:\\n(  .*\\n)*  \\d+  ${literal(next)}  .*e2e-person\\n`,
        `deployed ${literal(next)}; going back to ${literal(pinned)} \\(the newest other version of the history\\)\\n`,
        'Application root: (already )?paused\\nApplication infrastructure: (already )?paused\\n',
        `Application ${release}: (already )?paused\\nApplication ${release}: spec.source.targetRevision ${literal(next)} -> ${literal(pinned)}\\n`,
        `[\\s\\S]*sync of Application ${release}: Succeeded[\\s\\S]*health of Application ${release} at ${literal(pinned)}: Healthy`,
        `[\\s\\S]*PASS synced revision: ${literal(pinned)}\\nPASS newest history entry \\d+: ${literal(pinned)}\\n`,
        `left in the cluster, not in ${literal(pinned)} .*: ConfigMap [\\w-]+/${configMap}\\n`,
        `[\\s\\S]*automated sync stays paused \\(root, infrastructure, ${release}\\)`,
      ].join(''),
    ),
  );
  expect(outputOf('package rollback to a version neither in the history nor in the repository')).toContain(`--to 99.99.99: the history of Application ${release} has no chart version 99.99.99`);
  const afterPackage = JSON.parse(steps.find((step) => step.name === 'still paused after the package rollback')!.stdout);
  for (const name of [ROOT_APPLICATION, 'infrastructure', release]) {
    expect(afterPackage.applications.find((a: { name: string }) => a.name === name).paused, name).toEqual({ by: 'e2e-person', reason: 'rollback (package)' });
  }
  expect(afterPackage.applications.find((a: { name: string }) => a.name === release)).toMatchObject({ sync: 'OutOfSync', health: 'Healthy', revision: pinned, lastSync: expect.stringMatching(/^Succeeded \(e2e-person/) });
  // The rollout that cannot complete: the bound, and the reason.
  expect(outputOf('sync fails at the bound with the reason')).toMatch(/not done within 30 s.*not scheduled: .*unschedulable/s);
  // 7.2: the outage's scale-out to the contract's 5 with sync paused, and the ingress controller.
  expect(outputOf('emergency outage')).toMatch(/Node \S+: Ready[\s\S]*Application webapp: paused[\s\S]*Deployment webapp\/webapp \(\w+\): scaled to 5[\s\S]*ingress controller \(pods of envoy-gateway-system\): \d+\/\d+ ready[\s\S]*Gateway webapp\/webapp: /);
  expect(outputOf('drain refuses a node with a pod no controller recreates')).toMatch(/runs pods that no controller would recreate, so a drain would lose them: webapp\/e2e-unmanaged .*nothing was changed/);
  expect(outputOf('drain a node')).toMatch(/cordoned[\s\S]*drained \(\d+ pods evicted\)/);
  expect(outputOf('uncordon the node: every pod runs again')).toMatch(/uncordoned[\s\S]*every pod runs/);
}

describe.sequential('e2e on a real control plane and Argo CD', () => {
  it(
    'converges local: every Application Synced and Healthy, every environment accepted by the API server',
    () => {
      const copy = brokenCopy(); // unbroken: the committed project as it is
      const { status, report, output } = runE2eOn(copy, ['--env', 'local']);
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
      const notConverged = report.applications.filter((a) => a.sync !== 'Synced' || a.health !== 'Healthy');
      expect(notConverged, output.slice(-4000)).toEqual([]);
      expect(report.applications.length).toBeGreaterThan(1);
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
      expect(report.dryRun.map((r) => r.environment)).toEqual(['local', 'testing', 'staging', 'production']);
      expect(report.dryRun.flatMap((r) => r.failures)).toEqual([]);
      // The phases npm run bench prints, in the order they ended: the start, each Application
      // once when it first converged, the operator's sync and the dry-run.
      const phases = report.phases.map((p) => p.phase);
      expect(phases.slice(0, 5)).toEqual(['toolchain checked', 'control plane started', 'git, charts and registry served', 'Argo CD started', 'bootstrapped']);
      const converged = phases.filter((p) => / \(wave \d+\) (Synced and )?Healthy$/.test(p)).map((p) => p.split(' ')[0]);
      expect([...converged].sort()).toEqual(report.applications.map((a) => a.name).sort());
      expect(phases.slice(-2)).toEqual(["operator's sync", 'dry-run']);
      const seconds = report.phases.map((p) => p.seconds);
      expect(seconds).toEqual([...seconds].sort((a, b) => a - b));
      expect(report.passed).toBe(true);
      expect(status).toBe(0);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'runs the live operations on converged local (npm run ops), with billing as a blue-green application',
    () => {
      const copy = brokenCopy();
      makeBlueGreen(copy, 'local', 'billing');
      const { status, report, output, results } = runScenario<{ replicas: number; steps: ScenarioStep[] }>(copy, 'ops-scenario.mjs', 'OPS_SCENARIO_RESULTS');
      expect(report.applications.filter((a) => a.sync !== 'Synced' || a.health !== 'Healthy'), output.slice(-4000)).toEqual([]);
      expectLiveOperations(results);
      expect(status).toBe(0);
    },
    RUN_TIMEOUT_MS,
  );

  // The release artifact (issue 26): local following its published charts from a real OCI
  // registry (distribution), which the run publishes to as CI does, with webapp a canary.
  // 1.4 on Flagger's real controller (e2e/flagger.ts): the canary initialized by Flagger itself
  // and its HTTPRoute accepted by Envoy Gateway's; a release (published) that Flagger analyses
  // and, with no metrics to read, rolls back at the contract's threshold. Then a second release,
  // which Argo CD follows to its chart, and the package rollback.
  it(
    'converges local from its published charts with webapp a canary that Flagger initializes and rolls back, moves an application to its next release\'s chart, and rolls the package back',
    () => {
      const copy = brokenCopy();
      makeCanary(copy, 'local', 'webapp');
      followPublishedCharts(copy, 'local', 'oci://ghcr.io/example/platform-gitops-charts');
      type Versions = Record<string, { version: string; appVersion: string }>;
      type Canary = { tag: string; next: string; events: string[]; rolledBack: { phase: string } | null; steps: ScenarioStep[] };
      type Registry = { before: Versions; after: Versions; steps: ScenarioStep[] };
      const { status, report, output, results } = runScenarios<{ 'canary-scenario.mjs': Canary; 'registry-scenario.mjs': Registry }>(copy, {
        'canary-scenario.mjs': 'CANARY_SCENARIO_RESULTS',
        'registry-scenario.mjs': 'REGISTRY_SCENARIO_RESULTS',
      });
      const canary = results['canary-scenario.mjs'];
      const { before, after, steps } = results['registry-scenario.mjs'];
      const { flagger } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === flagger.name)).toEqual({ release: flagger.name, chart: flagger.chart.chart, version: locateToolchain(ROOT).versions.flagger, runs: 'real' });
      // fluxcd/flagger v1.36.1 pkg/controller/scheduler.go: the analysis, then the rollback at the threshold.
      const events = canary.events.join('\n');
      expect(events).toContain('New revision detected! Scaling up webapp.webapp');
      expect(events).toContain(`Rolling back webapp.webapp failed checks threshold reached ${CANARY.analysis.threshold}`);
      expect(events).toContain('Canary failed! Scaling down webapp.webapp');
      expect(canary.rolledBack).toMatchObject({ phase: 'Failed' });
      // Every Application converged, the applications' from the registry at the versions published.
      expect(report.applications.filter((a) => a.sync !== 'Synced' || a.health !== 'Healthy'), output.slice(-4000)).toEqual([]);
      const applications = loadEnvironments().find((env) => env.name === 'local')!.applications.map((application) => application.name);
      expect(report.publishedCharts?.map((chart) => chart.application).sort()).toEqual([...applications].sort());
      for (const chart of report.publishedCharts!) {
        expect(chart.reference).toBe(`oci://ghcr.io/example/platform-gitops-charts/local/${chart.application}`);
        // webapp's canary release was published after the run's own publishing; the others never moved.
        if (chart.application !== 'webapp') expect(chart.published).toBe(before[chart.application]!.version);
        // The released application was rolled back to the version before its second release.
        expect(chart.synced, chart.application).toBe(before[chart.application]!.version);
      }
      expect(before['webapp']!.appVersion).toBe(canary.next);
      // The release of billing bumped the chart's patch (the values changed), and Argo CD followed it before the rollback.
      const released = steps.find((step) => step.name.startsWith('Argo CD moves'))!;
      expect(released.name).toBe(`Argo CD moves billing to ${after['billing']!.version}`);
      expect(steps.find((step) => step.name.startsWith('rollback'))!.output).toContain(`back on chart version ${before['billing']!.version} (from ${after['billing']!.version})`);
      // 1.6 names where the deployment came from: the chart in the registry, at its version (each
      // application's first deployment; webapp's canary release never became Healthy).
      for (const chart of report.publishedCharts!) {
        expect(report.notifications, output.slice(-3000)).toContainEqual(`${chart.application} (ghcr.io/example/platform-gitops-charts/local/${chart.application}): deployed, sync succeeded at revision ${chart.published}`);
      }
      expect(report.passed).toBe(true);
      expect(status).toBe(0);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails the Applications whose Secrets do not decrypt with the key given, showing the decryption error',
    () => {
      const copy = brokenCopy();
      const wrongKey = path.join(copy, '..', `${path.basename(copy)}-wrong.key`);
      spawnSync(locateToolchain(ROOT).bin('age', 'age-keygen'), ['-o', wrongKey]);
      copies.push(wrongKey);
      // The default timeout: the run stops once the decryption error has stayed (FAIL_FAST_SECONDS).
      const { status, report } = runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--age-key', wrongKey]);
      expect(status).toBe(1);
      expect(report.stopped).toMatch(/ComparisonError for \d+ s: .*(sops|decrypt|data key)/i);
      const undecrypted = report.applications.filter((a) => /sops|decrypt|data key/i.test(a.message));
      expect(undecrypted.length, JSON.stringify(report.applications, null, 2)).toBeGreaterThan(0);
      for (const app of undecrypted) expect(app.sync).not.toBe('Synced');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails the Application that syncs a custom resource before the Application that installs its CRD',
    () => {
      const copy = brokenCopy();
      breakRendered(copy, 'local/gitops.yaml', (objects) => [
        ...objects,
        { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'e2e-too-early' }, spec: { selfSigned: {} } },
      ], 'a ClusterIssuer in the root, before cert-manager is installed');
      // A CRD a later wave installs may mend this until the sync's retries are spent: bounded here.
      const { status, report } = runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--timeout', '150']);
      expect(status).toBe(1);
      const root = report.applications.find((a) => a.message.includes('ClusterIssuer'));
      expect(root?.name).toBe(ROOT_APPLICATION);
      expect(root?.sync).not.toBe('Synced');
      expect(root?.message).toMatch(/ClusterIssuer.*(could not find|not found|no matches|CRD)/i);
    },
    RUN_TIMEOUT_MS,
  );

  // Three breaks in one run (each costs the whole convergence of the application wave): the
  // first application's PreSync hook; the second application's Gateway, which Envoy Gateway's
  // real control plane must refuse; and the alert routing's on-call receiver, which
  // prometheus-operator's must reject (Argo CD syncs it: only the operator reads the Secret).
  it(
    'fails the Application whose PreSync hook reads a Secret that the same Application creates in its Sync phase, and the one whose Gateway names another namespace\'s Secret without a ReferenceGrant; prometheus-operator rejects an alert routing whose receiver reads a key its Secret lacks',
    () => {
      const copy = brokenCopy();
      breakRendered(copy, chartFile('local', 'monitoring'), (objects) =>
        objects.map((o) => {
          if (o.kind !== 'AlertmanagerConfig') return o;
          for (const receiver of o.spec.receivers) for (const webhook of receiver.webhookConfigs ?? []) webhook.urlSecret.key = 'no-such-key';
          return o;
        }), 'the alert routing\'s webhook receiver reads a key its Secret does not have');
      const second = loadEnvironments().find((env) => env.name === 'local')!.applications[1]!.name;
      breakRendered(copy, chartFile('local', applicationChartId(second)), (objects) =>
        objects.map((o) => {
          if (o.kind !== 'Gateway') return o;
          for (const listener of o.spec.listeners) {
            for (const ref of listener.tls?.certificateRefs ?? []) ref.namespace = 'cert-manager';
          }
          return o;
        }), 'a Gateway listener naming a Secret of cert-manager\'s namespace, with no ReferenceGrant');
      const restricted = {
        securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        container: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      };
      let namespace = '';
      // The chart of local's first application (dist/local/<application>.yaml).
      const application = loadEnvironments().find((env) => env.name === 'local')!.applications[0]!.name;
      breakRendered(copy, chartFile('local', applicationChartId(application)), (objects) => {
        namespace = objects.find((o) => o.kind === 'Deployment')!.metadata.namespace;
        return [
          ...objects,
          { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'e2e-made-in-sync', namespace }, stringData: { value: 'x' } },
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { name: 'e2e-early-hook', namespace, annotations: { 'argocd.argoproj.io/hook': 'PreSync' } },
            spec: {
              backoffLimit: 0,
              activeDeadlineSeconds: 20,
              template: {
                spec: {
                  restartPolicy: 'Never',
                  securityContext: restricted.securityContext,
                  containers: [
                    {
                      name: 'hook',
                      image: 'busybox:1.37',
                      securityContext: restricted.container,
                      resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '10m', memory: '16Mi' } },
                      env: [{ name: 'VALUE', valueFrom: { secretKeyRef: { name: 'e2e-made-in-sync', key: 'value' } } }],
                    },
                  ],
                },
              },
            },
          },
        ];
      }, 'a PreSync hook that reads a Secret of the Sync phase');
      const { status, report } = runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--timeout', '300']);
      expect(status).toBe(1);
      const broken = report.applications.find((a) => a.message.includes('e2e-early-hook'));
      expect(broken, JSON.stringify(report.applications, null, 2)).toBeDefined();
      expect(broken!.sync === 'Synced' && broken!.health === 'Healthy').toBe(false);
      expect(broken!.message).toMatch(/e2e-early-hook/);
      // Envoy Gateway v1.9.1 internal/gatewayapi/validate.go: the listener's refs are not
      // resolved, so Argo CD's health of the Gateway is Degraded.
      const refused = report.applications.find((a) => a.name === second);
      expect(refused?.health, JSON.stringify(report.applications, null, 2)).toBe('Degraded');
      expect(refused?.message).toMatch(/not permitted by any ReferenceGrant/);
      // prometheus-operator v0.94.1 pkg/alertmanager/operator.go (checkWebhookConfigs, then
      // "was rejected due to invalid configuration"): the whole routing is left out.
      const [routing] = rendered('local', 'monitoring.coreos.com/v1alpha1', 'AlertmanagerConfig');
      const id = `${routing.metadata.namespace}/${routing.metadata.name}`;
      expect(report.monitoring.rejected, JSON.stringify(report.monitoring, null, 2)).toContainEqual(expect.stringMatching(new RegExp(`^AlertmanagerConfig ${id}: .*rejected due to invalid configuration.*no-such-key`)));
      const configs = Object.values(report.monitoring.alertmanagerConfigs);
      expect(configs).toHaveLength(1);
      expect(configs[0]).not.toContain(`${id}/`);
    },
    RUN_TIMEOUT_MS,
  );

  // cert-manager's own webhook (e2e/cert-manager.ts) judges every cert-manager object at
  // admission, as on a cluster: the stand-in that ran before issued this certificate.
  it(
    'fails the Application whose Certificate cert-manager\'s webhook refuses (an RSA key of 1024 bits)',
    () => {
      const copy = brokenCopy();
      let certificate = '';
      breakRendered(copy, 'local/issuers.yaml', (objects) =>
        objects.map((o) => {
          if (o.kind !== 'Certificate') return o;
          certificate = o.metadata.name;
          return { ...o, spec: { ...o.spec, privateKey: { algorithm: 'RSA', size: 1024 } } };
        }), 'a Certificate with a 1024-bit RSA key');
      expect(certificate).not.toBe('');
      const { status, report } = runE2eOn(copy, ['--env', 'local', '--no-dry-run']);
      expect(status).toBe(1);
      // internal/apis/certmanager/validation/certificate.go (v1.21.2): 2048 to 8192 bits for RSA.
      const denial = /admission webhook "webhook\.cert-manager\.io" denied the request: spec\.privateKey\.size: Invalid value: 1024: must be between 2048 and 8192 for rsa keyAlgorithm/;
      expect(report.stopped).toMatch(denial);
      const refused = report.applications.find((a) => denial.test(a.message));
      expect(refused?.name, JSON.stringify(report.applications, null, 2)).toBe('issuers');
      expect(refused?.sync).not.toBe('Synced');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails Applications that follow a branch the repository does not have',
    () => {
      const copy = brokenCopy();
      const renamed = new Set<string>();
      for (const file of ['gitops.yaml', 'infrastructure.yaml']) {
        breakRendered(copy, `local/${file}`, (objects) =>
          objects.map((o) => {
            if (o.kind !== 'Application') return o;
            for (const source of [o.spec.source, ...(o.spec.sources ?? [])]) {
              if (source?.path !== undefined) {
                source.targetRevision = 'no-such-branch';
                renamed.add(o.metadata.name);
              }
            }
            return o;
          }), `Applications follow no-such-branch (${file})`);
      }
      const { status, report } = runE2eOn(copy, ['--env', 'local', '--no-dry-run']);
      expect(status).toBe(1);
      expect(report.stopped).toMatch(/ComparisonError for \d+ s: .*no-such-branch/);
      const unresolved = report.applications.filter((a) => /no-such-branch/.test(a.message));
      expect(unresolved.length, JSON.stringify(report.applications, null, 2)).toBeGreaterThan(0);
      for (const app of unresolved) {
        expect(renamed.has(app.name)).toBe(true);
        expect(app.sync).not.toBe('Synced');
      }
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails an invalid CronJob schedule, refused by the API server in the sync and in the dry-run',
    () => {
      const copy = brokenCopy();
      let cronJob = '';
      breakRendered(copy, 'local/database.yaml', (objects) =>
        objects.map((o) => {
          if (o.kind !== 'CronJob') return o;
          cronJob = o.metadata.name;
          return { ...o, spec: { ...o.spec, schedule: '0 25 * * *' } };
        }), 'an hour that does not exist');
      expect(cronJob).not.toBe('');
      const { status, report } = runE2eOn(copy, ['--env', 'local']);
      expect(status).toBe(1);
      // The API server refuses the object for good (HTTP 422, Invalid): the run stops.
      expect(report.stopped).toMatch(new RegExp(`refused for ${'\\d+'} s: .*${cronJob}.*is invalid`));
      const refused = report.applications.find((a) => a.message.includes(cronJob) && /schedule/i.test(a.message));
      expect(refused, JSON.stringify(report.applications, null, 2)).toBeDefined();
      const local = report.dryRun.find((r) => r.environment === 'local')!;
      expect(local.failures.some((f) => f.includes(`CronJob`) && f.includes(cronJob) && /schedule/i.test(f))).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );
});

