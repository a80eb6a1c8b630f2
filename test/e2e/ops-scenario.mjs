// The live operations (`npm run ops`) against the converged `local` cluster, run by
// test/e2e/converge.test.ts through `npm run e2e -- --env local --exec` on a copy of the committed
// project, once its convergence was recorded. First `billing` becomes a blue-green application
// (blue active, green beside it), committed and served as a person would; then each verb with
// the exit code it must give, run as an operator holding only the roles the bootstrap grants
// (src/cluster/operations-role.ts), and the changes made behind Argo CD's back with the
// Kubernetes client library as the administrator, as a person with kubectl would make them. Writes every step
// (verb, exit code, output, and stdout alone) to $OPS_SCENARIO_RESULTS and exits 1 when a step's exit code
// is not the expected one. Run from the checkout (the e2e's working directory).
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { git, gitWebhook, linkNodeModules, makeBlueGreen, nextPatch, pushServed, stopwatch } from './scenario-steps.mjs';
import { lagAndHealthOnly, upgradeInfrastructure } from './ops-scenario-upgrade.mjs';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const k8s = require('@kubernetes/client-node');

// The verbs run as KUBECONFIG's user, an operator with the bootstrap's roles alone; a person
// with the administrator's kubeconfig makes the changes behind Argo CD's back.
const config = new k8s.KubeConfig();
config.loadFromFile(process.env.E2E_ADMIN_KUBECONFIG);
const objects = k8s.KubernetesObjectApi.makeApiClient(config);
const core = config.makeApiClient(k8s.CoreV1Api);
const merge = (body) => objects.patch(body, undefined, undefined, 'e2e-person', undefined, k8s.PatchStrategy.MergePatch);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const ENV = 'local';
const APP = 'webapp';
const BLUE_GREEN_APP = 'billing';
/** Each pod's loopback container (e2e/live-containers.ts): `<E2E_CONTAINERS>/<namespace>/<pod>/`. */
const CONTAINERS = process.env.E2E_CONTAINERS;
const steps = [];
let failed = 0;
const elapsed = stopwatch();
/** Seconds since the scenario started, as each step's line shows them. */
const at = () => `at ${elapsed()} s`;

/** `npm run ops -- <args>` (with `env` besides the scenario's): its exit code and output, streamed with a prefix. */
function ops(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/run.cjs', 'ops', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk) => {
        output += chunk;
        process.stdout.write(String(chunk).replace(/^(?=.)/gm, '  | '));
      });
    }
    child.on('close', (code) => resolve({ code, output, stdout }));
  });
}

/** One verb, recorded with how long it took (`took`, seconds); `env`: variables the verb is given besides the scenario's. */
async function step(name, args, expected, env = {}) {
  console.log(`--- ${name}: npm run ops -- ${args.join(' ')} (expects exit ${expected}; ${at()})`);
  const started = Date.now();
  const { code, output, stdout } = await ops(args, env);
  steps.push({ name, args, expected, exitCode: code, output, stdout, took: Math.round((Date.now() - started) / 100) / 10 });
  if (code !== expected) {
    failed++;
    console.log(`--- ${name}: exit ${code}, expected ${expected}`);
  }
  return output;
}

/**
 * Run a verb until it gives `expected` or `seconds` pass (what Argo CD does takes a moment);
 * `before`, when given, runs before each try.
 */
async function eventually(name, args, expected, seconds, before) {
  const started = Date.now();
  const deadline = started + seconds * 1000;
  for (;;) {
    if (before !== undefined) await before();
    const { code, output, stdout } = await ops(args);
    if (code === expected || Date.now() > deadline) {
      steps.push({ name, args, expected, exitCode: code, output, stdout, took: Math.round((Date.now() - started) / 100) / 10 });
      if (code !== expected) failed++;
      console.log(`--- ${name}: exit ${code} (expected ${expected}; ${at()})`);
      return output;
    }
    await sleep(3_000);
  }
}

/** A step whose verdict the scenario reads from the cluster itself. */
const observed = (name, ok, output) => {
  steps.push({ name, args: [], expected: 0, exitCode: ok ? 0 : 1, output, stdout: '' });
  if (!ok) failed++;
};
/** What the scenario's modules record their steps with: a verb, a verb until it gives its code, and a step already run. */
const verbs = {
  step,
  eventually,
  record: (entry) => {
    steps.push(entry);
    if (entry.exitCode !== entry.expected) failed++;
  },
};

