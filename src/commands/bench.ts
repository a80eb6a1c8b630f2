import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Environment, loadEnvironments } from '../environments';
import { benchGate } from '../bench/gate';
import { KUBECONFORM_BUILD_COMMAND } from '../bench/kubeconform';
import { scaledTexts } from '../bench/scale';
import { readValuesTexts } from '../environments/values-file';
import { renderEnvironment } from '../synth';
import { RefusedError, UsageError } from '../base/errors';
import { type CommandContext, type CommandDefinition } from '../tooling/cli';

/**
 * `npm run bench`: the full synth of the four environments against the floor (node
 * loading cdk8s-plus-28 and synthesizing one Deployment), run alternately in one session
 * so both see the same machine; then synth time for N synthetic applications per
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

/** Load `texts` through the real loader and render every environment (all its charts) into `outdir`. */
function renderScaled(texts: ReadonlyMap<string, string>, outdir: string): Environment[] {
  const environments = loadEnvironments(texts);
  for (const environment of environments) renderEnvironment(environment, path.join(outdir, environment.name));
  return environments;
}

const USAGE = `usage: npm run bench [-- [--runs <n>] [--scale <n,n,...>] [--only synth|gate] [--copies <n>]]

Measures the full synth against the floor (node loading cdk8s-plus-28 and synthesizing one
Deployment), alternately, then the load and render time of N applications per environment.
Then the gate (npm run validate) against its floor (node reading and parsing the same YAML)
and kubeconform (built by ${KUBECONFORM_BUILD_COMMAND}) on the same objects:
the committed dist/ and <copies> renamed copies of it.
  --runs   alternating runs of each (default 7)
  --scale  application counts per environment (default 1,10,100)
  --only   synth or gate: only that part (default both)
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
    const floor: Measurement[] = [];
    const synth: Measurement[] = [];
    for (let run = 0; run < runs; run++) {
      progress(context, `synth against the floor: run ${run + 1} of ${runs}`);
      floor.push(measureProcess(root, [path.join(root, 'scripts', 'bench-floor.cjs'), path.join(workdir, `floor-${run}`)]));
      synth.push(measureProcess(root, [path.join(root, 'scripts', 'run.cjs'), 'synth', '--outdir', path.join(workdir, `synth-${run}`)]));
    }
    const floorMs = median(floor.map((m) => m.milliseconds));
    const synthMs = median(synth.map((m) => m.milliseconds));
    line(`Full synth vs floor (median of ${runs} alternating runs, ${os.cpus().length} cores, node ${process.version})`);
    line('| what | median | peak RSS |');
    line('|---|---:|---:|');
    line(`| floor: cdk8s-plus-28, one Deployment | ${floorMs.toFixed(0)} ms | ${(median(floor.map((m) => m.peakKilobytes)) / 1024).toFixed(0)} MiB |`);
    line(`| synth, 4 environments (node scripts/run.cjs synth, what npm run synth runs) | ${synthMs.toFixed(0)} ms | ${(median(synth.map((m) => m.peakKilobytes)) / 1024).toFixed(0)} MiB |`);
    line(`| ratio synth / floor | ${(synthMs / floorMs).toFixed(2)}x | target <= 1.5x |`);
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

const PARTS = ['synth', 'gate'] as const;

const OPTIONS = { runs: { type: 'string' }, scale: { type: 'string' }, only: { type: 'string' }, copies: { type: 'string' } } as const;

/** `npm run bench`: synth and the gate against their floors, printed as the tables of docs/performance.md. */
export const BENCH: CommandDefinition<typeof OPTIONS> = {
  name: 'bench',
  usage: USAGE,
  options: OPTIONS,
  run(values, _positionals, context) {
    const only = values.only as (typeof PARTS)[number] | undefined;
    if (only !== undefined && !PARTS.includes(only)) throw new UsageError(`--only "${values.only}" must be one of ${PARTS.join(', ')}`);
    const [runs] = positiveIntegers(values.runs ?? '7', '--runs') as [number];
    const [copies] = positiveIntegers(values.copies ?? '100', '--copies') as [number];
    if (only !== 'gate') benchSynth(values, context);
    if (only !== 'synth') {
      const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-bench-gate-'));
      try {
        benchGate({ root: context.root, runs, copies, largeRuns: 1, workdir, log: (line) => context.out(`${line}\n`) });
      } finally {
        fs.rmSync(workdir, { recursive: true, force: true });
      }
    }
    return 0;
  },
};
