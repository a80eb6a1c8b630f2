import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { locateToolchain } from '../../toolchain';
import { applicationChart, writeChart } from '../../src/artifact/application-chart';
import { helmBinary } from '../../src/artifact/publish';
import { PUBLISH } from '../../src/commands/publish';
import { chartVersionsPath, sha256 } from '../../src/synth/chart-versions';
import { commitCopy, git, projectCopy } from '../project-copy';
import { projectEnvironments, ROOT, runInProcess, temporaryDirectory } from '../support';

// The release artifact (issue 26) on the real tools: Helm 4.3.1 (the toolchain's, as Argo CD
// ships it) renders each application's chart to exactly the committed objects, and pushes it
// to a real OCI registry (the CNCF distribution registry, built from its module) on loopback.

const work = temporaryDirectory('platform-gitops-publish-test-');
const helm = helmBinary(ROOT);
let registry: ChildProcess;
let url = '';

/** The objects of a YAML stream, each as canonical JSON, in a stable order: what a cluster gets, whatever the order helm prints them in. */
function objectsOf(text: string): string[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS())
    .filter((object) => object !== null)
    .map((object) => JSON.stringify(object))
    .sort();
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  const port = await freePort();
  const config = path.join(work, 'registry.yml');
  fs.writeFileSync(config, `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${path.join(work, 'storage')}\nhttp:\n  addr: 127.0.0.1:${port}\n`);
  registry = spawn(locateToolchain(ROOT).bin('distribution', 'registry'), ['serve', config], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if ((await fetch(`http://127.0.0.1:${port}/v2/`).catch(() => undefined))?.ok) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  url = `oci://127.0.0.1:${port}/charts`;
}, 60_000);

afterAll(() => {
  registry?.kill();
  fs.rmSync(work, { recursive: true, force: true });
});

describe("each application's chart", () => {
  it('renders with helm template to exactly the committed objects, in every environment', () => {
    for (const environment of Object.values(projectEnvironments())) {
      for (const application of environment.applications) {
        const chart = applicationChart(ROOT, environment.name, application.name);
        const folder = writeChart(chart, path.join(work, 'template', environment.name));
        const rendered = spawnSync(helm, ['template', application.name, folder], { encoding: 'utf8' });
        expect(rendered.status, rendered.stderr).toBe(0);
        const committed = fs.readFileSync(path.join(ROOT, 'dist', environment.name, `${application.name}.yaml`), 'utf8');
        expect(objectsOf(rendered.stdout), `${environment.name}/${application.name}`).toEqual(objectsOf(committed));
        const lint = spawnSync(helm, ['lint', folder], { encoding: 'utf8' });
        expect(lint.status, lint.stdout).toBe(0);
      }
    }
  });
});