const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: APP, namespace: APP } };
const webappApplication = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: APP, namespace: JSON.parse(process.env.E2E_STAND_IN_UPGRADE).applicationNamespace } };
/** The sync options of the last operation Argo CD ran on webapp's Application, as it recorded them. */
const lastSyncOf = async () => (await objects.read(webappApplication)).status?.operationState?.operation?.sync ?? {};
const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const scaleByHand = async () => {
  const live = await objects.read(deployment);
  await merge({ ...deployment, spec: { replicas: live.spec.replicas + 1 } });
  return live.spec.replicas;
};

// `billing` becomes a blue-green application, as a person changes its values file: blue keeps
// the running tag and is active, green runs the next patch beside it (`replicas` and
// `image.tag` left out, as the strategy wants). The change is made in the operator's checkout
// (this working directory, which every verb reads its values from) and in the checkout the git
// server serves (the same project with local's Secrets re-encrypted for the run's key): each
// rendered and committed, the served one pushed to the branch Argo CD follows. Then status
// holds for billing once Argo CD synced that commit and both units rolled out at their tags;
// meanwhile the refresh a git webhook asks is asked again every 20 s (a refresh that began
// before the push may take the first request).
const SOURCE = process.env.E2E_SOURCE;
linkNodeModules(SOURCE);
makeBlueGreen(process.cwd(), ENV, BLUE_GREEN_APP);
// A run given the age key serves the operator's checkout itself.
if (path.resolve(SOURCE) !== path.resolve(process.cwd())) makeBlueGreen(SOURCE, ENV, BLUE_GREEN_APP);
pushServed(SOURCE);
let refreshAskedAt = 0;
const askRefreshEvery20s = async () => {
  if (Date.now() - refreshAskedAt < 20_000) return;
  refreshAskedAt = Date.now();
  await gitWebhook(objects, k8s);
};
await eventually(`${BLUE_GREEN_APP} synced as blue-green`, ['status', '--env', ENV, '--app', BLUE_GREEN_APP], 0, 300, askRefreshEvery20s);

// Converged: every verb that checks finds the state holds.
await step('status after convergence', ['status', '--env', ENV], 0);
await step('status as JSON', ['status', '--env', ENV, '--output', 'json'], 0);
await step('drift after convergence', ['drift', '--env', ENV], 0);
await step('verify the route and the endpoints', ['verify', '--env', ENV, '--app', APP, '--skip-http'], 0);
for (const component of ['infrastructure', 'database', 'broker']) await step(`check ${component}`, ['check', '--env', ENV, '--component', component], 0);
// 1.3 step 7: each release on the version local's values name; one release's pods and controller image.
await step('upgrade-status after convergence', ['upgrade-status', '--env', ENV], 0);
await step('check cert-manager', ['check', '--env', ENV, '--component', 'cert-manager'], 0);

// 1.3 step 7: an infrastructure release upgraded in local, synced, checked (test/e2e/ops-scenario-upgrade.mjs).
await upgradeInfrastructure(verbs, { env: ENV, source: SOURCE, webhook: () => gitWebhook(objects, k8s), merge, controllerNamespace: webappApplication.metadata.namespace });
await step('usage error', ['status'], 2);

// 1.3 step 6, the topics as a broker sees them on 9092: a user whose credential in Kafka no
// longer matches its password Secret (changed in Kafka behind the User Operator's back; the
// stand-in broker's state, e2e/live-containers.ts) is refused by Kafka, and the check names it.
const KAFKA_STATE = path.join(CONTAINERS, 'kafka', 'kafka.json');
const setKafkaPassword = async (user, password) => {
  // The harness rewrites the state every second, keeping the credentials it finds: write until it holds.
  for (let attempt = 0; attempt < 5; attempt++) {
    const state = JSON.parse(fs.readFileSync(KAFKA_STATE, 'utf8'));
    state.users[user].password = password;
    fs.writeFileSync(KAFKA_STATE, `${JSON.stringify(state, null, 2)}\n`);
    await sleep(2_500);
    if (JSON.parse(fs.readFileSync(KAFKA_STATE, 'utf8')).users[user].password === password) return;
  }
  throw new Error(`the stand-in broker's credential of ${user} did not hold`);
};
const brokerUser = BLUE_GREEN_APP;
const brokerPassword = JSON.parse(fs.readFileSync(KAFKA_STATE, 'utf8')).users[brokerUser].password;
await setKafkaPassword(brokerUser, `${brokerPassword}-rotated-in-kafka`);
await step('check broker with a credential that no longer matches the Secret', ['check', '--env', ENV, '--component', 'broker'], 1);
await setKafkaPassword(brokerUser, brokerPassword);
await step('check broker after the credential is back', ['check', '--env', ENV, '--component', 'broker'], 0);
// 7 the consumer lag, and 4.2 health-only verification with the database check (test/e2e/ops-scenario-upgrade.mjs).
await lagAndHealthOnly(verbs, { env: ENV, app: APP, core, objects });

