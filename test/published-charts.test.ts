import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { buildSync } from 'esbuild';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PLATFORM } from '../src/environments/platform';
import { renderEnvironment } from '../src/synth';
import { renderToTree } from '../src/tooling/render';
import { isLoopbackHost, parseRegistry } from '../src/artifact/publish';
import { redactCredentials } from '../src/base/printable';
import { PUBLISH } from '../src/commands/publish';
import { parseAllDocuments } from 'yaml';
import { projectChartVersions } from '../src/synth/chart-versions';
import { DIST, type K8sObject, projectEnvironments, readManifests, ROOT, runInProcess, temporaryDirectory, valuesProblemsWith } from './support';

// An environment may have Argo CD follow each application's published chart (issue 26):
// `applicationSource: { from: registry, registry: oci://... }` in its environment.yaml.

const REGISTRY = 'oci://ghcr.io/example/platform-gitops-charts';

/** Render `name` as the project has it, but following the published charts; its files' objects and its versions. */
function renderFollowingCharts(name: string) {
  const environment = { ...projectEnvironments()[name]!, applicationSource: { from: 'registry' as const, registry: REGISTRY } };
  const dir = temporaryDirectory();
  try {
    const versions = renderEnvironment(environment, dir, undefined, projectChartVersions(ROOT, name));
    const texts = new Map(fs.readdirSync(dir).filter((file) => fs.statSync(path.join(dir, file)).isFile()).map((file) => [file, fs.readFileSync(path.join(dir, file), 'utf8')]));
    return { environment, objects: readManifests(dir), texts, versions };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const applicationOf = (objects: Map<string, K8sObject[]>, name: string) =>
  objects.get('gitops.yaml')!.find((o) => o.kind === 'Application' && o.metadata.name === name)!;

describe('an environment that follows the published application charts', () => {
  const { environment, objects, texts, versions } = renderFollowingCharts('local');
  const committed = projectChartVersions(ROOT, 'local');

  it('installs each application from <registry>/<environment>, chart <application>, at the version of its chart version record', () => {
    for (const application of environment.applications) {
      const app = applicationOf(objects, application.name);
      const sources = app.spec.sources ?? [app.spec.source];
      // Helm over OCI: the registry without its scheme (argo-cd v3.6.1 util/helm/client.go IsHelmOciRepo).
      expect(sources[0]).toEqual({
        repoURL: 'ghcr.io/example/platform-gitops-charts/local',
        chart: application.name,
        targetRevision: committed[application.name]!.version,
        helm: { releaseName: application.name },
      });
      expect(versions[application.name]!.version).toBe(committed[application.name]!.version);
      // Its encrypted Secrets still come from git, through the plugin.
      for (const other of sources.slice(1)) expect(other.plugin?.name).toBeDefined();
    }
  });

  it('renders each application\'s own file exactly as when the environment follows git: the chart\'s content is unchanged', () => {
    for (const application of environment.applications) {
      expect(texts.get(`${application.name}.yaml`)).toBe(fs.readFileSync(path.join(DIST, 'local', `${application.name}.yaml`), 'utf8'));
    }
  });

  it("lets each application's project read that registry, and no other project", () => {
    const projects = objects.get('gitops.yaml')!.filter((o) => o.kind === 'AppProject');
    const names = projectEnvironments()['local']!.applications.map((application) => application.name);
    for (const project of projects) {
      const expected = names.includes(project.metadata.name) ? [PLATFORM.repository.url, 'ghcr.io/example/platform-gitops-charts/local'] : undefined;
      if (expected !== undefined) expect(project.spec.sourceRepos, project.metadata.name).toEqual(expected);
      else expect(project.spec.sourceRepos, project.metadata.name).not.toContain('ghcr.io/example/platform-gitops-charts/local');
    }
  });

  // npm run diff renders the working tree the same way: the review shows the version as synth pins it.
  it('pins the same versions when npm run diff renders the working tree', () => {
    const tree = renderToTree([environment], ROOT);
    const gitops = tree.get('local/gitops.yaml') ?? tree.get(path.join('local', 'gitops.yaml'))!;
    for (const application of environment.applications) {
      expect(gitops).toContain(`chart: ${application.name}\n`);
      const app = parseAllDocuments(gitops).map((d) => d.toJS()).find((o) => o?.kind === 'Application' && o.metadata.name === application.name);
      expect(app.spec.sources[0].targetRevision, application.name).toBe(committed[application.name]!.version);
    }
  });

  it('leaves the platform\'s own charts on git', () => {
    const platformCharts = objects.get('gitops.yaml')!.filter((o) => o.kind === 'Application' && !environment.applications.some((a) => a.name === o.metadata.name));
    expect(platformCharts.length).toBeGreaterThan(0);
    for (const app of platformCharts) {
      for (const source of app.spec.sources ?? [app.spec.source]) expect(source.repoURL).toBe(PLATFORM.repository.url);
    }
  });
});

describe('the applicationSource setting', () => {
  const file = 'src/environments/testing/environment.yaml';
  const problemsWith = (value: unknown) => valuesProblemsWith(file, (document) => document.set('applicationSource', document.createNode(value)));

  it('is the repository when left out, and takes a registry', () => {
    expect(projectEnvironments()['testing']!.applicationSource).toEqual({ from: 'repository' });
    expect(problemsWith({ from: 'registry', registry: REGISTRY })).toEqual([]);
  });

  it.each([
    [{ from: 'registry', registry: 'https://ghcr.io/example' }, 'applicationSource.registry "https://ghcr.io/example" must be an OCI registry'],
    [{ from: 'registry', registry: `${REGISTRY}/` }, 'must be an OCI registry'],
    [{ from: 'registry', registry: 'oci://ghcr.io/Example' }, 'must be an OCI registry'],
    [{ from: 'registry' }, 'applicationSource.registry'],
    [{ from: 'bucket' }, 'applicationSource.from "bucket" must be "repository" or "registry" (which names a registry)'],
  ])('refuses %j, naming the file and the field', (value, message) => {
    const problems = problemsWith(value);
    expect(problems.length, problems.join('\n')).toBeGreaterThan(0);
    expect(problems.join('\n')).toContain(file);
    expect(problems.join('\n')).toContain(message);
  });
});

describe('a registry named on the command line (npm run publish --registry)', () => {
  it('takes a host in capitals as the same host, and refuses a port out of range or a path in capitals', () => {
    expect(parseRegistry('oci://Registry.Example.com:5000/charts/')).toEqual({ host: 'registry.example.com:5000', url: 'oci://registry.example.com:5000/charts' });
    for (const refused of ['oci://registry.example.com:0/charts', 'oci://registry.example.com:99999', 'oci://registry.example.com/Charts', 'https://registry.example.com']) {
      expect(() => parseRegistry(refused), refused).toThrow(`--registry "${refused}" must be oci://<host>[:<port>][/<path>]: a lower-case host and path`);
    }
  });
});

describe('npm run publish: credentials and plain HTTP', () => {
  it('never prints a credential written into --registry, in its error or its usage (exit 2)', async () => {
    for (const registry of ['oci://ana:s3cret@registry.example.com/charts', 'oci://ana:s3cret@Registry.Example.com:5000', 'oci://s3cret@127.0.0.1:5000/charts']) {
      const run = await runInProcess(PUBLISH, ['--env', 'local', '--registry', registry], ROOT, {});
      expect(run.status, registry).toBe(2);
      expect(run.stdout + run.stderr, registry).not.toContain('s3cret');
      expect(run.stderr, registry).toContain('--registry must not hold credentials (oci://<credentials>@');
      expect(run.stderr, registry).toContain('REGISTRY_USERNAME and REGISTRY_PASSWORD');
    }
    expect(redactCredentials('helm: failed to push oci://ana:s3cret@registry.example.com/charts and https://x:y@host')).toBe('helm: failed to push oci://<credentials>@registry.example.com/charts and https://<credentials>@host');
  });

  it('talks plain HTTP only to a registry on a loopback address (exit 2 for any other host)', async () => {
    for (const host of ['registry.example.com', '10.0.0.5:5000', 'localhost.example.com']) {
      const run = await runInProcess(PUBLISH, ['--env', 'local', '--registry', `oci://${host}/charts`, '--plain-http'], ROOT, {});
      expect(run.status, host).toBe(2);
      expect(run.stderr, host).toContain(`--plain-http goes only with a registry on a loopback address (localhost, 127.0.0.0/8, [::1]); ${host.toLowerCase()} is not one: its traffic and credentials would cross the network unencrypted`);
    }
    for (const host of ['localhost:5000', '127.0.0.1:5000', '127.1.2.3', '[::1]:5000']) expect(isLoopbackHost(host), host).toBe(true);
  });

  it('removes the temporary registry login when the process is interrupted or terminated', () => {
    const dir = temporaryDirectory('platform-gitops-scratch-');
    try {
      const entry = path.join(dir, 'entry.ts');
      fs.writeFileSync(
        entry,
        `import * as fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { withScratchDirectory } from ${JSON.stringify(path.join(ROOT, 'src', 'base', 'scratch-directory'))};
withScratchDirectory('platform-gitops-registry-', (folder) => {
  fs.writeFileSync(folder + '/registry.json', '{"auths":{}}');
  process.stdout.write(folder + '\\n');
  spawnSync('sleep', ['3']);
});
`,
      );
      buildSync({ entryPoints: [entry], bundle: true, platform: 'node', outfile: path.join(dir, 'entry.js'), logLevel: 'error' });
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        // The child prints its folder, then is signalled while it works (sleep): the signal ends it, and the folder goes first.
        const printed = path.join(dir, `${signal}.out`);
        const script = `node ${JSON.stringify(path.join(dir, 'entry.js'))} > ${printed} & child=$!; i=0; while [ ! -s ${printed} ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; kill -${signal.slice(3)} $child; wait $child; echo "status $?"`;
        const run = spawnSync('sh', ['-c', script], { encoding: 'utf8', env: { ...process.env, TMPDIR: dir } });
        const folder = fs.readFileSync(printed, 'utf8').trim();
        const status = run.stdout.trim();
        expect(folder, run.stderr).toMatch(/platform-gitops-registry-/);
        expect(fs.existsSync(folder!), signal).toBe(false);
        expect(status, signal).toBe(`status ${128 + (signal === 'SIGINT' ? 2 : 15)}`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
