// The release artifact on the converged `local` cluster of a copy that follows its published
// charts (issue 26), run by test/e2e/published-charts.test.ts through `npm run e2e -- --exec`:
// Argo CD installed each application's chart from the real OCI registry at the version of
// its record, src/environments/local/chart-versions.json; a second release of one application (npm run release, commit,
// npm run publish, the commit served) moves its Application to the next chart version; and
// `npm run ops -- rollback --level package --app` takes it back to the previous one. Writes
// each step (name, expected and actual exit code, output) and the versions to
// $REGISTRY_SCENARIO_RESULTS; exits 1 when a step did not end as expected.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { git, gitWebhook, linkNodeModules, nextPatch, pushServed, scenarioSteps } from './scenario-steps.mjs';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const k8s = require('@kubernetes/client-node');

const config = new k8s.KubeConfig();
config.loadFromFile(process.env.E2E_ADMIN_KUBECONFIG);
const objects = k8s.KubernetesObjectApi.makeApiClient(config);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const ENV = 'local';
// The application released and rolled back here: billing, a rolling application (webapp is the
// copy's canary, which canary-scenario.mjs releases before this runs).
const APP = 'billing';
const ARGOCD = 'argocd';
const SOURCE = process.env.E2E_SOURCE;
const { record, project, finish } = scenarioSteps();

const versions = () => JSON.parse(fs.readFileSync(path.join(SOURCE, 'src', 'environments', ENV, 'chart-versions.json'), 'utf8'));
const application = (name) => objects.read({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace: ARGOCD } });
const sourcesOf = (app) => app.spec.sources ?? [app.spec.source];
const chartIndex = (app) => sourcesOf(app).findIndex((source) => source.chart !== undefined);
/** The chart version the Application's last comparison was at (its Helm source's revision). */
const syncedVersion = (app) => (app.spec.sources === undefined ? app.status?.sync?.revision : app.status?.sync?.revisions?.[chartIndex(app)]);
const describe = (app) =>
  `${app.metadata.name}: ${app.status?.sync?.status}/${app.status?.health?.status} at ${syncedVersion(app) ?? '-'} (spec ${sourcesOf(app)[chartIndex(app)]?.targetRevision ?? 'no chart'}; operation ${app.status?.operationState?.phase ?? '-'}; ${app.status?.history?.length ?? 0} history entries, the newest at ${deployedVersion(app) ?? '-'})`;

/** The chart version the Application's newest history entry deployed: written once its sync operation, PostSync hooks included, ended. */
const deployedVersion = (app) => {
  const newest = app.status?.history?.at(-1);
  return app.spec.sources === undefined ? newest?.revision : newest?.revisions?.[chartIndex(app)];
};

/**
 * Wait until `name`'s Application is Synced and Healthy at chart `version` and its sync
 * operation has ended there (the newest history entry), asking Argo CD to refresh the root meanwhile.
 */
async function until(name, version, seconds) {
  const deadline = Date.now() + seconds * 1000;
  for (let round = 0; ; round++) {
    const app = await application(name);
    const settled = app.status?.operationState?.phase === 'Succeeded' && deployedVersion(app) === version;
    if (app.status?.sync?.status === 'Synced' && app.status?.health?.status === 'Healthy' && syncedVersion(app) === version && settled) return { ok: true, state: describe(app) };
    if (Date.now() > deadline) return { ok: false, state: describe(app) };
    // What a git webhook does for a new commit: the root reads the repository again.
    if (round % 10 === 0) await gitWebhook(objects, k8s);
    await sleep(2_000);
  }
}

const image = async () => (await objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: APP, namespace: APP } })).spec.template.spec.containers[0].image;

// 1. Converged from the registry: each Application installs its published chart at the version of its record (chart-versions.json beside the values).
const before = versions();
const registryRepo = process.env.E2E_CHART_REGISTRY;
for (const [name, entry] of Object.entries(before)) {
  const app = await application(name);
  const chart = sourcesOf(app)[chartIndex(app)];
  const ok = chart !== undefined && chart.chart === name && chart.targetRevision === entry.version && !chart.repoURL.includes('://') && syncedVersion(app) === entry.version;
  record(`${name} installs its published chart ${entry.version}`, ok, `${describe(app)} from ${chart?.repoURL ?? 'git'}`);
}

// 2. A second release of APP: the values and dist/ (its chart version bumped) in one write, committed, published, served.
const from = before[APP];
const tag = nextPatch(from.appVersion);
linkNodeModules(SOURCE);
project('release', ['release', '--env', ENV, '--app', APP, '--tag', tag], SOURCE);
const after = versions();
record(`the release bumped ${APP}'s chart`, after[APP].version !== from.version && after[APP].appVersion === tag, `${from.version} (${from.appVersion}) -> ${after[APP].version} (${after[APP].appVersion})`);
git(SOURCE, 'commit', '--quiet', '-am', `${ENV}: ${APP} ${tag}`);
project('publish', ['publish', '--env', ENV, '--app', APP, '--registry', registryRepo, '--ca-file', process.env.E2E_CHART_REGISTRY_CA], SOURCE);
project('publish again (already published)', ['publish', '--env', ENV, '--registry', registryRepo, '--ca-file', process.env.E2E_CHART_REGISTRY_CA], SOURCE);
pushServed(SOURCE);
const moved = await until(APP, after[APP].version, 300);
record(`Argo CD moves ${APP} to ${after[APP].version}`, moved.ok, moved.state);
const released = await image();
record(`${APP} runs ${tag}`, released.endsWith(`:${tag}`), released);

// 3. The package level of 1.5: back to the previous chart version of the Application's history.
const rollback = spawnSync(process.execPath, ['scripts/run.cjs', 'ops', 'rollback', '--env', ENV, '--level', 'package', '--app', APP, '--by', 'e2e-person', '--reason', 'e2e: the release is bad'], { encoding: 'utf8', env: process.env });
record('rollback --level package --app', rollback.status === 0, `${rollback.stdout}${rollback.stderr}`.split('\n').slice(-30).join('\n'), 0, rollback.status);
const back = await until(APP, from.version, 120);
record(`${APP} back on ${from.version}`, back.ok, back.state);
const restored = await image();
record(`${APP} runs ${from.appVersion} again`, restored.endsWith(`:${from.appVersion}`), restored);

finish(process.env.REGISTRY_SCENARIO_RESULTS, { before, after });