// The operator's roles are all the verbs need, and no more: a Secret stays out of reach.
const operator = new k8s.KubeConfig();
operator.loadFromDefault();
const secretRead = await operator
  .makeApiClient(k8s.CoreV1Api)
  .listNamespacedSecret({ namespace: APP })
  .then(() => 200, (error) => error.code);
steps.push({ name: 'the operator cannot read Secrets', args: [], expected: 403, exitCode: secretRead, output: `list Secrets in ${APP}: HTTP ${secretRead}`, stdout: '' });
if (secretRead !== 403) failed++;
// In the broker's namespace, only the users' password Secrets, by name (the broker chart's Role).
const operatorCore = operator.makeApiClient(k8s.CoreV1Api);
const answer = (call) => call.then(() => 200, (error) => error.code);
const brokerSecretReads = {
  'get webapp-broker-user': await answer(operatorCore.readNamespacedSecret({ name: `${APP}-broker-user`, namespace: 'kafka' })),
  'list in kafka': await answer(operatorCore.listNamespacedSecret({ namespace: 'kafka' })),
  'get database-admin': await answer(operatorCore.readNamespacedSecret({ name: 'database-admin', namespace: 'database' })),
};
const onlyPasswords = brokerSecretReads['get webapp-broker-user'] === 200 && brokerSecretReads['list in kafka'] === 403 && brokerSecretReads['get database-admin'] === 403;
steps.push({ name: "the operator reads only the broker users' password Secrets", args: [], expected: 0, exitCode: onlyPasswords ? 0 : 1, output: JSON.stringify(brokerSecretReads), stdout: '' });
if (!onlyPasswords) failed++;
// Exec only where the verbs exec: refused in Argo CD's namespace (the repository server's sops
// container holds the age key), allowed in an application's. An exec POST without the upgrade is
// authorized first (403 when the role lacks pods/exec there) and only then refused for the
// missing upgrade (400), so the status says what RBAC decided.
const execStatus = async (namespace, pod, container) => {
  const server = operator.getCurrentCluster().server;
  const url = new URL(`${server}/api/v1/namespaces/${namespace}/pods/${pod}/exec?container=${container}&command=true&stdout=true`);
  const options = { method: 'POST', headers: {} };
  await operator.applyToHTTPSOptions(options);
  return new Promise((resolve) => {
    const request = https.request(url, options, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on('error', (error) => resolve(String(error)));
    request.end();
  });
};
const argoPods = (await core.listNamespacedPod({ namespace: 'argocd' })).items.map((pod) => pod.metadata.name);
const repoServer = argoPods.find((name) => name.includes('repo-server')) ?? 'argocd-repo-server';
const appPod = (await core.listNamespacedPod({ namespace: APP })).items.map((pod) => pod.metadata.name).sort()[0];
const execs = { [`exec into argocd/${repoServer} (sops)`]: await execStatus('argocd', repoServer, 'sops'), [`exec into ${APP}/${appPod}`]: await execStatus(APP, appPod, APP) };
const execRefused = execs[`exec into argocd/${repoServer} (sops)`] === 403 && execs[`exec into ${APP}/${appPod}`] !== 403;
steps.push({ name: 'the operator cannot exec into the repository server', args: [], expected: 0, exitCode: execRefused ? 0 : 1, output: JSON.stringify(execs), stdout: '' });
if (!execRefused) failed++;
await step('sync of an infrastructure Application', ['sync', '--env', ENV, '--application', 'envoy-gateway', '--by', 'e2e-person'], 0);
await step('production is synced only when confirmed', ['sync', '--env', 'production', '--app', APP, '--no-verify'], 1);

// Inside the containers: each pod's version file against the values file.
await step('version of every pod', ['version', '--env', ENV], 0);
const greenPods = () => fs.readdirSync(path.join(CONTAINERS, BLUE_GREEN_APP)).filter((pod) => pod.startsWith(`${BLUE_GREEN_APP}-green-`));
const [tampered] = greenPods();
const versionFile = path.join(CONTAINERS, BLUE_GREEN_APP, tampered, 'version');
const shipped = fs.readFileSync(versionFile, 'utf8');
fs.writeFileSync(versionFile, 'v0.0.1\n'); // an image whose tag lies about what it runs
await step('version catches a pod that runs another version', ['version', '--env', ENV, '--app', BLUE_GREEN_APP], 1);
fs.writeFileSync(versionFile, shipped);

// The blue-green gates: green (beside blue, active) ready, healthy through a port-forward
// (from a free local port: the e2e's own processes may hold the contract's 8080);
// a green whose /health fails stops the release; the Service's endpoints are blue's.
await step('blue-green: the new unit ready', ['bluegreen', '--env', ENV, '--app', BLUE_GREEN_APP, '--step', 'ready'], 0);
await step('blue-green: the new unit healthy', ['bluegreen', '--env', ENV, '--app', BLUE_GREEN_APP, '--step', 'health', '--local-port', '0'], 0);
for (const pod of greenPods()) fs.writeFileSync(path.join(CONTAINERS, BLUE_GREEN_APP, pod, 'fault'), 'health-503');
await sleep(3_000); // the harness applies a fault within a second
await step('blue-green: a new unit whose /health fails', ['bluegreen', '--env', ENV, '--app', BLUE_GREEN_APP, '--step', 'health', '--local-port', '0'], 1);
for (const pod of greenPods()) fs.rmSync(path.join(CONTAINERS, BLUE_GREEN_APP, pod, 'fault'));
await step('blue-green: the endpoints are the active unit\'s', ['bluegreen', '--env', ENV, '--app', BLUE_GREEN_APP, '--step', 'endpoints'], 0);
await step('blue-green gates refuse a rolling application', ['bluegreen', '--env', ENV, '--app', APP, '--step', 'ready'], 1);

// Paused: a change behind Argo CD's back stays (no self-heal), drift shows it, sync undoes it.
await step('pause', ['pause', '--env', ENV, '--reason', 'e2e: scaling by hand', '--by', 'e2e-person'], 0);
const replicas = await scaleByHand();
await sleep(15_000); // Argo CD's self-heal would have set it back by now (5 s after the change).
await step('drift shows the change made by hand', ['drift', '--env', ENV], 1);
await step('status shows the pause and the drift', ['status', '--env', ENV, '--output', 'json'], 1);
await step('sync undoes the change', ['sync', '--env', ENV, '--app', APP, '--skip-http', '--by', 'e2e-person'], 0);
await step('drift after the sync', ['drift', '--env', ENV], 0);
// argocd app sync --prune --force: Argo CD runs the operation with both (the sync's hook strategy forced).
await step('sync with --prune and --force', ['sync', '--env', ENV, '--app', APP, '--skip-http', '--prune', '--force', '--by', 'e2e-person'], 0);
const forcedSync = await lastSyncOf();
observed('the pruning, forced sync as Argo CD ran it', forcedSync.prune === true && forcedSync.syncStrategy?.hook?.force === true, JSON.stringify(forcedSync));

// Resumed: self-heal is back and sets a change made by hand back to git by itself.
await scaleByHand();
await sleep(15_000);
await step('still drifted while paused', ['drift', '--env', ENV, '--app', APP], 1);
await step('resume', ['resume', '--env', ENV], 0);
await eventually('self-heal after resume', ['drift', '--env', ENV, '--app', APP], 0, 90);

// A rollout that cannot complete: the nodes cordoned and the pods gone, a sync fails at its
// bound and says why (the pods are not scheduled).
await step('pause before the rollout case', ['pause', '--env', ENV, '--app', APP, '--reason', 'e2e: nodes cordoned'], 0);
const nodes = (await core.listNode()).items.map((node) => node.metadata.name);
for (const name of nodes) await merge({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { unschedulable: true } });
const pods = (await core.listNamespacedPod({ namespace: APP, labelSelector: `app=${APP}` })).items;
for (const pod of pods) await core.deleteNamespacedPod({ name: pod.metadata.name, namespace: APP });
await step('sync fails at the bound with the reason', ['sync', '--env', ENV, '--app', APP, '--skip-http', '--sync-timeout', '30', '--rollout-timeout', '30'], 1);
for (const name of nodes) await merge({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { unschedulable: null } });
await step('resume after the rollout case', ['resume', '--env', ENV, '--app', APP], 0);
await eventually('converged again', ['status', '--env', ENV], 0, 240);

// A pause stops the automated sync that runs, which turning automated sync off alone does not
// (argo-cd v3.6.1 util/argo/argo.go SetAppOperation, controller/appcontroller.go
// processRequestedAppOperation: a failed sync is retried whatever the policy). A replica count
// changed by hand, and an admission policy that refuses git's count back: self-heal's sync
// fails and awaits its retry (Running) until the pause terminates it.
const holdPolicy = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'e2e-hold-replicas' },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['deployments'], resourceNames: [APP] }] },
    validations: [{ expression: `object.spec.replicas != ${replicas}`, message: 'e2e: the replica count set by hand stays' }],
  },
};
const holdBinding = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: 'e2e-hold-replicas' },
  spec: { policyName: holdPolicy.metadata.name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': APP } } } },
};
await objects.create(holdPolicy);
await objects.create(holdBinding);
await sleep(3_000); // the API server loads a new policy within a second or two
await scaleByHand();
const automatedSyncRetries = async () => {
  const state = (await objects.read(webappApplication)).status?.operationState;
  return state?.phase === 'Running' && state.operation?.initiatedBy?.automated === true && Number(state.retryCount ?? 0) > 0 ? undefined : JSON.stringify({ phase: state?.phase, message: state?.message });
};
let notRetrying = await automatedSyncRetries();
for (const deadline = Date.now() + 90_000; notRetrying !== undefined && Date.now() < deadline; notRetrying = await automatedSyncRetries()) await sleep(1_000);
observed("self-heal's sync is refused and awaits its retry", notRetrying === undefined, notRetrying ?? 'Running, automated, retrying');
await step('pause terminates the automated sync that runs', ['pause', '--env', ENV, '--app', APP, '--reason', 'e2e: a sync in the way', '--by', 'e2e-person'], 0);
const afterPause = await objects.read(webappApplication);
const terminated = afterPause.status?.operationState;
observed(
  'the automated sync ended terminated, not retried',
  // gitops-engine pkg/sync/sync_context.go Terminate: "Operation terminated" (Argo CD appends its retry note).
  afterPause.operation === undefined && terminated?.phase === 'Failed' && String(terminated.message).startsWith('Operation terminated') && terminated.operation?.initiatedBy?.automated === true,
  JSON.stringify({ operation: afterPause.operation, phase: terminated?.phase, message: terminated?.message }),
);
await objects.delete(holdBinding);
await objects.delete(holdPolicy);
await step('resume after the terminated sync', ['resume', '--env', ENV, '--app', APP], 0);
// Argo CD does not sync again by itself a revision whose automated sync failed: the sync resume names.
await step('sync after the terminated sync', ['sync', '--env', ENV, '--application', APP, '--by', 'e2e-person'], 0);
await eventually('converged after the terminated sync', ['status', '--env', ENV], 0, 240);

