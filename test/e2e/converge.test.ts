import { spawnSync } from 'node:child_process';
import { escapeRegExp } from '../../src/base/regexp';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { locateToolchain } from '../../toolchain';
import { brokerUsers, loadEnvironments } from '../../src/environments';
import { INFRASTRUCTURE_RELEASES, releaseIn, releaseVersion } from '../../src/infrastructure/releases';
import { ALERTS, SMOKE } from '../../src/contract/contract';
import { ALERT_ROUTING, DATABASE } from '../../src/contract/choices';
import { supportedKubernetesMinors } from '../../src/infrastructure/supported-kubernetes';
import { ROOT, temporaryDirectory } from '../support';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import type { ObservedState } from '../../e2e/harness';
import { STAND_IN_MIGRATIONS } from '../../e2e/sql-server-state';
import { DEFAULT_BOOTSTRAP_SERVERS, migrationsName, serviceAddress, SMOKE_VARIABLES, smokeName } from '../../src/contract/naming';
import { BROKER_STEP_CONTAINER, DATABASE_STEP_CONTAINER, HTTP_STEP_CONTAINER } from '../../src/constructs/smoke-hook';
import { ROOT_APPLICATION } from '../../src/contract/platform-charts';
import { topicsVisibleTo } from '../../src/cluster/kafka-topics';
import { standInUpgrade } from '../../e2e/stand-in-charts';
import { brokenCopy, execScenarios, LIVE_OPERATIONS_TIMEOUT_MS, removeCopies, rendered, scenarioResults, type ScenarioRun, type ScenarioStep, tool } from './cases';
import { commitAll } from './e2e-copy';
import { compareReleaseVersions, knownVersions, versionFacts } from '../../src/contract/release-versions';

afterEach(removeCopies);

const renderedCertificates = (environment: string): any[] => rendered(environment, 'cert-manager.io/v1', 'Certificate');

/**
 * What prometheus-operator generated on converged local: each rendered PrometheusRule became a
 * rule file of the Prometheus with the same groups, which promtool loads; the AlertmanagerConfig
 * was merged into the Alertmanager's configuration, which amtool loads and which routes a
 * critical alert to on-call and the team chat, a warning to the chat only, and others nowhere.
 */
