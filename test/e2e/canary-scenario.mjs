// A canary on the converged `local` cluster of a copy where `webapp` is a canary application
// (and which follows its published charts when the run serves a registry), run by
// test/e2e/published-charts.test.ts through `npm run e2e -- --env local --exec`, with
// Flagger's real controller (e2e/flagger.ts): what its initialization made (the primary
// Deployment, the Services, the HTTPRoute that Envoy Gateway accepted, the target scaled to
// zero); then a release of the next tag (npm run release, commit, the commit served, and the
// refresh a git webhook asks), which Flagger analyses and, with no metrics to read, rolls back.
// Writes each step (name, expected and actual exit code, output) and the objects it read to
// $CANARY_SCENARIO_RESULTS; exits 1 when a step did not end as expected. Run from the checkout
// (the e2e's working directory).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { git, gitWebhook, linkNodeModules, nextPatch, pushServed, scenarioSteps } from './scenario-steps.mjs';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const k8s = require('@kubernetes/client-node');

const config = new k8s.KubeConfig();
config.loadFromFile(process.env.E2E_ADMIN_KUBECONFIG);
const objects = k8s.KubernetesObjectApi.makeApiClient(config);
const core = config.makeApiClient(k8s.CoreV1Api);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const ENV = 'local';
const APP = 'webapp';
const SOURCE = process.env.E2E_SOURCE;
const { record, project, finish } = scenarioSteps();

const read = (apiVersion, kind, name) => objects.read({ apiVersion, kind, metadata: { name, namespace: APP } }).catch(() => undefined);
const canary = () => read('flagger.app/v1beta1', 'Canary', APP);
const imageOf = (deployment) => deployment?.spec?.template?.spec?.containers?.[0]?.image ?? '-';
const describe = (c) => `phase ${c?.status?.phase ?? '-'}, weight ${c?.status?.canaryWeight ?? '-'}, failed checks ${c?.status?.failedChecks ?? '-'}, iterations ${c?.status?.iterations ?? '-'}`;

/**
 * Wait until the Canary's phase is one of `phases`, or `seconds` pass; the phases seen on the
 * way. With `pushed`, after a push: what a git webhook does is repeated every 20 s meanwhile
 * (a refresh that began before the push may take the first request).
 */
async function untilPhase(phases, seconds, pushed = false) {
  const deadline = Date.now() + seconds * 1000;
  const seen = [];
  for (let round = 0; ; round++) {
    if (pushed && round % 10 === 0) await gitWebhook(objects, k8s);
    const c = await canary();
    const phase = c?.status?.phase ?? '';
    if (seen.at(-1) !== phase) {
      seen.push(phase);
      console.log(`  Canary ${APP}/${APP}: ${describe(c)}`);
    }
    if (phases.includes(phase) || Date.now() > deadline) return { ok: phases.includes(phase), canary: c, seen };
    await sleep(2_000);
  }
}

/** The Canary's events, oldest first, as `reason: message`. */
async function events() {
  const list = await core.listNamespacedEvent({ namespace: APP, fieldSelector: `involvedObject.kind=Canary,involvedObject.name=${APP}` });
  const at = (event) => String(event.lastTimestamp ?? event.eventTime ?? '');
  return list.items
    .sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : 0))
    .map((event) => `${event.type} ${event.reason}: ${event.message}`);
}