// 1.5 on the live cluster. Orchestrator: a template changed by hand (a new rollout revision)
// goes back to the revision before it; controller: the Application back to its previous
// history entry. Both pause automated sync first and leave it paused.
await step('pause before the hand-made revision', ['pause', '--env', ENV, '--app', APP, '--reason', 'e2e: a hotfix by hand'], 0);
await merge({ ...deployment, spec: { template: { metadata: { annotations: { 'e2e.platform-gitops/hotfix': 'by-hand' } } } } });
await eventually('the hand-made revision rolled out', ['status', '--env', ENV, '--app', APP], 0, 120);
await step('rollback at the orchestrator level', ['rollback', '--env', ENV, '--app', APP, '--level', 'orchestrator', '--by', 'e2e-person'], 0);
const template = (await objects.read(deployment)).spec.template.metadata.annotations ?? {};
steps.push({ name: 'the hand-made change is gone', args: [], expected: 0, exitCode: 'e2e.platform-gitops/hotfix' in template ? 1 : 0, output: JSON.stringify(template), stdout: '' });
if ('e2e.platform-gitops/hotfix' in template) failed++;
// --to-revision: a second change by hand, then back to the revision it replaced, named.
const beforeSecond = (await objects.read(deployment)).metadata.annotations[REVISION_ANNOTATION];
await merge({ ...deployment, spec: { template: { metadata: { annotations: { 'e2e.platform-gitops/hotfix': 'second' } } } } });
await eventually('the second hand-made revision rolled out', ['status', '--env', ENV, '--app', APP], 0, 120);
await step('rollback at the orchestrator level to a named revision', ['rollback', '--env', ENV, '--app', APP, '--level', 'orchestrator', '--to-revision', beforeSecond, '--by', 'e2e-person'], 0);
const named = (await objects.read(deployment)).spec.template.metadata.annotations ?? {};
observed('the named revision\'s template again, the second change gone', !('e2e.platform-gitops/hotfix' in named), JSON.stringify({ revision: beforeSecond, annotations: named }));
await step('rollback at the controller level', ['rollback', '--env', ENV, '--app', APP, '--level', 'controller', '--by', 'e2e-person'], 0);
// --to an entry named, pruning and forced: Argo CD runs the rollback's operation with both (its apply strategy forced).
const entries = ((await objects.read(webappApplication)).status?.history ?? []).map((entry) => entry.id);
await step('rollback at the controller level to a named entry, pruning and forced', ['rollback', '--env', ENV, '--app', APP, '--level', 'controller', '--to', String(entries.at(-2)), '--prune', '--force', '--by', 'e2e-person'], 0);
const forcedRollback = await lastSyncOf();
observed('the pruning, forced rollback as Argo CD ran it', forcedRollback.prune === true && forcedRollback.syncStrategy?.apply?.force === true, JSON.stringify({ entries, sync: forcedRollback }));
await step('still paused after the rollbacks', ['status', '--env', ENV, '--app', APP, '--output', 'json'], 0);
await step('resume after the rollbacks', ['resume', '--env', ENV, '--app', APP], 0);

