import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath } from '../src/infrastructure/releases';
import { afterEach, describe, expect, it } from 'vitest';
import { loadEnvironments, type Environment } from '../src/environments';
import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { manifestText } from '../src/base/manifest-files';
import { chartFile, RENDER_MARKER } from '../src/contract/layout';
import { chartVersionsPath } from '../src/synth/chart-versions';
import { resolveOutdir } from '../src/synth/output-folder';
import { buildEnvironment, synthesize } from '../src/synth';
import { SYNTH } from '../src/commands/synth';
import { DIST, ROOT, environmentFilesCopy, runCli, runInProcess, valuesTexts, temporaryDirectory, treeContents } from './support';

const cleanups: string[] = [];
afterEach(() => {
  for (const dir of cleanups.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder holding a copy of the committed dist/ at `<tmp>/dist`. */
function copyOfDist(): { workdir: string; outdir: string } {
  const workdir = temporaryDirectory();
  cleanups.push(workdir);
  const outdir = path.join(workdir, 'dist');
  fs.cpSync(DIST, outdir, { recursive: true });
  return { workdir, outdir };
}

describe('npm run synth', () => {
  it('renders one folder per environment, in the contract order, with one file per chart', () => {
    expect(fs.readdirSync(DIST).sort()).toEqual([RENDER_MARKER, 'local', 'production', 'staging', 'testing']);
    // Beside the charts, the kustomization of Argo CD (src/infrastructure/argo-cd-kustomization.ts).
    const argoCd = path.basename(releaseKustomizationPath('local', INFRASTRUCTURE_RELEASES.argoCd));
    for (const environment of fs.readdirSync(DIST).filter((entry) => entry !== RENDER_MARKER)) {
      // Charts only: the versions of the applications' published charts are recorded beside the values.
      expect(fs.statSync(path.join(DIST, environment, argoCd, 'kustomization.yaml')).isFile()).toBe(true);
      for (const file of fs.readdirSync(path.join(DIST, environment)).filter((name) => name !== argoCd)) expect(file).toMatch(/^[a-z][a-z0-9-]*\.yaml$/);
      expect(fs.existsSync(path.join(ROOT, chartVersionsPath(environment))), environment).toBe(true);
    }
  });

  it('is deterministic: two renders are byte-identical', () => {
    const first = temporaryDirectory();
    const second = temporaryDirectory();
    cleanups.push(first, second);
    synthesize({ outdir: path.join(first, 'dist') });
    synthesize({ outdir: path.join(second, 'dist') });
    expect(treeContents(path.join(first, 'dist'))).toEqual(treeContents(path.join(second, 'dist')));
  });

  it('leaves the committed dist/ exactly as the code renders it (--check passes)', async () => {
    const result = await runInProcess(SYNTH, ['--check']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('dist is up to date');
  });

  it('--check names every file that differs and exits non-zero', async () => {
    const { outdir } = copyOfDist();
    fs.appendFileSync(path.join(outdir, 'testing', 'webapp.yaml'), '# edited by hand\n');
    fs.rmSync(path.join(outdir, 'local', 'webapp.yaml'));
    fs.writeFileSync(path.join(outdir, 'staging', 'stray.yaml'), 'kind: ConfigMap\n');
    const before = treeContents(outdir);

    const result = await runInProcess(SYNTH, ['--check', '--outdir', outdir]);

    expect(result.status).toBe(1);
    expect(result.stderr).toContain('local/webapp.yaml (missing)');
    expect(result.stderr).toContain('staging/stray.yaml (not rendered by the code)');
    expect(result.stderr).toContain('testing/webapp.yaml (changed)');
    expect(treeContents(outdir)).toEqual(before);
  });

  it('replaces a stale dist/ as a whole, removing files the code no longer renders', async () => {
    const { workdir, outdir } = copyOfDist();
    fs.writeFileSync(path.join(outdir, 'staging', 'stray.yaml'), 'kind: ConfigMap\n');

    const result = await runInProcess(SYNTH, ['--outdir', outdir]);

    expect(result.status).toBe(0);
    expect(treeContents(outdir)).toEqual(treeContents(DIST));
    expect(fs.readdirSync(workdir)).toEqual(['dist']);
  });

  it('leaves dist/ untouched when rendering fails part-way through the environments', () => {
    const { workdir, outdir } = copyOfDist();
    const before = treeContents(outdir);
    const environments = loadEnvironments();
    // Valid for the schema's types, impossible to render: the active unit is missing (whichever
    // units staging runs now).
    const broken = structuredClone(environments.find((env) => env.name === 'staging')!) as any;
    delete broken.applications[0].strategy.blueGreen.units[broken.applications[0].strategy.blueGreen.active];
    const order: Environment[] = environments.map((env) => (env.name === 'staging' ? broken : env));

    expect(() => synthesize({ outdir, environments: order })).toThrow();
    expect(treeContents(outdir)).toEqual(before);
    expect(fs.readdirSync(workdir)).toEqual(['dist']);
  });

  // The one spawn of the entry point: argv, the usage error, exit 2, no stack trace.
  it('prints a usage error without a stack trace, exits 2 and keeps dist/', () => {
    const { outdir } = copyOfDist();
    const before = treeContents(outdir);
    const result = runCli('synth', ['--outdir', outdir, '--no-such-option']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("Unknown option '--no-such-option'");
    expect(result.stderr).toContain('The output folder was left unchanged.');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(treeContents(outdir)).toEqual(before);
  });

  it('changing the testing image tag changes only image lines of dist/testing/', () => {
    const workdir = temporaryDirectory();
    cleanups.push(workdir);
    const files = environmentFilesCopy();
    files.testing.webapp.image.tag = 'v9.9.9';
    // Over a copy of the committed dist/: a render elsewhere leaves the project's version record alone.
    fs.cpSync(DIST, path.join(workdir, 'dist'), { recursive: true });
    const record = fs.readFileSync(path.join(ROOT, chartVersionsPath('testing')), 'utf8');
    synthesize({ outdir: path.join(workdir, 'dist'), texts: valuesTexts(files) });
    expect(fs.readFileSync(path.join(ROOT, chartVersionsPath('testing')), 'utf8')).toBe(record);

    const after = treeContents(path.join(workdir, 'dist'));
    const before = treeContents(DIST);
    const changedFiles = [...after.keys()].filter((file) => after.get(file) !== before.get(file));
    expect(changedFiles.length).toBeGreaterThan(0);
    for (const file of changedFiles) {
      expect(file.startsWith(`testing${path.sep}`), file).toBe(true);
      const oldLines = before.get(file)!.split('\n');
      const newLines = after.get(file)!.split('\n');
      expect(newLines.length).toBe(oldLines.length);
      const changed = newLines.filter((line, index) => line !== oldLines[index]);
      expect(changed.length).toBeGreaterThan(0);
      for (const line of changed) expect(line).toMatch(/^\s+(- )?image: \S+:v9\.9\.9$/);
    }
  });


  it.each([
    ['the project root', ROOT],
    ['a folder above it', path.dirname(ROOT)],
    ['src', path.join(ROOT, 'src')],
    ['a folder inside src', path.join(ROOT, 'src', 'environments')],
  ])('refuses to replace %s, exit 1 (refused), touching nothing', async (_, outdir) => {
    const before = treeContents(path.join(ROOT, 'src', 'environments'));
    const result = await runInProcess(SYNTH, ['--outdir', outdir]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/synth replaces its output folder as a whole/);
    expect(treeContents(path.join(ROOT, 'src', 'environments'))).toEqual(before);
  });

  it('refuses a folder holding files it did not write (no marker), exit 1', async () => {
    const workdir = temporaryDirectory();
    cleanups.push(workdir);
    fs.writeFileSync(path.join(workdir, 'notes.txt'), 'mine\n');
    const result = await runInProcess(SYNTH, ['--outdir', workdir]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`holds files synth did not write (no ${RENDER_MARKER})`);
    expect(fs.readdirSync(workdir)).toEqual(['notes.txt']);
  });

  it.each([[[]], [['--check']]])('refuses an output folder below a file, naming the file, exit 1 (%j)', async (extra) => {
    const workdir = temporaryDirectory();
    cleanups.push(workdir);
    const file = path.join(workdir, 'notes.txt');
    fs.writeFileSync(file, 'mine\n');
    const outdir = path.join(file, 'dist');
    const result = await runInProcess(SYNTH, [...extra, '--outdir', outdir]);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`synth: --outdir "${outdir}" is below ${file}, which is a file, not a folder\nThe output folder was left unchanged.\n`);
    expect(fs.readdirSync(workdir)).toEqual(['notes.txt']);
  });

  it.each([
    ['is a link', (link: string) => link, (link: string, target: string) => `is a link to ${target}, which does not exist`],
    ['is below a link', (link: string) => path.join(link, 'dist'), (link: string, target: string) => `is below ${link}, a link to ${target}, which does not exist`],
  ])('refuses an output folder that %s to nothing, naming the link and its target, exit 1', async (_, outdirOf, problem) => {
    const workdir = temporaryDirectory();
    cleanups.push(workdir);
    const link = path.join(workdir, 'dangling');
    const target = path.join(workdir, 'nowhere');
    fs.symlinkSync(target, link);
    const outdir = outdirOf(link);
    const result = await runInProcess(SYNTH, ['--outdir', outdir]);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`synth: --outdir "${outdir}" ${problem(link, target)}\nThe output folder was left unchanged.\n`);
    expect(fs.readdirSync(workdir)).toEqual(['dangling']);
  });

  it('renders through a link to a folder into that folder, keeping the link', async () => {
    const workdir = temporaryDirectory();
    cleanups.push(workdir);
    const folder = path.join(workdir, 'rendered');
    fs.mkdirSync(folder);
    const link = path.join(workdir, 'dist');
    fs.symlinkSync(folder, link);
    for (let run = 0; run < 2; run++) {
      const result = await runInProcess(SYNTH, ['--outdir', link]);
      expect(result.status, result.stderr).toBe(0);
    }
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(link)).toBe(folder);
    expect(treeContents(folder)).toEqual(treeContents(DIST));
    expect(fs.readdirSync(workdir).sort()).toEqual(['dist', 'rendered']);
  });

  // Node's recursive mkdirSync (20.20 and 24.22 alike) never returns when a folder cannot be made but the error
  // is ENOENT, as below /proc; a process of its own, so a hang fails the test instead of
  // stopping the suite.
  it.runIf(fs.existsSync('/proc/self'))('refuses an output folder it cannot create (below /proc), naming it, instead of hanging', () => {
    const outdir = '/proc/platform-gitops-absent/dist';
    const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'run.cjs'), 'synth', '--outdir', outdir], { encoding: 'utf8', timeout: 30_000 });
    expect(result.signal).toBeNull();
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^synth: --outdir "\/proc\/platform-gitops-absent\/dist": cannot create \/proc\/platform-gitops-absent \(ENOENT: .*\)\nThe output folder was left unchanged\.\n$/);
  });

  it('treats an empty CDK8S_OUTDIR or --outdir as unset (renders dist/)', () => {
    expect(resolveOutdir(ROOT, undefined, '')).toBe(DIST);
    expect(resolveOutdir(ROOT, '', undefined)).toBe(DIST);
    expect(resolveOutdir(ROOT, '  ', '')).toBe(DIST);
  });

});

