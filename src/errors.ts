/**
 * The one error class for configuration problems. It carries every problem found, one
 * line each (`<environment>: <field path> <value> <rule>`), so a person fixes them all
 * in one round; the CLI prints them without a stack trace.
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