// 1.5 database level and 7.2 data recovery, inside SQL Server's container: kwok runs the
// verbs' sqlcmd as e2e/stand-in-sqlcmd.mjs over the server's state file, and the harness plays
// the migrations image of the database rollback Job (e2e/live-containers.ts).
const SQL_STATE = path.join(CONTAINERS, 'database', 'mssql-0', 'sql-server.json');
const sqlState = () => JSON.parse(fs.readFileSync(SQL_STATE, 'utf8'));
const writeSqlState = (state) => fs.writeFileSync(SQL_STATE, `${JSON.stringify(state, null, 2)}\n`);
const applied = sqlState().databases[APP].migrations;
const earlier = applied.at(-2);
// A migration applied by hand, which the image does not carry: its Job fails, and says why.
const byHand = sqlState();
byHand.databases[APP].migrations = [...applied, '20261015000000_HotfixByHand'].sort();
writeSqlState(byHand);
await step('database rollback to a migration the image does not carry', ['rollback', '--env', ENV, '--app', APP, '--level', 'database', '--to', '20261015000000_HotfixByHand', '--by', 'e2e-person'], 1);
const repaired = sqlState();
repaired.databases[APP].migrations = applied;
writeSqlState(repaired);
await step('rollback at the database level', ['rollback', '--env', ENV, '--app', APP, '--level', 'database', '--to', earlier, '--by', 'e2e-person'], 0);
const afterDatabase = sqlState().databases[APP].migrations;
observed('the migration history ends at the named migration', afterDatabase.at(-1) === earlier && afterDatabase.length === applied.length - 1, afterDatabase.join(', '));
await step('database rollback to a migration never applied', ['rollback', '--env', ENV, '--app', APP, '--level', 'database', '--to', '20990101000000_NeverApplied'], 1);
await step('resume after the database rollback', ['resume', '--env', ENV, '--app', APP], 0);
const backupsOf = (database) => sqlState().backups.filter((backup) => backup.database === database).sort((a, b) => (a.finishedAt < b.finishedAt ? 1 : -1));
const [newestOwn] = backupsOf(APP);
const [othersNewest] = backupsOf(BLUE_GREEN_APP);
const billingBefore = sqlState().databases[BLUE_GREEN_APP].migrations;
await step("restore refuses another database's backup", ['emergency', 'restore', '--env', ENV, '--app', APP, '--reason', 'e2e: wrong file', '--backup', path.basename(othersNewest.file)], 1);
await step('emergency restore', ['emergency', 'restore', '--env', ENV, '--app', APP, '--reason', 'e2e: data recovery drill', '--by', 'e2e-person'], 0);
const restored = sqlState();
observed(
  "the application's own newest backup restored, then migrated to the running version; the other database untouched",
  JSON.stringify(restored.restores) === JSON.stringify([{ database: APP, file: newestOwn.file }]) &&
    newestOwn.migrations.length < restored.catalog[APP].length &&
    JSON.stringify(restored.databases[APP].migrations) === JSON.stringify(restored.catalog[APP].map((migration) => migration.id)) &&
    JSON.stringify(restored.databases[BLUE_GREEN_APP].migrations) === JSON.stringify(billingBefore),
  JSON.stringify({ restores: restored.restores, newestOwn: newestOwn.file, othersNewest: othersNewest.file, migrations: restored.databases[APP].migrations }),
);
await eventually('converged after the restore', ['status', '--env', ENV], 0, 240);

