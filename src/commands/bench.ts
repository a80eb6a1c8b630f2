import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Environment, loadEnvironments } from '../environments';
import { benchGate } from '../bench/gate';
import { KUBECONFORM_BUILD_COMMAND } from '../bench/kubeconform';
import { scaledTexts } from '../bench/scale';
import { readValuesTexts } from '../environments/values-file';
import { renderEnvironment } from '../synth';
import { RENDERED_DIR } from '../contract/layout';
import { readRenderedTree } from '../validation/manifests';
import { RefusedError, UsageError } from '../base/errors';
import { type CommandContext, type CommandDefinition } from '../tooling/cli';

/**
 * `npm run bench`: the full synth of the four environments against its two floors (node
 * loading cdk8s and synthesizing exactly the committed objects, the target's floor; node
 * loading cdk8s-plus-28 and synthesizing one Deployment, the start-up alone), run in turn in
 * one session so all see the same machine; then synth time for N synthetic applications per
 * environment, through the real loader (N copies of each environment's first application
 * file) and every chart. Prints tables; asserts nothing (the figures go into docs/performance.md).
 */

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Measurement {
  readonly milliseconds: number;
  readonly peakKilobytes: number;
}

function measureProcess(root: string, args: readonly string[]): Measurement {
  const rssFile = path.join(os.tmpdir(), `bench-rss-${process.pid}`);
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, ['--require', path.join(root, 'scripts', 'bench-rss.cjs'), ...args], {
    cwd: root,
    env: { ...process.env, BENCH_RSS_FILE: rssFile },
    encoding: 'utf8',
  });
  const milliseconds = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new RefusedError(`${args.join(' ')} failed:\n${result.stderr}`);
  const peakKilobytes = Number(fs.readFileSync(rssFile, 'utf8'));
  fs.rmSync(rssFile, { force: true });
  return { milliseconds, peakKilobytes };
}

/** Synth's target: at most this many times the same-objects floor, medians of one run. */
export const SYNTH_TARGET_RATIO = 1.25;

/**
 * Write every object of the committed `dist/` into `file` as the same-objects floor reads it
 * ({ "<environment>/<file>.yaml": [objects] }, in the gate's reading order: readRenderedTree),
 * and return how many.
 */
export function writeCommittedObjects(dist: string, file: string): number {
  const tree = readRenderedTree(dist);
  if (tree.unreadable.length > 0) throw new RefusedError(`${dist}: ${tree.unreadable.map((u) => `${u.environment}/${u.file}: ${u.problem}`).join('; ')}`);
  const files: Record<string, unknown[]> = {};
  for (const { environment, file: name, object } of tree.objects) (files[`${environment}/${name}`] ??= []).push(object);
  fs.writeFileSync(file, JSON.stringify(files));
  return tree.objects.length;
}

/** Load `texts` through the real loader and render every environment (all its charts) into `outdir`. */
function renderScaled(texts: ReadonlyMap<string, string>, outdir: string): Environment[] {
  const environments = loadEnvironments(texts);
  for (const environment of environments) renderEnvironment(environment, path.join(outdir, environment.name));
  return environments;
}

const USAGE = `usage: npm run bench [-- [--runs <n>] [--scale <n,n,...>] [--only <part,...>] [--copies <n>]]

Measures the full synth against its floors, in turn: cdk8s synthesizing exactly the
committed objects (the target's floor), and cdk8s-plus-28 synthesizing one Deployment; then the load and render time of N applications per environment.
Then the gate (npm run validate) against its floor (node reading and parsing the same YAML)
and kubeconform (built by ${KUBECONFORM_BUILD_COMMAND}) on the same objects:
the committed dist/ and <copies> renamed copies of it.
With --only e2e: one npm run e2e -- --env local, start to report, and the time of each of
its phases (toolchain check, control plane, servers, Argo CD, bootstrap, each sync wave,
the operator's sync; the dry-run, which runs beside them, from its own start).
  --runs   alternating runs of each (default 7)
  --scale  application counts per environment (default 1,10,100)
  --only   the parts to measure, among synth, gate and e2e (default synth,gate); e2e is one
           npm run e2e -- --env local (minutes, needs the toolchain), with its phase times
  --copies copies of dist/ in the gate's large set (default 100: 100 times its objects)
Exit code: 0 done, 1 a run failed or kubeconform is not built, 2 bad arguments.`;

function positiveIntegers(text: string, option: string): number[] {
  const numbers = text.split(',').map(Number);
  if (numbers.some((n) => !Number.isInteger(n) || n < 1)) throw new UsageError(`${option} "${text}" must be whole numbers of at least 1, separated by ","`);
  return numbers;
}