// 1. Flagger initialized the canary: the primary runs the committed tag, the target is scaled to
//    zero, the three Services and the HTTPRoute exist, and Envoy Gateway accepted the route.
const initialized = await untilPhase(['Initialized', 'Succeeded'], 60);
record('the Canary is initialized by Flagger', initialized.ok, describe(initialized.canary));
const target = await read('apps/v1', 'Deployment', APP);
const primary = await read('apps/v1', 'Deployment', `${APP}-primary`);
const committedImage = imageOf(target);
record(`Deployment ${APP}-primary runs the committed image`, primary !== undefined && imageOf(primary) === committedImage, `${APP}-primary: ${imageOf(primary)}; ${APP}: ${committedImage}`);
record(`Deployment ${APP} is scaled to zero between analyses`, target?.spec?.replicas === 0, `replicas ${target?.spec?.replicas}`);
const services = {};
for (const name of [APP, `${APP}-primary`, `${APP}-canary`]) {
  const service = await read('v1', 'Service', name);
  services[name] = service === undefined ? undefined : { selector: service.spec.selector, ports: service.spec.ports.map((p) => ({ port: p.port, targetPort: p.targetPort })) };
}
record('the apex, primary and canary Services', Object.values(services).every((s) => s !== undefined), JSON.stringify(services));
const route = await read('gateway.networking.k8s.io/v1', 'HTTPRoute', APP);
const backends = route?.spec?.rules?.[0]?.backendRefs?.map((ref) => ({ name: ref.name, port: ref.port, weight: ref.weight })) ?? [];
const parents = route?.status?.parents?.map((parent) => ({
  controller: parent.controllerName,
  gateway: `${parent.parentRef.namespace ?? APP}/${parent.parentRef.name}/${parent.parentRef.sectionName ?? ''}`,
  conditions: Object.fromEntries((parent.conditions ?? []).map((c) => [c.type, c.status])),
})) ?? [];
record(`HTTPRoute ${APP} made by Flagger and accepted by Envoy Gateway`, backends.length === 2 && parents.length > 0 && parents.every((p) => p.conditions.Accepted === 'True' && p.conditions.ResolvedRefs === 'True'), JSON.stringify({ backends, parents }));

// 2. The next release: values and dist/ in one write, committed (and published) and served; Flagger sees the
//    target's new revision and starts an analysis.
const tag = committedImage.split(':').at(-1);
const next = nextPatch(tag);
linkNodeModules(SOURCE);
project('release', ['release', '--env', ENV, '--app', APP, '--tag', next], SOURCE);
git(SOURCE, 'commit', '--quiet', '-am', `${ENV}: ${APP} ${next}`);
// An environment that follows its published charts (the run's registry) gets the release's chart as CI publishes it.
const registry = process.env.E2E_CHART_REGISTRY;
if (registry !== undefined) project('publish', ['publish', '--env', ENV, '--app', APP, '--registry', registry, '--ca-file', process.env.E2E_CHART_REGISTRY_CA], SOURCE);
pushServed(SOURCE);
const progressing = await untilPhase(['Progressing', 'Failed'], 240, true);
record('Flagger starts the analysis of the new revision', progressing.seen.includes('Progressing'), `${describe(progressing.canary)}; phases seen: ${progressing.seen.join(' -> ')}`);

// 3. No metric can be read (the metrics server is the cluster's Prometheus, which nothing
//    serves here), so each check fails; at the threshold Flagger rolls the release back:
//    the primary keeps the committed image and the target is scaled to zero again.
const rolledBack = await untilPhase(['Failed', 'Succeeded'], 420);
record('Flagger rolls the release back', rolledBack.canary?.status?.phase === 'Failed', `${describe(rolledBack.canary)}; phases seen: ${rolledBack.seen.join(' -> ')}`);
const afterTarget = await read('apps/v1', 'Deployment', APP);
const afterPrimary = await read('apps/v1', 'Deployment', `${APP}-primary`);
record(`${APP}-primary still runs ${tag}, ${APP} holds ${next} at zero replicas`, imageOf(afterPrimary) === committedImage && imageOf(afterTarget).endsWith(`:${next}`) && afterTarget?.spec?.replicas === 0, `${APP}-primary: ${imageOf(afterPrimary)}; ${APP}: ${imageOf(afterTarget)} x${afterTarget?.spec?.replicas}`);
const said = await events();
record('Flagger says why', said.length > 0, said.join('\n'));

finish(process.env.CANARY_SCENARIO_RESULTS, { tag, next, services, backends, parents, events: said, rolledBack: rolledBack.canary?.status ?? null });