// 7 Pod in CrashLoopBackOff: a container of webapp crash-loops (killed for its memory, its
// previous run's log saying so); the verb shows it, then the contract's example fix raises
// the limits and the liveness delay with sync paused, and the new pods run; resume puts git's back.
await step('no crash loop after convergence', ['emergency', 'crashloop', '--env', ENV, '--app', APP], 0);
const [crashing] = (await core.listNamespacedPod({ namespace: APP, labelSelector: `app=${APP}` })).items.filter((pod) => pod.status.phase === 'Running' && !pod.metadata.deletionTimestamp);
fs.writeFileSync(path.join(CONTAINERS, APP, crashing.metadata.name, 'crash'), 'OOMKilled\n');
await eventually('the crash loop and its last log', ['emergency', 'crashloop', '--env', ENV, '--app', APP], 1, 30);
await step('the example fix', ['emergency', 'crashloop', '--env', ENV, '--app', APP, '--fix', '--reason', 'e2e: OOMKilled', '--by', 'e2e-person'], 0);
const fixed = (await objects.read(deployment)).spec.template.spec.containers.find((container) => container.name === APP);
observed('the example fix is live', fixed.resources.limits.memory === '1Gi' && fixed.resources.limits.cpu === '500m' && fixed.livenessProbe.initialDelaySeconds === 60, JSON.stringify({ limits: fixed.resources.limits, liveness: fixed.livenessProbe.initialDelaySeconds }));
await step('resume after the fix', ['resume', '--env', ENV, '--app', APP], 0);
await eventually('converged after the crash loop', ['status', '--env', ENV], 0, 240);