/** A progress line on stderr, so the tables on stdout stay clean for docs/performance.md. */
function progress({ err }: CommandContext, message: string): void {
  err(`bench: ${message}\n`);
}

function benchSynth(values: { runs?: string; scale?: string }, context: CommandContext): void {
  const { root, out } = context;
  const line = (text: string) => out(`${text}\n`);
  const [runs] = positiveIntegers(values.runs ?? '7', '--runs') as [number];
  const scales = positiveIntegers(values.scale ?? '1,10,100', '--scale');
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-bench-'));
  try {
    // Warm the build and the file cache so neither side pays a first-run cost.
    measureProcess(root, [path.join(root, 'scripts', 'run.cjs'), 'synth', '--outdir', path.join(workdir, 'warm')]);
    const objectsFile = path.join(workdir, 'committed-objects.json');
    const objectCount = writeCommittedObjects(path.join(root, RENDERED_DIR), objectsFile);
    const sameObjects: Measurement[] = [];
    const startUp: Measurement[] = [];
    const synth: Measurement[] = [];
    for (let run = 0; run < runs; run++) {
      progress(context, `synth against its floors: run ${run + 1} of ${runs}`);
      sameObjects.push(measureProcess(root, [path.join(root, 'scripts', 'bench-floor-objects.cjs'), objectsFile, path.join(workdir, `objects-${run}`)]));
      startUp.push(measureProcess(root, [path.join(root, 'scripts', 'bench-floor.cjs'), path.join(workdir, `floor-${run}`)]));
      synth.push(measureProcess(root, [path.join(root, 'scripts', 'run.cjs'), 'synth', '--outdir', path.join(workdir, `synth-${run}`)]));
    }
    const row = (what: string, measurements: readonly Measurement[]) =>
      line(`| ${what} | ${median(measurements.map((m) => m.milliseconds)).toFixed(0)} ms | ${(median(measurements.map((m) => m.peakKilobytes)) / 1024).toFixed(0)} MiB |`);
    const ratio = (floor: readonly Measurement[]) => median(synth.map((m) => m.milliseconds)) / median(floor.map((m) => m.milliseconds));
    line(`Full synth vs its floors (median of ${runs} runs of each in turn, ${os.cpus().length} cores, node ${process.version})`);
    line('| what | median | peak RSS |');
    line('|---|---:|---:|');
    row(`same-objects floor: cdk8s synthesizing the ${objectCount} committed objects (scripts/bench-floor-objects.cjs)`, sameObjects);
    row('start-up floor: cdk8s-plus-28, one Deployment (scripts/bench-floor.cjs)', startUp);
    row('synth, 4 environments (node scripts/run.cjs synth, what npm run synth runs)', synth);
    line(`| ratio synth / same-objects floor | ${ratio(sameObjects).toFixed(2)}x | target <= ${SYNTH_TARGET_RATIO}x |`);
    line(`| ratio synth / start-up floor | ${ratio(startUp).toFixed(2)}x | |`);
    line('');

    const texts = readValuesTexts(root);
    line('Scale: N applications per environment, 4 environments, values loaded and validated, every chart rendered in process (median of 3)');
    line('| N | render | per environment | per application |');
    line('|---:|---:|---:|---:|');
    const perApplication = new Map<number, number>();
    for (const count of scales) {
      const scaled = scaledTexts(texts, count);
      const times: number[] = [];
      let environments = 0;
      for (let run = 0; run < 3; run++) {
        progress(context, `${count} application(s) per environment: run ${run + 1} of 3`);
        const started = process.hrtime.bigint();
        environments = renderScaled(scaled, path.join(workdir, `scale-${count}-${run}`)).length;
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        fs.rmSync(path.join(workdir, `scale-${count}-${run}`), { recursive: true, force: true });
      }
      const ms = median(times);
      perApplication.set(count, ms / count / environments);
      line(`| ${count} | ${ms.toFixed(0)} ms | ${(ms / environments).toFixed(0)} ms | ${(ms / count / environments).toFixed(2)} ms |`);
    }
    const [small, large] = [perApplication.get(10), perApplication.get(100)];
    if (small !== undefined && large !== undefined) {
      const ratio = large / small;
      // Within 25 %: per-application cost flat, so the total grows linearly in N.
      line(
        `\nPer-application time at N=100 is ${ratio.toFixed(2)}x that at N=10: ${ratio <= 1.25 ? 'linear in N' : 'NOT linear in N (grows faster than N)'}.`,
      );
    }
  } finally {
    fs.rmSync(workdir, { recursive: true, force: true });
  }
}

const PARTS = ['synth', 'gate', 'e2e'] as const;
type Part = (typeof PARTS)[number];
/** What a bench without `--only` measures: the e2e takes minutes and needs the toolchain. */
const DEFAULT_PARTS: readonly Part[] = ['synth', 'gate'];