describe('npm run publish, on a real OCI registry', () => {
  it('pushes each chart once: the same version again is left as it is, the same version with other content is refused', async () => {
    const root = projectCopy();
    try {
      const first = await runInProcess(PUBLISH, ['--env', 'local', '--registry', url, '--plain-http'], root);
      expect(first.status, first.stderr).toBe(0);
      const versions = JSON.parse(fs.readFileSync(path.join(root, chartVersionsPath('local')), 'utf8'));
      for (const [application, entry] of Object.entries(versions) as [string, { version: string; appVersion: string }][]) {
        expect(first.stdout).toMatch(new RegExp(`${url.replace(/[./]/g, '\\$&')}/local/${application}:${entry.version.replace(/\./g, '\\.')} \\(appVersion ${entry.appVersion}\\): pushed, sha256:[0-9a-f]{64}`));
        // What the registry holds is the chart: pulled back, helm template gives the committed objects.
        const pulled = spawnSync(helm, ['template', application, `${url}/local/${application}`, '--version', entry.version, '--plain-http'], { encoding: 'utf8' });
        expect(pulled.status, pulled.stderr).toBe(0);
        expect(objectsOf(pulled.stdout)).toEqual(objectsOf(fs.readFileSync(path.join(root, 'dist', 'local', `${application}.yaml`), 'utf8')));
      }

      const again = await runInProcess(PUBLISH, ['--env', 'local', '--registry', url, '--plain-http'], root);
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout.trim().split('\n').every((line) => line.endsWith(': already published'))).toBe(true);

      // Content changed by hand and its digest with it, the version kept: refused, never replaced.
      const [application] = Object.keys(versions);
      const file = path.join(root, 'dist', 'local', `${application}.yaml`);
      fs.appendFileSync(file, '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: by-hand\n  namespace: default\n');
      versions[application!].digest = sha256(fs.readFileSync(file, 'utf8'));
      fs.writeFileSync(path.join(root, chartVersionsPath('local')), JSON.stringify(versions));
      const refused = await runInProcess(PUBLISH, ['--env', 'local', '--app', application!, '--registry', url, '--plain-http'], root);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`is already published with other content: a version is never replaced`);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  it("notes, and still publishes, when --registry is not the registry the environment follows", async () => {
    const root = projectCopy();
    try {
      const file = path.join(root, 'src', 'environments', 'local', 'environment.yaml');
      fs.appendFileSync(file, 'applicationSource:\n  from: registry\n  registry: oci://registry.example.com/charts\n');
      const elsewhere = await runInProcess(PUBLISH, ['--env', 'local', '--registry', url, '--plain-http'], root);
      expect(elsewhere.status, elsewhere.stderr).toBe(0);
      expect(elsewhere.stderr).toContain(
        `note: ${url} is not the registry local follows (oci://registry.example.com/charts, applicationSource.registry of its environment.yaml): Argo CD installs from that one`,
      );
      // Named on the command line as the environment follows it: no note.
      const text = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(file, text.replace('oci://registry.example.com/charts', url));
      const same = await runInProcess(PUBLISH, ['--env', 'local', '--registry', `${url}/`, '--plain-http'], root);
      expect(same.status, same.stderr).toBe(0);
      expect(same.stderr).toBe('');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses a rendered file that is not its version\'s content, an address that is not an OCI registry, half the credentials, and content not committed', async () => {
    const root = projectCopy();
    try {
      fs.appendFileSync(path.join(root, 'dist', 'local', 'webapp.yaml'), '# edited\n');
      const stale = await runInProcess(PUBLISH, ['--env', 'local', '--app', 'webapp', '--registry', url, '--plain-http'], root);
      expect(stale.status).toBe(1);
      expect(stale.stderr).toContain('dist/local/webapp.yaml is not the content of webapp\'s chart version');
      const address = await runInProcess(PUBLISH, ['--env', 'local', '--registry', 'https://registry.example.com/charts'], root);
      expect(address.status).toBe(2);
      expect(address.stderr).toContain('--registry "https://registry.example.com/charts" must be oci://<host>[:<port>][/<path>]');
      const half = await runInProcess(PUBLISH, ['--env', 'local', '--registry', url], root, { REGISTRY_USERNAME: 'ci' });
      expect(half.status).toBe(2);
      expect(half.stderr).toContain('REGISTRY_USERNAME and REGISTRY_PASSWORD go together');
      // In git, only what is committed is published.
      commitCopy(root);
      fs.appendFileSync(path.join(root, 'dist', 'local', 'billing.yaml'), '# edited\n');
      const uncommitted = await runInProcess(PUBLISH, ['--env', 'local', '--registry', url, '--plain-http'], root);
      expect(uncommitted.status).toBe(1);
      expect(uncommitted.stderr).toContain('dist/local has changes that are not committed: commit them (reviewed) before publishing its charts');
      // The version record, beside the values, likewise.
      git(root, 'checkout', '--', 'dist');
      fs.appendFileSync(path.join(root, chartVersionsPath('local')), '\n');
      const record = await runInProcess(PUBLISH, ['--env', 'local', '--registry', url, '--plain-http'], root);
      expect(record.status).toBe(1);
      expect(record.stderr).toContain(`${chartVersionsPath('local')} has changes that are not committed: commit them (reviewed) before publishing its charts`);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
