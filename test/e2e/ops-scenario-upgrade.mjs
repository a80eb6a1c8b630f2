// Steps of test/e2e/ops-scenario.mjs on the converged `local` cluster, kept beside it: the
// infrastructure upgrade of contract 1.3 step 7, the consumer lag of 7 (broker problems) and the
// health-only verification of 4.2 with its database check. Each takes the scenario's `verbs`:
// `step(name, args, expected, env)` runs `npm run ops` and records it, `eventually(name, args,
// expected, seconds, before)` runs it until it gives `expected`, `record(entry)` records a step
// run otherwise.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { git, pushServed } from './scenario-steps.mjs';

/**
 * An infrastructure upgrade as an operator makes one: the test put local's values at an older
 * version of a release the table knows (E2E_INFRASTRUCTURE_UPGRADE: release, from, to), which
 * converged; `npm run upgrade` moves the environment to the newer one (values and dist/), in the
 * operator's checkout (the working directory) and in the served one (`source`), each committed;
 * upgrade-status shows the cluster behind git; the served commit is pushed and Argo CD syncs it
 * (the root, `infrastructure`, then the release, automated); upgrade-status shows every release
 * on git's version, and the release's check finds its pods ready and its controller on the
 * image the new version ships (what the chart at that version renders).
 * `webhook` asks the root to refresh as a git webhook does; `merge` merge-patches an object as
 * the administrator; `controllerNamespace` is Argo CD's.
 */
export async function upgradeInfrastructure(verbs, { env, source, webhook, merge, controllerNamespace }) {
  const { release, to } = JSON.parse(process.env.E2E_INFRASTRUCTURE_UPGRADE);
  const upgradeIn = (root) => {
    const args = ['upgrade', '--env', env, '--release', release, '--version', to];
    const started = Date.now();
    const result = spawnSync(process.execPath, ['scripts/run.cjs', ...args], { cwd: root, encoding: 'utf8' });
    const output = `${result.stdout}${result.stderr}`;
    process.stdout.write(output.replace(/^(?=.)/gm, '  | '));
    verbs.record({ name: root === process.cwd() ? 'npm run upgrade' : 'npm run upgrade in the served checkout', args, expected: 0, exitCode: result.status, output, stdout: result.stdout, took: Math.round((Date.now() - started) / 100) / 10 });
    if (result.status !== 0) return;
    git(root, 'add', '-A');
    git(root, 'commit', '--quiet', '-m', `${env}: ${release} ${to}`);
  };
  upgradeIn(process.cwd());
  if (path.resolve(source) !== path.resolve(process.cwd())) upgradeIn(source);
  await verbs.step('upgrade-status before the upgrade is synced', ['upgrade-status', '--env', env], 1);
  pushServed(source);
  // A git webhook refreshes every Application whose files the push changed (argo-cd v3.6.1
  // util/webhook/webhook.go, HandleEvent): here the root and `infrastructure`, whose
  // dist/<env>/infrastructure.yaml holds the release's Application. Asked again every 20 s (a
  // refresh that began before the push may take the first request).
  let askedAt = 0;
  const refreshTheChanged = async () => {
    if (Date.now() - askedAt < 20_000) return;
    askedAt = Date.now();
    await webhook();
    await merge({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'infrastructure', namespace: controllerNamespace, annotations: { 'argocd.argoproj.io/refresh': 'normal' } } });
  };
  await verbs.eventually('upgrade-status once Argo CD synced the upgrade', ['upgrade-status', '--env', env], 0, 300, refreshTheChanged);
  // The release's Deployment rolls out after the sync: its pods of the older version may still be there a moment.
  await verbs.eventually('check the upgraded release', ['check', '--env', env, '--component', release], 0, 120);
}

/**
 * 7 broker problems, the consumer lag: read through the broker's Kafka protocol from the
 * operator's host, at the bootstrap Service the environment names. The e2e's brokers speak no
 * Kafka protocol (their tools are stand-ins, e2e/live-data-services.ts) and the Service's name
 * does not resolve outside the cluster: the verb ends within its bound and names the servers
 * it could not read.
 *
 * 4.2 without smoke credentials: health only, the authenticated status call said skipped (no
 * exit 2), and the database connectivity check of `npm run smoke` run with the application's
 * login (the connection string of its database Secret, read as the administrator). The health
 * call goes to a pod's own server (--base-url: the route's host needs Envoy's data plane, which
 * the e2e does not run, so the TLS handshake fails there); SQL Server is a stand-in that speaks
 * no TDS and its Service's name does not resolve outside the cluster, so the database check
 * fails within its bound, naming the server. `core` and `objects` are the administrator's
 * clients (@kubernetes/client-node's CoreV1Api and KubernetesObjectApi).
 */
export async function lagAndHealthOnly(verbs, { env, app, core, objects }) {
  await verbs.step('consumer lag with the broker out of reach', ['check', '--env', env, '--component', 'broker', '--lag'], 1);

  const [pod] = (await core.listNamespacedPod({ namespace: app, labelSelector: `app=${app}` })).items.filter((candidate) => candidate.status.phase === 'Running' && !candidate.metadata.deletionTimestamp);
  // The pod's kwok PortForward sends its 8080 to the container's server on loopback (e2e/live-containers.ts).
  const forward = await objects.read({ apiVersion: 'kwok.x-k8s.io/v1alpha1', kind: 'PortForward', metadata: { name: pod.metadata.name, namespace: app } });
  const podServer = `http://127.0.0.1:${forward.spec.forwards[0].target.port}`;
  const connectionString = Buffer.from((await core.readNamespacedSecret({ name: `${app}-database`, namespace: app })).data['connection-string'], 'base64').toString('utf8');
  const setting = (key) => new RegExp(`(?:^|;)\\s*${key}\\s*=\\s*([^;]*)`, 'i').exec(connectionString)?.[1];
  // The platform writes it Server=tcp:<host>,<port>;Database=...;User ID=...;Password=... (src/secrets/catalog.ts).
  const [host, port] = String(setting('Server')).replace(/^tcp:/, '').split(',');
  const database = { DATABASE_HOST: host, DATABASE_PORT: port, DATABASE_USER: setting('User ID'), DATABASE_PASSWORD: setting('Password'), DATABASE_NAME: setting('Database') };
  await verbs.step('verify health only, with the database check', ['verify', '--env', env, '--app', app, '--base-url', podServer], 1, { SMOKE_USERNAME: '', SMOKE_PASSWORD: '', ...database });
}