// 7.2 Outage: the serving Deployment scaled to the contract's 5 with automated sync paused
// (self-heal leaves it), the ingress controller checked; resume puts git's replicas back.
await step('emergency outage', ['emergency', 'outage', '--env', ENV, '--app', APP, '--reason', 'e2e: outage drill', '--by', 'e2e-person'], 0);
await sleep(15_000); // self-heal would have set the replicas back by now, were it on
const scaledOut = (await objects.read(deployment)).spec.replicas;
observed('the outage scale-out stays while sync is paused', scaledOut === 5, `spec.replicas ${scaledOut}`);
await step('resume after the outage', ['resume', '--env', ENV, '--app', APP], 0);
await eventually('self-heal puts git\'s replicas back', ['drift', '--env', ENV, '--app', APP], 0, 90);
const scaledBack = (await objects.read(deployment)).spec.replicas;
observed('git\'s replicas again', scaledBack === replicas, `spec.replicas ${scaledBack}, git's ${replicas}`);
await eventually('converged after the outage', ['status', '--env', ENV], 0, 240);

// 7.2 Maintenance: a node of the application's is drained (its pods evicted and recreated
// elsewhere or left Pending), uncordoned, and every pod runs again. A pod no controller would
// recreate stops the drain before anything is changed.
const nodeOf = async () => (await core.listNamespacedPod({ namespace: APP, labelSelector: `app=${APP}` })).items.find((pod) => pod.spec.nodeName)?.spec.nodeName;
const node = await nodeOf();
const podsOn = async (name) =>
  (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${name}` })).items.filter(
    (pod) => !pod.metadata.deletionTimestamp && !(pod.metadata.ownerReferences ?? []).some((owner) => owner.kind === 'DaemonSet'),
  );
const loose = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'e2e-unmanaged', namespace: APP }, spec: { nodeName: node, securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'c', image: 'busybox:1.36', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] } };
await objects.create(loose);
await step('drain refuses a node with a pod no controller recreates', ['emergency', 'drain', node, '--env', ENV], 1);
const untouched = (await core.readNode({ name: node })).spec.unschedulable !== true;
observed('the refused drain left the node schedulable', untouched, `Node ${node} unschedulable: ${!untouched}`);
await core.deleteNamespacedPod({ name: loose.metadata.name, namespace: APP, gracePeriodSeconds: 0 });
await eventually('the unmanaged pod gone', ['status', '--env', ENV, '--app', APP], 0, 60);
await step('drain a node', ['emergency', 'drain', node, '--env', ENV], 0);
const left = await podsOn(node);
observed('no pod left on the drained node', left.length === 0, left.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`).join(', ') || `none on ${node}`);
observed('the drained node is cordoned', (await core.readNode({ name: node })).spec.unschedulable === true, `Node ${node}`);
await step('uncordon the node: every pod runs again', ['emergency', 'uncordon', node, '--env', ENV], 0);
await eventually('converged after the maintenance', ['status', '--env', ENV], 0, 240);

