import { describe, expect, it } from 'vitest';
import { OPS } from '../src/commands/ops';
import { imageRepository } from '../src/commands/ops/release-check';
import { deployedVersion } from '../src/commands/ops/upgrade-status';
import { loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { knownVersions, RELEASE_NAMES, type ReleaseName, versionFacts } from '../src/contract/release-versions';
import { RELEASE_ROWS, isHelmRelease, releaseIn, releaseNamespace } from '../src/infrastructure/releases';
import { fakeApiServerForTests } from './fake-api-server';
import { ROOT, runInProcess } from './support';

const environment = loadEnvironments().find((candidate) => candidate.name === 'local')!;
const platform = loadPlatform();
const namespace = platform.controller.namespace;
/** What local's values name, release by release. */
const wanted = (name: string) => environment.infrastructure.versions[name as ReleaseName];

/** A release's Application, as Argo CD reports it after deploying `versions` in turn (oldest first). */
function application(name: string, versions: readonly string[]) {
  const row = releaseIn(RELEASE_ROWS.find((candidate) => candidate.name === name)!, environment);
  // A manifests release (argocd) syncs this repository's folder at the platform's branch: its history names commits, never the tag.
  const source = isHelmRelease(row)
    ? { repoURL: row.chart.repoURL, chart: row.chart.chart, targetRevision: versions.at(-1) }
    : { repoURL: platform.repository.url, path: `dist/local/${name}`, targetRevision: platform.repository.targetRevision };
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name, namespace },
    spec: { source },
    status: {
      sync: { status: 'Synced', revision: versions.at(-1) },
      health: { status: 'Healthy' },
      history: versions.map((version, id) => ({ id, revision: version, source: { ...source, targetRevision: version }, deployedAt: '2026-01-01T00:00:00Z', initiatedBy: { automated: true } })),
    },
  };
}

/** The pods of every manifests release, running the controller image of the tag it last deployed (`versions`' newest). */
function manifestsPods(versionOf: (name: string) => string | undefined) {
  return RELEASE_ROWS.filter((row) => !isHelmRelease(row)).flatMap((row) => {
    const version = versionOf(row.name);
    const image = versionFacts(row.name, wanted(row.name))!.controllerImage!;
    return version === undefined ? [] : [readyPod(`${row.name}-server`, releaseNamespace(row, { environment, platform }), [`${imageRepository(image)}:${version}`])];
  });
}

const readyPod = (name: string, podNamespace: string, images: readonly string[]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: podNamespace },
  spec: { containers: images.map((image, index) => ({ name: `c${index}`, image })) },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

describe('ops upgrade-status: each release deployed, wanted and known', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-upgrade-status-');
  const status = () => runInProcess(OPS, ['upgrade-status', '--env', 'local', '--output', 'json'], ROOT, { KUBECONFIG: kubeconfig() });

  it('passes when every release runs the version git wants, listing the versions the table knows', async () => {
    api.objects = { Application: RELEASE_NAMES.map((name) => application(name, ['0.0.1', wanted(name)])), Pod: manifestsPods(wanted) };
    const run = await status();
    expect(run.status, run.stderr).toBe(0);
    const { releases } = JSON.parse(run.stdout);
    expect(releases.map((state: { release: string }) => state.release)).toEqual(RELEASE_ROWS.map((row) => row.name));
    for (const state of releases) {
      expect(state).toEqual({ release: state.release, deployed: wanted(state.release), wanted: wanted(state.release), known: knownVersions(state.release), sync: 'Synced', health: 'Healthy', current: true });
    }
    expect(run.stderr).toContain('local: every release runs the version src/environments/local/environment.yaml names');
  });

  it('fails naming a release that runs another version and one without an Application', async () => {
    const [behind, missing, ...rest] = RELEASE_NAMES;
    api.objects = { Application: [application(behind!, [wanted(behind!), '0.0.1']), ...rest.map((name) => application(name, [wanted(name)]))], Pod: manifestsPods(wanted) };
    const run = await status();
    expect(run.status).toBe(1);
    const releases = JSON.parse(run.stdout).releases as { release: string; deployed: string | null; current: boolean }[];
    expect(releases.find((state) => state.release === behind)).toMatchObject({ deployed: '0.0.1', current: false });
    expect(releases.find((state) => state.release === missing)).toMatchObject({ deployed: null, sync: null, current: false });
    expect(run.stderr).toContain(`${behind} runs 0.0.1, git wants ${wanted(behind!)}`);
    expect(run.stderr).toContain(`no Application ${namespace}/${missing}`);
  });
});

