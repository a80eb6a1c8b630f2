import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, exitCodeOf, isArgumentError, UsageError } from '../errors';

/** The options of a command, as `node:util` parseArgs reads them. */
type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'] & {};

/** What a command receives: its parsed options (`--help` already handled) and positionals. */
export type CommandValues<O extends Options> = ReturnType<
  typeof parseArgs<{ options: O & { help: { type: 'boolean'; short: 'h' } }; strict: true; allowPositionals: true }>
>['values'];

export interface CommandDefinition<O extends Options> {
  /** The command's name, the first word of every message it prints (`release: ...`). */
  readonly name: string;
  /** Usage text, printed on `--help` (exit 0) and after a usage error (exit 2). */
  readonly usage: string;
  /** Its options; `--help`/`-h` is added to every command. */
  readonly options: O;
  /**
   * Whether words without `--` are accepted (a subcommand).
   * @default false
   */
  readonly positionals?: boolean;
  /** The work; returns the exit code. Throws UsageError (2), ConfigError or RefusedError (1). */
  readonly run: (values: CommandValues<O>, positionals: readonly string[]) => number | Promise<number>;
  /**
   * A line printed after any error, e.g. `dist/ was left unchanged.`
   * @default - nothing
   */
  readonly afterError?: string;
}

/** Report an error the way every command does: a message, never a stack trace. */
export function reportError(name: string, usage: string, error: unknown, afterError?: string): number {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`${name}: ${message}`);
  if (error instanceof UsageError || isArgumentError(error)) console.error(usage);
  else if (!(error instanceof ConfigError) && error instanceof Error && process.env.PLATFORM_GITOPS_DEBUG) console.error(error.stack);
  if (afterError !== undefined) console.error(afterError);
  return exitCodeOf(error);
}

/**
 * The one way an entry point is defined: parse the command line (strict, `--help`),
 * run, and turn every error into one message and the exit code of the convention in
 * src/errors.ts (2 usage, 1 refused or failed).
 */
export function runCommand<O extends Options>(definition: CommandDefinition<O>, argv: readonly string[] = process.argv.slice(2)): void {
  const { name, usage } = definition;
  Promise.resolve()
    .then(() => {
      const { values, positionals } = parseArgs({
        args: [...argv],
        options: { ...definition.options, help: { type: 'boolean', short: 'h' } },
        strict: true,
        allowPositionals: definition.positionals ?? false,
      });
      if ((values as { help?: boolean }).help) {
        console.log(usage);
        return 0;
      }
      return definition.run(values as CommandValues<O>, positionals);
    })
    .then(
      (code) => {
        process.exitCode = code;
      },
      (error: unknown) => {
        process.exitCode = reportError(name, usage, error, definition.afterError);
      },
    );
}

/** A required option: its value, or a UsageError naming it. */
export function required(value: string | undefined, option: string): string {
  if (value === undefined || value === '') throw new UsageError(`${option} is required`);
  return value;
}

/**
 * The project a command or module belongs to: the nearest folder above this file holding
 * `package.json` and `src/environments`. Works from src/ (tests), from build/ (compiled
 * commands) and in a copy of the project.
 */
export function projectRoot(start: string = __dirname): string {
  let dir = path.resolve(start);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'src', 'environments'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(__dirname, '..', '..');
    dir = parent;
  }
}