/** The e2e run `--only e2e` times: the environment every clone can converge (its Secrets re-encrypted for a throwaway key). */
const E2E_BENCH_ENVIRONMENT = 'local';

/**
 * One `npm run e2e -- --env local` from start to report, timed from outside, with the phases
 * its report gives (the `phases` of the e2e report, e2e/run-types.ts, read as JSON: product code
 * never imports the harness). Its own output goes to stderr as progress.
 */
async function benchE2e(context: CommandContext): Promise<void> {
  const { root, out, err } = context;
  const line = (text: string) => out(`${text}\n`);
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-bench-e2e-'));
  try {
    const reportFile = path.join(workdir, 'report.json');
    progress(context, `npm run e2e -- --env ${E2E_BENCH_ENVIRONMENT} (minutes; its output follows on stderr)`);
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'run.cjs'), 'e2e', '--env', E2E_BENCH_ENVIRONMENT, '--report', reportFile], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => err(text));
    }
    const result = await new Promise<{ status: number | null }>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (status) => resolve({ status }));
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (!fs.existsSync(reportFile)) throw new RefusedError(`npm run e2e -- --env ${E2E_BENCH_ENVIRONMENT} wrote no report (exit ${result.status}): see its output above`);
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as { phases?: ReportPhase[]; passed?: boolean };
    if (report.passed !== true) throw new RefusedError(`npm run e2e -- --env ${E2E_BENCH_ENVIRONMENT} did not pass (exit ${result.status}): its phases would time a failure`);
    line(`The e2e of ${E2E_BENCH_ENVIRONMENT} (npm run e2e -- --env ${E2E_BENCH_ENVIRONMENT}, one run, ${os.cpus().length} cores, node ${process.version})`);
    line('| phase | ended at | took |');
    line('|---|---:|---:|');
    for (const row of phaseRows(report.phases ?? [])) line(row);
    line(`| start to report, timed from outside (node's start and the build check included) | ${seconds.toFixed(1)} s | |`);
    line(`| target (warm) | ${E2E_TARGET_SECONDS} s | |`);
    line('');
  } finally {
    fs.rmSync(workdir, { recursive: true, force: true });
  }
}

/** A phase of the e2e's report: when it ended and, for one that ran beside the others, when it started (seconds from the start). */
export interface ReportPhase {
  readonly phase: string;
  readonly seconds: number;
  readonly since?: number;
}

/**
 * The table rows of the e2e's phases: when each ended and how long it took, from the end of
 * the phase before it or, for one that ran beside the others, from its own start (which then
 * moves no other phase's start).
 */
export function phaseRows(phases: readonly ReportPhase[]): string[] {
  let previous = 0;
  return phases.map(({ phase, seconds, since }) => {
    const took = seconds - (since ?? previous);
    if (since === undefined) previous = seconds;
    return `| ${phase}${since === undefined ? '' : ` (beside, from ${since.toFixed(1)} s)`} | ${seconds.toFixed(1)} s | ${took.toFixed(1)} s |`;
  });
}

/** A warm e2e of local's target, start to report. */
export const E2E_TARGET_SECONDS = 75;

/** The parts `--only` names (a comma list), or the default ones. */
export function benchParts(only: string | undefined): readonly Part[] {
  if (only === undefined) return DEFAULT_PARTS;
  const parts = only.split(',');
  const unknown = parts.filter((part) => !(PARTS as readonly string[]).includes(part));
  if (unknown.length > 0) throw new UsageError(`--only "${only}" must name parts among ${PARTS.join(', ')}, separated by ","`);
  return PARTS.filter((part) => parts.includes(part));
}

const OPTIONS = { runs: { type: 'string' }, scale: { type: 'string' }, only: { type: 'string' }, copies: { type: 'string' } } as const;

/** `npm run bench`: synth and the gate against their floors, printed as the tables of docs/performance.md. */
export const BENCH: CommandDefinition<typeof OPTIONS> = {
  name: 'bench',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    const parts = benchParts(values.only);
    const [runs] = positiveIntegers(values.runs ?? '7', '--runs') as [number];
    const [copies] = positiveIntegers(values.copies ?? '100', '--copies') as [number];
    if (parts.includes('synth')) benchSynth(values, context);
    if (parts.includes('gate')) {
      const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-bench-gate-'));
      try {
        benchGate({ root: context.root, runs, copies, largeRuns: 1, workdir, log: (line) => context.out(`${line}\n`) });
      } finally {
        fs.rmSync(workdir, { recursive: true, force: true });
      }
    }
    if (parts.includes('e2e')) await benchE2e(context);
    return 0;
  },
};
