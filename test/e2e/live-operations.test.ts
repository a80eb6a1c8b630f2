import { ROOT_APPLICATION } from '../../src/contract/platform-charts';
import { brokerUsers, loadEnvironments } from '../../src/environments';
import { topicsVisibleTo } from '../../src/cluster/kafka-topics';
import { afterEach, describe, expect, it } from 'vitest';
import { standInUpgrade } from '../../e2e/stand-in-charts';
import { brokenCopy, removeCopies, RUN_TIMEOUT_MS, runScenario, type ScenarioStep } from './cases';
import { makeBlueGreen } from './e2e-copy';

afterEach(removeCopies);

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
        // Each pause in force before the next: Argo CD compared the root, infrastructure and the release in that order.
        `\\[\\d+ s\\] pause of Application root: [\\s\\S]*pause of Application infrastructure: [\\s\\S]*pause of Application ${release}: no sync running\\n`,
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

describe('e2e: the live operations on a converged cluster', () => {
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
});