// 1.5 package level: an infrastructure release back to a chart version of its history. The
// harness serves one release's stand-in chart also at a next version, with a ConfigMap only
// that version has (e2e/stand-in-charts.ts, given as E2E_STAND_IN_UPGRADE). A person upgrades
// it by hand: every Application paused (the root and `infrastructure` would put git's version
// back), the release's Application moved to the next version and synced, so its history holds
// both. The rollback (forced) goes back to the pinned version and leaves automated sync paused; without
// --prune Argo CD leaves the next version's ConfigMap (OutOfSync, requiresPruning), which
// automated sync (prune: true) deletes once resumed, the release on git's pin.
const upgrade = JSON.parse(process.env.E2E_STAND_IN_UPGRADE);
const releaseApplication = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: upgrade.release, namespace: upgrade.applicationNamespace } };
const chartVersionOf = (entry) => entry?.source?.targetRevision ?? entry?.revision;
/** The release's Application as the checks read it, and whether the next version's ConfigMap exists. */
const releaseState = async () => {
  const app = await objects.read(releaseApplication);
  const namespace = app.spec.destination.namespace;
  const configMap = await core.readNamespacedConfigMap({ name: upgrade.configMap, namespace }).then(
    () => true,
    (error) => (error.code === 404 ? false : Promise.reject(error)),
  );
  return {
    targetRevision: app.spec.source.targetRevision,
    synced: app.status.sync.revision,
    sync: app.status.sync.status,
    newest: chartVersionOf(app.status.history?.at(-1)),
    history: (app.status.history ?? []).map(chartVersionOf),
    configMap,
    configMapToPrune: (app.status.resources ?? []).some((r) => r.kind === 'ConfigMap' && r.name === upgrade.configMap && r.requiresPruning === true),
    automatedSync: app.spec.syncPolicy?.automated?.enabled !== false,
  };
};
await step('pause before the upgrade by hand', ['pause', '--env', ENV, '--reason', `e2e: upgrade of ${upgrade.release} by hand`, '--by', 'e2e-person'], 0);
await merge({ ...releaseApplication, spec: { source: { targetRevision: upgrade.next } } });
await step('sync of the upgrade by hand', ['sync', '--env', ENV, '--application', upgrade.release, '--by', 'e2e-person'], 0);
const upgraded = await releaseState();
observed('the release on the next version, its ConfigMap installed', upgraded.synced === upgrade.next && upgraded.newest === upgrade.next && upgraded.configMap, JSON.stringify(upgraded));
await step('package rollback to a version neither in the history nor in the repository', ['rollback', '--env', ENV, '--level', 'package', '--release', upgrade.release, '--to', '99.99.99', '--by', 'e2e-person'], 1);
// Forced, as the contract's forced upgrade: Argo CD runs the sync with its hook strategy forced.
await step('rollback at the package level', ['rollback', '--env', ENV, '--level', 'package', '--release', upgrade.release, '--force', '--by', 'e2e-person'], 0);
const rolledBack = await releaseState();
const packageSync = (await objects.read(releaseApplication)).status?.operationState?.operation?.sync ?? {};
observed('the package rollback\'s sync forced, as Argo CD ran it', packageSync.syncStrategy?.hook?.force === true && packageSync.prune !== true, JSON.stringify(packageSync));
observed(
  'the release back on the pinned version: its source, synced revision and newest history entry',
  rolledBack.targetRevision === upgrade.pinned && rolledBack.synced === upgrade.pinned && rolledBack.newest === upgrade.pinned && !rolledBack.automatedSync,
  JSON.stringify(rolledBack),
);
observed('without --prune the next version\'s ConfigMap stays, marked for pruning', rolledBack.configMap && rolledBack.configMapToPrune && rolledBack.sync === 'OutOfSync', JSON.stringify(rolledBack));
await step('still paused after the package rollback', ['status', '--env', ENV, '--output', 'json'], 1);
await step('resume after the package rollback', ['resume', '--env', ENV], 0);
await eventually('converged after the package rollback', ['status', '--env', ENV], 0, 240);
const resumed = await releaseState();
observed('resumed: the release on git\'s pin, the ConfigMap pruned by automated sync', resumed.targetRevision === upgrade.pinned && resumed.synced === upgrade.pinned && !resumed.configMap && resumed.automatedSync, JSON.stringify(resumed));

fs.writeFileSync(process.env.OPS_SCENARIO_RESULTS ?? 'ops-scenario.json', `${JSON.stringify({ replicas, steps }, null, 2)}\n`);
console.log(failed === 0 ? `ops scenario: ${steps.length} steps as expected` : `ops scenario: ${failed} of ${steps.length} steps gave another exit code`);
process.exit(failed === 0 ? 0 : 1);
