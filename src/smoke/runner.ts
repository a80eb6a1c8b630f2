/**
 * 4.1: an ordered list of steps, each with its own timeout; the first failure stops the
 * run and names the step. The steps themselves are injected, so tests drive the runner
 * with a local server and fakes, and the CLI with the real clients.
 */

/** One step of a smoke test. */
export interface SmokeStep {
  /** Short name printed in reports and failures, e.g. `health`. */
  readonly name: string;
  /** What it does, e.g. `GET /health`. */
  readonly description: string;
  /** The step fails when it has not finished after this many milliseconds. */
  readonly timeoutMs: number;
  /**
   * Run the step; resolve with a short detail (`HTTP 200`), reject with the reason.
   * `signal` aborts when the timeout passes, so the step can close its connections.
   */
  run(signal: AbortSignal): Promise<string>;
}

export type StepStatus = 'passed' | 'failed' | 'skipped';

export interface StepOutcome {
  readonly name: string;
  readonly description: string;
  readonly status: StepStatus;
  /** The step's detail when it passed, the reason when it failed. */
  readonly detail: string;
  readonly durationMs: number;
}

export interface SmokeResult {
  readonly passed: boolean;
  /** Every step, in order; those after a failure are `skipped`. */
  readonly steps: readonly StepOutcome[];
  /** The first failed step, if any. */
  readonly failed?: StepOutcome;
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(messageOf).join('; ');
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message || error.name}${cause && !error.message.includes(cause.slice(2)) ? cause : ''}`;
  }
  return String(error);
}

/** Run `step`, failing it when it takes longer than its timeout. */
async function runWithTimeout(step: SmokeStep): Promise<string> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`timed out after ${step.timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, step.timeoutMs);
  });
  try {
    return await Promise.race([step.run(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RunOptions {
  /**
   * Whether a failure stops the run (4.1). Post-deployment validation (4.2) runs every
   * check and reports them all.
   * @default true
   */
  readonly stopAtFirstFailure?: boolean;
}

/** Run the steps in order; `report` receives each outcome as soon as it is known. */
export async function runSmoke(
  steps: readonly SmokeStep[],
  report: (outcome: StepOutcome) => void = () => {},
  options: RunOptions = {},
): Promise<SmokeResult> {
  const stopAtFirstFailure = options.stopAtFirstFailure ?? true;
  const outcomes: StepOutcome[] = [];
  let failed: StepOutcome | undefined;
  for (const step of steps) {
    let outcome: StepOutcome;
    if (failed !== undefined && stopAtFirstFailure) {
      outcome = { name: step.name, description: step.description, status: 'skipped', detail: `not run: step "${failed.name}" failed`, durationMs: 0 };
    } else {
      const started = performance.now();
      try {
        const detail = await runWithTimeout(step);
        outcome = { name: step.name, description: step.description, status: 'passed', detail, durationMs: Math.round(performance.now() - started) };
      } catch (error) {
        outcome = { name: step.name, description: step.description, status: 'failed', detail: messageOf(error), durationMs: Math.round(performance.now() - started) };
        failed ??= outcome;
      }
    }
    outcomes.push(outcome);
    report(outcome);
  }
  return failed === undefined ? { passed: true, steps: outcomes } : { passed: false, steps: outcomes, failed };
}

/** One report line per outcome: `PASS health  GET /health: HTTP 200 (12 ms)`. */
export function formatOutcome(outcome: StepOutcome): string {
  const label = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP' }[outcome.status];
  const time = outcome.status === 'skipped' ? '' : ` (${outcome.durationMs} ms)`;
  return `${label} ${outcome.name}: ${outcome.description}: ${outcome.detail}${time}`;
}
