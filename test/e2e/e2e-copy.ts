import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, parseDocument, stringify } from 'yaml';
import type { E2eReport } from '../../e2e/harness';
import { CLUSTER_COMPONENTS, ensureToolchain } from '../../toolchain';
import { isolated } from '../../e2e/isolation';
import { chartFile } from '../../src/contract/layout';
import { applicationCopyText } from '../../src/bench/scale';
import { applicationValuesPath, environmentValuesPath, ValuesFile } from '../../src/environments/values-file';
import { GITOPS_CHART_ID, type PlatformChartId } from '../../src/contract/platform-charts';
import { ROOT, temporaryDirectory } from '../support';

/** What an e2e run of a project copy needs: the commands, the rendered output and what it serves. */
const COPIED = ['src', 'scripts', 'e2e', 'toolchain', 'pulumi', 'schemas', 'secrets', 'dist', 'docs', 'package.json', 'package-lock.json', 'tsconfig.json', '.sops.yaml'] as const;

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', ...args], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/**
 * A copy of the project as its own git repository, on the branch the checkout is on
 * (main in CI), so a test can break it, commit, and run the e2e on the copy.
 */
export function e2eProjectCopy(): string {
  const dir = temporaryDirectory('platform-gitops-e2e-copy-');
  for (const entry of COPIED) {
    if (fs.existsSync(path.join(ROOT, entry))) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  // No trailing slash: node_modules is a symlink, which Argo CD refuses in a repository.
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules\nbuild/\n');
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'project copy');
  return dir;
}

/** Rewrite the objects of a rendered file of the copy and commit the change. */
export function breakRendered(copy: string, file: string, change: (objects: any[]) => any[], message: string): void {
  const full = path.join(copy, 'dist', file);
  const objects = parseAllDocuments(fs.readFileSync(full, 'utf8')).map((doc) => doc.toJS());
  fs.writeFileSync(full, change(objects).map((o) => stringify(o)).join('---\n'));
  git(copy, 'commit', '--quiet', '-am', message);
}

/**
 * Drop Applications from an environment of the copy, the root's (gitops.yaml) and the
 * infrastructure's (infrastructure.yaml), and commit: a broken case syncs only what its break
 * needs and reaches it sooner. Throws for a name neither file holds, so a renamed Application
 * does not leave a case syncing what it meant to drop.
 */
export function dropApplications(copy: string, environment: string, names: readonly string[], why: string): void {
  const files = [chartFile(environment, GITOPS_CHART_ID), chartFile(environment, 'infrastructure' satisfies PlatformChartId)];
  const dropped = new Set<string>();
  for (const file of files) {
    const here = parseAllDocuments(fs.readFileSync(path.join(copy, 'dist', file), 'utf8'))
      .map((doc) => doc.toJS())
      .filter((object) => object?.kind === 'Application' && names.includes(object.metadata.name))
      .map((object) => object.metadata.name as string);
    if (here.length === 0) continue;
    breakRendered(copy, file, (objects) => objects.filter((object) => !(object.kind === 'Application' && here.includes(object.metadata.name))), `${environment}: without ${here.join(', ')} (${why})`);
    for (const name of here) dropped.add(name);
  }
  const missing = names.filter((name) => !dropped.has(name));
  if (missing.length > 0) throw new Error(`${files.map((file) => `dist/${file}`).join(' and ')} hold no Application ${missing.join(', ')}`);
}

/**
 * Add an application to an environment of the copy: the values of its application `like`
 * under another name (its own namespace and host, `applicationCopyText`), every Secret of the
 * environment made again by `npm run secrets -- init --rotate-key` for a key of the copy's own (the new
 * application's database login, broker user and smoke credentials among them; the run
 * re-encrypts them for its own key as it does local's), rendered and committed.
 */
