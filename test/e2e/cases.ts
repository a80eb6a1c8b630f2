import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { locateToolchain } from '../../toolchain';
import type { E2eReport } from '../../e2e/harness';
import { committedObjects, ROOT } from '../support';
import { e2eProjectCopy, runE2eOn } from './e2e-copy';

// What the cluster cases share (converge.test.ts, which then runs the live operations,
// published-charts.test.ts and the broken-*.test.ts files). Each case is one whole run of a
// real control plane (Kubernetes 1.36) and a real Argo CD, built from their modules
// (toolchain), syncing a copy's committed dist/ from a git server over SSH: minutes, not
// seconds. Each file is a case or a few: npm run test:e2e runs two files at once.
export const RUN_TIMEOUT_MS = 20 * 60_000;
/**
 * The converge case's bound: one convergence and then every live operation on it (the scenario
 * grew with the production gate's paths, the restricted roles' exec checks and the upgrade
 * verbs): 690 s alone on the 2-core machine, and past 20 minutes when two other clusters ran
 * beside it (2026-12-02, docs/performance.md). A bound, not a target.
 */
export const LIVE_OPERATIONS_TIMEOUT_MS = 35 * 60_000;

const copies: string[] = [];

/** Remove the copies (and their results files) the case made: each file's afterEach. */
export function removeCopies(): void {
  for (const copy of copies.splice(0)) fs.rmSync(copy, { recursive: true, force: true });
}

/** A copy of the project to break (or not) and run the e2e on; removed by removeCopies. */
export function brokenCopy(): string {
  const copy = e2eProjectCopy();
  copies.push(copy);
  return copy;
}

/** A file beside a copy (a key, a results file), removed with the copies. */
export function besideCopy(copy: string, name: string): string {
  const file = path.join(copy, '..', `${path.basename(copy)}-${name}`);
  copies.push(file);
  return file;
}

/** The committed objects of an environment (dist/<environment>/) of one apiVersion and kind. */
export function rendered(environment: string, apiVersion: string, kind: string): any[] {
  return committedObjects(environment).filter((object) => object.apiVersion === apiVersion && object.kind === kind);
}

/** A test tool of the toolchain (promtool, amtool) run on files of `dir`: its exit code and output. */
export function tool(component: 'prometheus' | 'alertmanager', name: string, args: readonly string[], dir: string): { status: number | null; output: string } {
  const result = spawnSync(locateToolchain(ROOT).bin(component, name), [...args], { cwd: dir, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** One step of a scenario run through `--exec`: what it expected and what it got. */
export interface ScenarioStep {
  readonly name: string;
  readonly expected: number;
  readonly exitCode: number;
  readonly output: string;
  readonly stdout: string;
  /** When the step ended, in seconds from its scenario's start (the shared scenarios' steps). */
  readonly seconds?: number;
  /** How long the step took, in seconds (ops-scenario.mjs's verbs; a step run until it gave its code, all its tries). */
  readonly took?: number;
}

/** A run of scenario scripts (`execScenarios`): how the run ended, and what each script wrote, if it wrote. */
export interface ScenarioRun {
  readonly status: number | null;
  readonly report: E2eReport;
  readonly output: string;
  /** Each script's results file, read; undefined for a script that wrote none. */
  readonly written: Readonly<Record<string, { steps: ScenarioStep[] } | undefined>>;
}

/**
 * `npm run e2e -- --env local --exec` on the copy with scenario scripts of test/e2e/ run one
 * after the other (each only if the one before passed), each writing its results to a file
 * named in its variable, read at once (the copies and their files go with the test). With
 * `dryRun`, the run also dry-runs every environment beside the convergence; `env`, variables
 * the scripts read besides the run's own. Expects nothing: `scenarioResults` does.
 */
export async function execScenarios(copy: string, scenarios: Readonly<Record<string, string>>, options: { readonly dryRun?: boolean; readonly env?: Readonly<Record<string, string>> } = {}): Promise<ScenarioRun> {
  const files = Object.fromEntries(Object.keys(scenarios).map((script) => [script, besideCopy(copy, `${script}.json`)]));
  const command = Object.keys(scenarios).map((script) => `"${process.execPath}" ${path.join(ROOT, 'test', 'e2e', script)}`).join(' && ');
  const variables = { ...options.env, ...Object.fromEntries(Object.entries(scenarios).map(([script, variable]) => [variable, files[script]!])) };
  const { status, report, output } = await runE2eOn(copy, ['--env', 'local', ...(options.dryRun === true ? [] : ['--no-dry-run']), '--exec', command], variables);
  const written = Object.fromEntries(Object.entries(files).map(([script, file]) => [script, fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined]));
  return { status, report, output, written };
}

/** What each scenario of the run found: every script wrote its results, and every step of every scenario ended as expected. */
export function scenarioResults<T extends Record<string, { steps: ScenarioStep[] }>>(run: ScenarioRun): T {
  for (const [script, results] of Object.entries(run.written)) {
    expect(results, `${script} wrote no results (exit ${run.report.exec?.exitCode}):\n${run.output.slice(-6000)}`).toBeDefined();
    expect(results!.steps.filter((step) => step.exitCode !== step.expected).map((step) => `${script} ${step.name}: exit ${step.exitCode}\n${step.output.slice(-2000)}`)).toEqual([]);
  }
  expect(run.report.exec?.exitCode).toBe(0);
  return run.written as T;
}

/** `execScenarios` without the dry-run, and what each scenario found (`scenarioResults`). */
export async function runScenarios<T extends Record<string, { steps: ScenarioStep[] }>>(copy: string, scenarios: { readonly [K in keyof T]: string }): Promise<{ status: number | null; report: E2eReport; output: string; results: T }> {
  const run = await execScenarios(copy, scenarios as Record<string, string>);
  return { status: run.status, report: run.report, output: run.output, results: scenarioResults<T>(run) };
}

/** How many characters of a run's log a failed verdict shows: its last states and its summary. */
const LOG_TAIL = 20_000;

/**
 * Expects a run to have ended early the way it must (`stopped`: something no wave or retry can
 * mend; `settled`: `--settle`), its reason matching `pattern`. When it did not, the failure
 * names how long the run took and shows the end of its log, the states each Application went
 * through, so that a run in CI says why without being run again; with `focus`, every line
 * that names it before that.
 */
export function expectEnded(run: { readonly report: E2eReport; readonly output: string }, how: 'stopped' | 'settled', pattern: RegExp, focus?: string): void {
  const reason = run.report[how];
  // The lines naming `focus` (an Application) first: the rest of a long run's log can crowd its story out of the tail.
  const story = focus === undefined ? '' : `the run's lines naming ${focus}:\n${run.output.split('\n').filter((line) => line.includes(focus)).join('\n').slice(-LOG_TAIL)}\n\n`;
  expect(reason ?? `(not ${how}: the run ended after ${run.report.durationSeconds} s without it)`, `${story}the run's log ends:\n${run.output.slice(-LOG_TAIL)}`).toMatch(pattern);
}