function expectGeneratedMonitoring(report: ObservedState): void {
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

/** What test/e2e/ops-scenario.mjs found: each verb gave the exit code it must, and said why. */
function expectLiveOperations({ replicas, steps }: { replicas: number; steps: ScenarioStep[] }): void {
  const outputOf = (name: string) => steps.find((step) => step.name === name)!.output;
  // Every verb ran as a member of the group the bootstrap grants the operations' roles, which hold no Secret.
  expect(steps.find((step) => step.name === 'the operator cannot read Secrets')?.exitCode).toBe(403);
  // No exec in Argo CD's namespace (the repository server's sops container holds the age key); exec where the verbs do.
  const execs = JSON.parse(outputOf('the operator cannot exec into the repository server'));
  expect(Object.entries(execs).map(([what, status]) => `${what.startsWith('exec into argocd/') ? 'argocd' : 'application'}: ${status === 403 ? 'refused' : 'authorized'}`)).toEqual(['argocd: refused', 'application: authorized']);
  expect(outputOf('status after convergence')).toContain('local: every Application Synced and Healthy, every workload rolled out');
  expect(outputOf('verify the route and the endpoints')).toMatch(/PASS endpoints: .*all of webapp/);
  // 1.3.4-1.3.6: each component's pods, in the contract's order, and its resources Ready.
  expect(outputOf('check infrastructure')).toMatch(/PASS certificate manager: pods of cert-manager ready[\s\S]*PASS ingress controller: [\s\S]*PASS controller: [\s\S]*PASS ClusterIssuer /);
  expect(outputOf('check database')).toMatch(/PASS Job webapp\/webapp-migrations: Complete/);
  // 1.3 step 7: every release on the version local's values name (Argo CD's history), and a
  // release's pods ready with the controller image the release table gives its version.
  expect(outputOf('upgrade-status after convergence')).toContain('local: every release runs the version src/environments/local/environment.yaml names');
  const { release: upgraded, from, to } = infrastructureUpgrade();
  const imageOf = (version: string) => versionFacts(upgraded, version)!.controllerImage!;
  const releaseCheck = (version: string) => new RegExp(`PASS ${escapeRegExp(upgraded)}: pods of ${escapeRegExp(upgraded)} ready[\\s\\S]*PASS ${escapeRegExp(`${upgraded} ${version}: controller image ${imageOf(version)}: `)}`);
  expect(outputOf('check cert-manager')).toMatch(releaseCheck(from));
  // The upgrade: npm run upgrade's rendered diff, git ahead of the cluster, then Argo CD's sync
  // of it and the release's pods on the image of the version they run now.
  expect(outputOf('npm run upgrade')).toContain(`local: ${upgraded} ${from} -> ${to}`);
  expect(outputOf('npm run upgrade')).toMatch(new RegExp(`-\\s+targetRevision: ${escapeRegExp(from)}\n\\s*\\+\\s+targetRevision: ${escapeRegExp(to)}\n`));
  expect(outputOf('upgrade-status before the upgrade is synced')).toContain(`${upgraded}  deployed ${from}  git wants ${to} (DIFFERS)  known ${knownVersions(upgraded).join(', ')}`);
  expect(outputOf('upgrade-status before the upgrade is synced')).toContain(`local: ${upgraded} runs ${from}, git wants ${to}`);
  expect(outputOf('upgrade-status once Argo CD synced the upgrade')).toContain(`${upgraded}  deployed ${to}  git wants ${to}  known `);
  expect(outputOf('upgrade-status once Argo CD synced the upgrade')).toContain('local: every release runs the version src/environments/local/environment.yaml names');
  expect(outputOf('check the upgraded release')).toMatch(releaseCheck(to));
  // 7 broker problems: the lag read through the broker, bounded and clear when it cannot be (the e2e's brokers speak no Kafka protocol).
  const lag = steps.find((step) => step.name === 'consumer lag with the broker out of reach')!;
  expect(lag.output).toMatch(new RegExp(`FAIL consumer lag: the broker at ${escapeRegExp(DEFAULT_BOOTSTRAP_SERVERS)} could not be read: \\S`));
  // Its bound, and the time a verb takes to start on a busy machine.
  expect(lag.took!).toBeLessThan(SMOKE.stepTimeoutMs.broker / 1000 + 60);
  // 4.2 without smoke credentials: health only, the status call said skipped; the database
  // check run with the application's login, failing within its bound and naming the server.
  const verified = outputOf('verify health only, with the database check');
  expect(verified).toContain(`SKIP status: ${SMOKE_VARIABLES.username} and ${SMOKE_VARIABLES.password} are not set (health only, no authenticated status call)`);
  expect(verified).toMatch(/PASS health: GET \/health: /);
  expect(verified).not.toMatch(/^(PASS|FAIL) status: /m);
  expect(verified).toMatch(/PASS endpoints: .*all of webapp/);
  const server = serviceAddress(DATABASE.serverName, loadEnvironments().find((env) => env.name === 'local')!.database.namespace);
  expect(verified.split('\n').find((line) => line.startsWith('FAIL database: SQL Server login and '))).toContain(server);
  expect(verified).toMatch(/Verification of webapp in local failed: (tls, database|database, tls)$/m);
  // What these steps add to the run, for docs/performance.md.
  const added = ['npm run upgrade', 'npm run upgrade in the served checkout', 'upgrade-status before the upgrade is synced', 'upgrade-status once Argo CD synced the upgrade', 'check the upgraded release', 'consumer lag with the broker out of reach', 'verify health only, with the database check'];
  console.log(`the upgrade, lag and health-only steps took ${added.map((name) => `${name} ${steps.find((step) => step.name === name)?.took ?? '-'} s`).join(', ')}`);
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
  // The paths of sync and rollback that take options: a pruning, forced sync; back to a named rollout revision; back to a named history entry, pruning and forced.
  expect(outputOf('sync with --prune and --force')).toMatch(/ops sync: Application webapp in local on \S+, by e2e-person, pruning, forced[\s\S]*sync of Application webapp: Succeeded/);
  expect(outputOf('rollback at the orchestrator level to a named revision')).toMatch(/rolled back from revision \d+ to revision \d+'s template/);
  expect(outputOf('rollback at the controller level to a named entry, pruning and forced')).toMatch(/sync of Application webapp: Succeeded[\s\S]*rolled back to history \d+/);
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
  expect(outputOf('rollback at the package level')).toMatch(
    new RegExp(
      [
        `Application ${release} history:\\n(  .*\\n)*  \\d+  ${escapeRegExp(next)}  .*e2e-person\\n`,
        `deployed ${escapeRegExp(next)}; going back to ${escapeRegExp(pinned)} \\(the newest other version of the history\\)\\n`,
        // Each pause in force before the next: Argo CD compared the root, infrastructure and the release in that order.
        `\\[\\d+ s\\] pause of Application root: [\\s\\S]*pause of Application infrastructure: [\\s\\S]*pause of Application ${release}: no sync running\\n`,
        'Application root: (already )?paused\\nApplication infrastructure: (already )?paused\\n',
        `Application ${release}: (already )?paused\\nApplication ${release}: spec.source.targetRevision ${escapeRegExp(next)} -> ${escapeRegExp(pinned)}\\n`,
        `[\\s\\S]*sync of Application ${release}: Succeeded[\\s\\S]*health of Application ${release} at ${escapeRegExp(pinned)}: Healthy`,
        `[\\s\\S]*PASS synced revision: ${escapeRegExp(pinned)}\\nPASS newest history entry \\d+: ${escapeRegExp(pinned)}\\n`,
        `left in the cluster, not in ${escapeRegExp(pinned)} .*: ConfigMap [\\w-]+/${configMap}\\n`,
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
  // A pause terminates the automated sync that runs, and is in force only then.
  expect(outputOf('pause terminates the automated sync that runs')).toMatch(/pause of Application webapp: terminating the automated sync that runs[\s\S]*Application webapp: paused; the automated sync that was running terminated/);
  // Argo CD does not sync that revision again by itself (autoSync, "Failed last sync attempt"): resume names the sync.
  expect(outputOf('resume after the terminated sync')).toContain("Application webapp: resumed; its last automated sync failed (Operation terminated");
  expect(outputOf('resume after the terminated sync')).toContain("npm run ops -- sync --env local --application webapp puts git's state back");
  // 7.2: the outage's scale-out to the contract's 5 with sync paused, and the ingress controller.
  expect(outputOf('emergency outage')).toMatch(/Node \S+: Ready[\s\S]*Application webapp: paused[\s\S]*Deployment webapp\/webapp \(\w+\): scaled to 5[\s\S]*ingress controller \(pods of envoy-gateway-system\): \d+\/\d+ ready[\s\S]*Gateway webapp\/webapp: /);
  expect(outputOf('drain refuses a node with a pod no controller recreates')).toMatch(/runs pods that no controller would recreate, so a drain would lose them: webapp\/e2e-unmanaged .*nothing was changed/);
  expect(outputOf('drain a node')).toMatch(/cordoned[\s\S]*drained \(\d+ pods evicted\)/);
  expect(outputOf('uncordon the node: every pod runs again')).toMatch(/uncordoned[\s\S]*every pod runs/);
}

/** An infrastructure release the live operations upgrade in local (1.3 step 7), from one version the table knows to another. */
interface InfrastructureUpgrade {
  readonly release: string;
  readonly from: string;
  readonly to: string;
}

/**
 * The upgrade the live operations make: cert-manager (its controllers run for real), from the
 * newest version the table knows before the one local's values name, to that one.
 */
function infrastructureUpgrade(): InfrastructureUpgrade {
  const local = loadEnvironments().find((env) => env.name === 'local')!;
  const running = releaseIn(INFRASTRUCTURE_RELEASES.certManager, local);
  const [release, to] = [running.name, releaseVersion(running)];
  const from = knownVersions(release).filter((version) => compareReleaseVersions(version, to) < 0).at(-1);
  if (from === undefined) throw new Error(`local runs ${release} ${to}, the oldest version the table knows: the e2e's upgrade needs one before it (src/contract/release-versions.ts)`);
  return { release, from, to };
}

/** The copy's local moved back to the upgrade's older version (npm run upgrade --allow-downgrade), committed: what converges first. */
function atOlderVersion(copy: string, upgrade: InfrastructureUpgrade): string {
  const downgrade = spawnSync(process.execPath, [path.join(copy, 'scripts', 'run.cjs'), 'upgrade', '--env', 'local', '--release', upgrade.release, '--version', upgrade.from, '--allow-downgrade'], { cwd: copy, encoding: 'utf8' });
  if (downgrade.status !== 0) throw new Error(`npm run upgrade of the copy to ${upgrade.release} ${upgrade.from} failed: ${downgrade.stdout}${downgrade.stderr}`);
  commitAll(copy, `local: ${upgrade.release} ${upgrade.from}, to upgrade on the cluster`);
  return copy;
}

/**
 * The one cluster run of this file, made by the first test that needs it: the committed project,
 * with local's cert-manager one version back (`infrastructureUpgrade`), converges on local (every
 * environment dry-run beside it), the harness records what it converged to (`report.converged`),
 * then test/e2e/ops-scenario.mjs makes billing blue-green, upgrades cert-manager and runs the
 * live operations on it. One convergence serves both claims: a second would cost a whole run
 * (about 200 s of a lane here).
 */
let operated: Promise<ScenarioRun> | undefined;
const operate = (upgrade: InfrastructureUpgrade): Promise<ScenarioRun> =>
  execScenarios(atOlderVersion(brokenCopy(), upgrade), { 'ops-scenario.mjs': 'OPS_SCENARIO_RESULTS' }, { dryRun: true, env: { E2E_INFRASTRUCTURE_UPGRADE: JSON.stringify(upgrade) } });
const operatedRun = (): Promise<ScenarioRun> => (operated ??= operate(infrastructureUpgrade()));

describe('e2e: the committed project converges on a real control plane and Argo CD, then the live operations run on it', () => {
  it(
    'converges local: every Application Synced and Healthy, every environment accepted by the API server',
    async () => {
      const { report, output } = await operatedRun();
      // Convergence first: every later check reads what converged (recorded before the live
      // operations changed anything), and a run that stopped names the Application and its error
      // at the end of its output.
      const converged = report.converged;
      expect(converged, `${report.stopped ?? 'not stopped'}: ${report.applications.filter((a) => a.sync !== 'Synced' || a.health !== 'Healthy').map((a) => `${a.name} ${a.sync}/${a.health}`).join(', ')}\n${output.slice(-6000)}`).toBeDefined();
      const state = converged!;
      expect(report.applications.length).toBeGreaterThan(1);
      expect(report.kubernetes.startsWith(`v${supportedKubernetesMinors().at(-1)}.`), report.kubernetes).toBe(true);
      expect(report.argocd).toMatch(/^v3\./);
      // Envoy Gateway's control plane and its CRDs chart are the real ones, at the platform's version.
      const { envoyGateway, gatewayApiCrds } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === envoyGateway.name)).toEqual({ release: envoyGateway.name, chart: envoyGateway.chart.chart, version: envoyGateway.chart.version, runs: 'real', served: 'real chart' });
      expect(report.controllers.find((c) => c.release === gatewayApiCrds.name)?.runs).toBe('real chart');
      // Its topology injector webhook is served (e2e/envoy-gateway.ts TOPOLOGY_INJECTOR): each
      // Envoy proxy pod was bound with its node's zone as its zone annotation, quoted by Go's %q
      // (internal/provider/kubernetes/topology_injector.go at v1.9.1), which JSON quoting equals
      // for the nodes' plain zone names.
      expect(state.gatewayProxies.length, output.slice(-3000)).toBeGreaterThan(0);
      for (const proxy of state.gatewayProxies) {
        expect(proxy.nodeZone, `${proxy.pod} on ${proxy.node}`).toBeDefined();
        expect(proxy.zone, `${proxy.pod} on ${proxy.node}`).toBe(JSON.stringify(proxy.nodeZone));
      }
      // Flagger's and its load tester's charts are the real ones too (e2e/upstream-charts.ts).
      const { flagger, flaggerLoadTester } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === flagger.name)).toEqual({ release: flagger.name, chart: flagger.chart.chart, version: `v${flagger.chart.version}`, runs: 'real', served: 'real chart' });
      expect(report.controllers.find((c) => c.release === flaggerLoadTester.name)?.served).toBe('real chart');
      // cert-manager's own webhook and controllers issued every rendered Certificate: the CA
      // from the self-signed issuer, each other one from that CA, for the names it asks for.
      const { certManager } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === certManager.name)).toEqual({ release: certManager.name, chart: certManager.chart.chart, version: certManager.chart.version, runs: 'real', served: 'real chart' });
      const rendered = renderedCertificates('local');
      expect(state.certificates.map((c) => `${c.namespace}/${c.name}`)).toEqual(rendered.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).sort());
      const ca = rendered.find((c) => c.spec.isCA === true)!;
      for (const certificate of rendered) {
        const issued = state.certificates.find((c) => c.namespace === certificate.metadata.namespace && c.name === certificate.metadata.name)!;
        expect(issued.ready, issued.name).toBe('True');
        expect(issued.issuer, issued.name).toBe(`CN=${ca.spec.commonName}`);
        for (const name of certificate.spec.dnsNames ?? []) expect(issued.subjectAltName, issued.name).toContain(`DNS:${name}`);
      }
      // prometheus-operator (kube-prometheus-stack's, as the toolchain builds it) generated the rule files and the Alertmanager configuration.
      const { kubePrometheusStack } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === kubePrometheusStack.name)).toEqual({ release: kubePrometheusStack.name, chart: kubePrometheusStack.chart.chart, version: locateToolchain(ROOT).versions['prometheus-operator'], runs: 'real', served: 'stand-in chart' });
      expectGeneratedMonitoring(state);
      // 1.6: Argo CD's notifications controller (the argocd binary's) announced each application's
      // deployment in the team chat, the run's webhook sink; the platform's own Applications post nothing.
      const applications = loadEnvironments().find((env) => env.name === 'local')!.applications.map((application) => application.name);
      for (const name of applications) {
        expect(state.notifications, output.slice(-3000)).toContainEqual(expect.stringMatching(new RegExp(`^${name} \\(dist/local\\): deployed, sync succeeded at revision [0-9a-f]{40}$`)));
      }
      expect(state.notifications.filter((text) => !applications.some((name) => text.startsWith(`${name} (`)))).toEqual([]);
      // 1.3 step 5: each application's Sync hook ran its migrations image, played on loopback:
      // its connection string, read from the Secret its pod names, reached SQL Server through the
      // database's Service and logged in as the login the setup hook made, with the password that
      // hook gave it; the image then applied every migration to a database that had none.
      for (const { name, namespace } of loadEnvironments().find((env) => env.name === 'local')!.applications) {
        const hook = state.migrations.filter((run) => run.job === migrationsName(name));
        expect(hook.length, JSON.stringify(state.migrations)).toBeGreaterThan(0);
        expect(hook[0]).toMatchObject({ exitCode: 0, message: `Applied ${STAND_IN_MIGRATIONS.map((m) => m.id).join(', ')}. Done.` });
        expect(hook.every((run) => run.exitCode === 0), JSON.stringify(hook)).toBe(true);
        // 4.1: its PostSync smoke hook's HTTP step, the rendered script, ran against one of the
        // application's pods its Service sends to, with the smoke Secret's credentials; then its
        // database step logged in to SQL Server through the database's Service as the setup
        // hook's login, with the password that hook gave it; then its broker step, played as its
        // container (user, read-only root, /tmp emptyDir), logged in to a broker through the
        // bootstrap Service as the application's KafkaUser, with the password Strimzi gave it.
        const smoke = state.smoke.filter((run) => run.pod.startsWith(`${namespace}/${smokeName(name)}-`));
        expect(smoke.length, JSON.stringify(state.smoke)).toBeGreaterThan(0);
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
      // once when it first converged, the operator's sync and the live operations (--exec); the
      // dry-run, which runs beside the convergence, wherever it ended.
      const phases = report.phases.map((p) => p.phase);
      expect(phases.slice(0, 5)).toEqual(['toolchain checked', 'control plane started', 'git, charts and registry served', 'Argo CD started', 'bootstrapped']);
      const firstConverged = phases.filter((p) => / \(wave \d+\) (Synced and )?Healthy$/.test(p)).map((p) => p.split(' ')[0]);
      expect([...firstConverged].sort()).toEqual(report.applications.map((a) => a.name).sort());
      expect(phases.filter((p) => p !== 'dry-run').slice(-2)).toEqual(["operator's sync", 'exec']);
      expect(phases.filter((p) => p === 'dry-run')).toHaveLength(1);
      const seconds = report.phases.map((p) => p.seconds);
      expect(seconds).toEqual([...seconds].sort((a, b) => a - b));
    },
    LIVE_OPERATIONS_TIMEOUT_MS,
  );

  it(
    'runs the live operations on converged local (npm run ops), with billing made a blue-green application',
    async () => {
      const run = await operatedRun();
      const { report, output, status } = run;
      const results = scenarioResults<{ 'ops-scenario.mjs': { replicas: number; steps: ScenarioStep[] } }>(run)['ops-scenario.mjs'];
      expect(report.applications.filter((a) => a.sync !== 'Synced' || a.health !== 'Healthy'), output.slice(-4000)).toEqual([]);
      expectLiveOperations(results);
      expect(report.passed).toBe(true);
      expect(status).toBe(0);
    },
    LIVE_OPERATIONS_TIMEOUT_MS,
  );
});