describe('ops upgrade-status: a release installed from its upstream manifests', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-upgrade-status-manifests-');
  const manifests = RELEASE_ROWS.filter((row) => !isHelmRelease(row)).map((row) => row.name);

  it('takes the tag of the controller image its pods run, since its Application names commits only', async () => {
    expect(manifests.length).toBeGreaterThan(0);
    api.objects = { Application: RELEASE_NAMES.map((name) => application(name, [wanted(name)])), Pod: manifestsPods(() => 'v0.0.1') };
    const run = await runInProcess(OPS, ['upgrade-status', '--env', 'local', '--output', 'json'], ROOT, { KUBECONFIG: kubeconfig() });
    expect(run.status).toBe(1);
    const releases = JSON.parse(run.stdout).releases as { release: string; deployed: string | null; wanted: string; current: boolean }[];
    for (const name of manifests) {
      expect(releases.find((state) => state.release === name)).toMatchObject({ deployed: 'v0.0.1', wanted: wanted(name), current: false });
      expect(run.stderr).toContain(`${name} runs v0.0.1, git wants ${wanted(name)}`);
    }
  });
});

describe('the version an Application deployed', () => {
  const app = (status: object) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'x' }, spec: {}, status });

  it("is its newest history entry's chart version, or the targetRevision a source without a chart recorded", () => {
    expect(deployedVersion(app({ history: [{ id: 0, revision: '1.0.0', source: { chart: 'c', targetRevision: '1.0.0' } }, { id: 1, revision: '1.1.0', source: { chart: 'c', targetRevision: '1.1.0' } }] }))).toBe('1.1.0');
    expect(deployedVersion(app({ history: [{ id: 0, revision: '0123abcd', source: { repoURL: 'https://github.com/argoproj/argo-cd', path: 'manifests', targetRevision: 'v3.5.1' } }] }))).toBe('v3.5.1');
  });

  it('is the compared revision of a Helm source without history, and none before the first comparison', () => {
    expect(deployedVersion({ ...app({ sync: { status: 'Synced', revision: '2.0.0' } }), spec: { source: { chart: 'c', repoURL: 'r', targetRevision: '2.0.0' } } })).toBe('2.0.0');
    expect(deployedVersion({ ...app({}), spec: { source: { chart: 'c', repoURL: 'r', targetRevision: '2.0.0' } } })).toBeNull();
  });
});

describe('ops check --component <release>: its pods ready and its controller image', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-release-check-');
  const name = RELEASE_NAMES.find((candidate) => versionFacts(candidate, wanted(candidate))?.controllerImage !== undefined)!;
  const expected = versionFacts(name, wanted(name))!.controllerImage!;
  const releaseNs = releaseNamespace(RELEASE_ROWS.find((row) => row.name === name)!, { environment, platform });
  const check = (component: string) => runInProcess(OPS, ['check', '--env', 'local', '--component', component], ROOT, { KUBECONFIG: kubeconfig() });

  it('passes when the pods are ready and run the image the table says its version ships', async () => {
    api.objects = { Pod: [readyPod(`${name}-1`, releaseNs, [expected, 'registry.example.com/sidecar:1'])] };
    const run = await check(name);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`PASS ${name}: pods of ${releaseNs} ready`);
    expect(run.stdout).toContain(`PASS ${name} ${wanted(name)}: controller image ${expected}: 1 container(s): Pod ${releaseNs}/${name}-1 c0`);
  });

  it('fails naming the container that runs another tag of the controller image', async () => {
    api.objects = { Pod: [readyPod(`${name}-1`, releaseNs, [`${imageRepository(expected)}:v0.0.1`])] };
    const run = await check(name);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`FAIL ${name} ${wanted(name)}: controller image ${expected}: Pod ${releaseNs}/${name}-1 c0 runs ${imageRepository(expected)}:v0.0.1`);
  });

  it('fails when no container runs the controller image', async () => {
    api.objects = { Pod: [readyPod(`${name}-1`, releaseNs, ['registry.example.com/other:1'])] };
    const run = await check(name);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`no container in ${releaseNs} runs ${imageRepository(expected)}`);
  });

  it('reads an image reference without its tag or digest', () => {
    expect(imageRepository('quay.io/jetstack/cert-manager-controller:v1.21.2')).toBe('quay.io/jetstack/cert-manager-controller');
    expect(imageRepository('localhost:5000/a/b@sha256:00')).toBe('localhost:5000/a/b');
    expect(imageRepository('localhost:5000/a/b')).toBe('localhost:5000/a/b');
  });
});