export function addApplication(copy: string, environment: string, name: string, like: string): void {
  const values = applicationValuesPath(environment, like);
  fs.writeFileSync(path.join(copy, applicationValuesPath(environment, name)), applicationCopyText(new ValuesFile(values, fs.readFileSync(path.join(copy, values), 'utf8')), name));
  const key = path.join(path.dirname(copy), `${path.basename(copy)}-${environment}.key`);
  try {
    const init = spawnSync(process.execPath, [path.join(copy, 'scripts', 'run.cjs'), 'secrets', 'init', environment, '--key-file', key, '--rotate-key'], { cwd: copy, encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`secrets init ${environment} in the copy failed: ${init.stdout}${init.stderr}`);
  } finally {
    fs.rmSync(key, { force: true });
  }
  synthesizeCopy(copy);
  commitAll(copy, `${environment}: ${name}, an application like ${like}`);
}

/** Make an application of the copy a canary (the strategy's defaults), rendered again and committed. */
export function makeCanary(copy: string, environment: string, application: string): void {
  const file = path.join(copy, applicationValuesPath(environment, application));
  const doc = parseDocument(fs.readFileSync(file, 'utf8'));
  doc.set('strategy', doc.createNode({ type: 'canary' }));
  fs.writeFileSync(file, doc.toString());
  synthesizeCopy(copy);
  commitAll(copy, `${environment}: ${application} canary`);
}

/**
 * Have the copy's canaries analyse every `interval` instead of the contract's (`CANARY.analysis`
 * in the copy's `src/contract/contract.ts`), so every render of the copy carries it: its synth
 * and a release a scenario makes. Timing only: the threshold, the weights and the metrics stay
 * the contract's. Call it before the copy is rendered again (`makeCanary`).
 */
export function quickenCanaryAnalysis(copy: string, interval: string): void {
  const file = path.join(copy, 'src', 'contract', 'contract.ts');
  const text = fs.readFileSync(file, 'utf8');
  const constant = /(\n  analysis: \{ interval: )'[^']*'/g;
  const found = text.match(constant) ?? [];
  if (found.length !== 1) throw new Error(`${file}: expected one canary analysis interval (CANARY.analysis.interval), found ${found.length}`);
  fs.writeFileSync(file, text.replace(constant, `$1'${interval}'`));
}

/**
 * Have an environment of the copy follow its published charts from `registry`
 * (`applicationSource` in its environment.yaml); the copy is rendered again and committed.
 */
export function followPublishedCharts(copy: string, environment: string, registry: string): void {
  const file = path.join(copy, environmentValuesPath(environment));
  const doc = parseDocument(fs.readFileSync(file, 'utf8'));
  doc.set('applicationSource', doc.createNode({ from: 'registry', registry }));
  fs.writeFileSync(file, doc.toString());
  synthesizeCopy(copy);
  commitAll(copy, `${environment}: follow the published charts of ${registry}`);
}

function synthesizeCopy(copy: string): void {
  const synth = spawnSync(process.execPath, [path.join(copy, 'scripts', 'run.cjs'), 'synth'], { cwd: copy, encoding: 'utf8' });
  if (synth.status !== 0) throw new Error(`synth of the copy failed: ${synth.stderr}`);
}

/** Commit whatever the caller changed in the copy. */
export function commitAll(copy: string, message: string): void {
  git(copy, 'add', '-A');
  git(copy, 'commit', '--quiet', '-m', message);
}

/**
 * `npm run e2e` on the copy, in namespaces of its own (`isolated`: a network namespace with
 * its loopback brought up first, and a PID namespace); returns the exit code, the output and
 * the report.
 *
 * Its own loopback lets npm run test:e2e run two files at once: Envoy Gateway's control plane
 * listens on fixed ports (`ENVOY_GATEWAY_PORTS`, e2e/envoy-gateway.ts), which two runs on one
 * loopback would both take. Nothing of a run leaves the machine (the toolchain
 * is built before, outside the namespace), and the harness already runs as root (the git
 * server's account, the control plane's private mounts), which a network namespace needs too.
 */
export async function runE2eOn(copy: string, args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<{ status: number | null; output: string; report: E2eReport }> {
  const report = path.join(copy, 'e2e-report.json');
  ensureToolchain(CLUSTER_COMPONENTS, ROOT);
  const e2e = [process.execPath, path.join(copy, 'scripts', 'run.cjs'), 'e2e', ...args, '--report', report];
  const [command, ...commandArgs] = isolated(e2e);
  // Asynchronous, so that a file may run cases side by side (broken-sources.test.ts); stdout
  // and stderr in the order they came, as one log.
  const { status, output } = await new Promise<{ status: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command!, commandArgs, { cwd: copy, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    // Each stream decoded by itself, so a character split between two chunks stays whole.
    const chunks: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => chunks.push(chunk));
    }
    child.on('error', (error) => reject(new Error(`unshare could not start (util-linux; the e2e cases run as root): ${error.message}`)));
    child.on('close', (code) => resolve({ status: code, output: chunks.join('') }));
  });
  if (!fs.existsSync(report)) throw new Error(`the e2e wrote no report (exit ${status}):\n${output}`);
  return { status, output, report: JSON.parse(fs.readFileSync(report, 'utf8')) as E2eReport };
}
