/**
 * The errors a person can act on, and the exit code each gives (one convention for every
 * command): 2 for a mistake in the command line, 1 for a request that was refused or failed.
 * Each prints as its message alone, never with a stack trace.
 */

/** Exit code of a command line that cannot be read (unknown option, missing or malformed value). */
export const EXIT_USAGE = 2;
/** Exit code of a request that was refused (invalid configuration, a rule) or failed. */
export const EXIT_REFUSED = 1;

/** A mistake in what the person typed: printed with the command's usage; exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A well-formed request that a rule refuses or that failed (git, a file): exit 1. */
export class RefusedError extends Error {
  override readonly name = 'RefusedError';
}

/**
 * The one error class for configuration problems. It carries every problem found, one
 * line each (`<file>:<line>: <field path> <value> <rule>`), so a person fixes them all
 * in one round; exit 1.
 */
export class ConfigError extends Error {
  public readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`configuration is invalid:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Whether `util.parseArgs` refused the command line (unknown option, missing value). */
export function isArgumentError(error: unknown): error is TypeError {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

/** The exit code an error gives under the convention above. */
export function exitCodeOf(error: unknown): number {
  return error instanceof UsageError || isArgumentError(error) ? EXIT_USAGE : EXIT_REFUSED;
}

/**
 * A failure of the e2e run that a person reads as a finding, not a crash: a process that
 * would not start, a wait that timed out, an Application that did not converge; exit 1.
 */
export class E2eError extends Error {
  override readonly name = 'E2eError';
}

/**
 * Why a request failed to reach its server: `fetch` says only "fetch failed" and puts the
 * reason (`connect ECONNREFUSED 127.0.0.1:9093`, a timeout) in its `cause`.
 */
export function unreachableReason(error: unknown): string {
  const cause = (error as Error).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}