describe('the rendered YAML', () => {
  /** Documents as Kubernetes' YAML 1.1 readers and a YAML 1.2 reader see them. */
  const readBack = (text: string, version: '1.1' | '1.2') => parseAllDocuments(text, { version }).map((document) => document.toJSON());

  it('reads back, in YAML 1.1 and 1.2, as exactly the objects each chart resolves', () => {
    const [environment] = loadEnvironments();
    const app = new App();
    buildEnvironment(app, environment!);
    expect(app.charts.length).toBeGreaterThan(1);
    for (const chart of app.charts) {
      const objects = chart.toJson();
      const text = fs.readFileSync(path.join(DIST, chartFile(environment!.name, chart.node.id)), 'utf8');
      expect(readBack(text, '1.1'), chart.node.id).toEqual(objects);
      expect(readBack(text, '1.2'), chart.node.id).toEqual(objects);
    }
  });

  it('quotes every string a YAML 1.1 or 1.2 reader would take for another type or syntax', () => {
    const strings = ['true', 'yes', 'no', 'on', 'off', 'y', 'n', '~', 'null', '1', '0755', '0x1F', '1e3', '1_000', '+1_0', '0b101', '190:20:30', '1_0.5', '6.8523015e+5', '<<', '=', '.inf', '.NaN', 'Off', 'NO', '12:30:45', '2001-12-14', '-c', '- a', 'a: b', '#x', '*x', '&x', '!x', '@x', '', ' lead', 'multi\nline\n'];
    const text = manifestText([{ kind: 'ConfigMap', data: Object.fromEntries(strings.map((value, index) => [`k${index}`, value])) }]);
    for (const version of ['1.1', '1.2'] as const) expect(readBack(text, version)[0].data).toEqual(Object.fromEntries(strings.map((value, index) => [`k${index}`, value])));
  });
});
