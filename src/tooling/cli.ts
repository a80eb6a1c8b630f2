import * as path from 'node:path';
import { ConfigError } from '../errors';

/**
 * A mistake in what the person asked for (an unknown environment, a bad tag, a missing
 * variable): printed as one line without a stack trace.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Exit code of a command that could not do what it was asked (bad input, git failure). */
export const EXIT_ERROR = 2;

function isParseArgsError(error: unknown): error is Error {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

/**
 * The project a compiled command belongs to: `build/cli/<name>.js` sits two folders
 * below it, so a copy of the project (tests use one) works on itself.
 */
export function projectRoot(): string {
  return path.resolve(__dirname, '..', '..');
}

/**
 * Run a command's `main`, turning the errors a person can fix (usage, configuration)
 * into a message on stderr and exit code 2, and anything else into a crash as usual.
 */
export function runCommand(name: string, usage: string, main: (argv: readonly string[]) => Promise<number> | number): void {
  Promise.resolve()
    .then(() => main(process.argv.slice(2)))
    .then(
      (code) => {
        process.exitCode = code;
      },
      (error: unknown) => {
        if (isParseArgsError(error)) {
          console.error(`${name}: ${error.message}`);
          console.error(usage);
        } else if (error instanceof UsageError || error instanceof ConfigError) {
          console.error(`${name}: ${error.message}`);
        } else {
          throw error;
        }
        process.exitCode = EXIT_ERROR;
      },
    );
}
