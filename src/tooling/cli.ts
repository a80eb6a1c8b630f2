import { parseArgs } from 'node:util';
import { ConfigError, EXIT_REFUSED, exitCodeOf, isArgumentError, UsageError } from '../base/errors';
import { printable, redactCredentials } from '../base/printable';
import { projectRoot } from '../base/project-root';

/** The options of a command, as `node:util` parseArgs reads them. */
export type CommandOptions = NonNullable<Parameters<typeof parseArgs>[0]>['options'] & {};
type Options = CommandOptions;

/** What a command receives: its parsed options (`--help` already handled) and positionals. */
export type CommandValues<O extends Options> = ReturnType<
  typeof parseArgs<{ options: O & { help: { type: 'boolean'; short: 'h' } }; strict: true; allowPositionals: true }>
>['values'];

/**
 * Where a command works and prints: the project and the process's streams when run from
 * the command line (`runCommandLine`), a project copy and buffers when a test calls it in
 * process. A command reads and writes the project and prints through its context only.
 */
export interface CommandContext {
  /** The project the command reads and writes (values files, dist/, git history). */
  readonly root: string;
  /** The environment variables the command reads (credentials, tool paths). */
  readonly env: NodeJS.ProcessEnv;
  /** Print to standard output (the text as given: add the newline). */
  readonly out: (text: string) => void;
  /** Print to standard error (the text as given: add the newline). */
  readonly err: (text: string) => void;
}

/** The context of a command run from the command line. */
export function processContext(): CommandContext {
  return { root: projectRoot(), env: process.env, out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };
}

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
  readonly run: (values: CommandValues<O>, positionals: readonly string[], context: CommandContext) => number | Promise<number>;
  /**
   * A line printed after any error, e.g. `dist/ was left unchanged.`
   * @default - nothing
   */
  readonly afterError?: string;
  /**
   * The exit code of a refused or failed run, where 1 means something else for this command
   * (`diff` exits 1 for "changes", so its errors exit 2).
   * @default 1 (EXIT_REFUSED); a usage error exits 2 whatever this says
   */
  readonly refusedExitCode?: number;
}

/**
 * A command whose first argument names one of its subcommands (`npm run secrets -- init
 * local`). Each subcommand is a definition with options of its own, so an option that
 * belongs to another one is refused as unknown, with that subcommand's usage.
 */
export interface CommandGroup {
  /** The command's name, the first word of every message it prints (its subcommands' too). */
  readonly name: string;
  /** Usage of the whole command: printed on `--help` (exit 0) and for a missing or unknown subcommand (exit 2). */
  readonly usage: string;
  /** The subcommands by the word that names them, in the order the usage lists them. */
  readonly subcommands: Readonly<Record<string, CommandDefinition<any>>>;
}

/** What `executeCommand` runs: a command, or a command made of subcommands. */
export type Command = CommandDefinition<any> | CommandGroup;

/** Report an error the way every command does: a message, never a stack trace. */
export function reportError(name: string, usage: string, error: unknown, afterError?: string, err: (text: string) => void = (text) => process.stderr.write(text)): number {
  const message = error instanceof Error ? error.message : String(error);
  err(`${name}: ${printable(redactCredentials(message))}\n`);
  if (error instanceof UsageError || isArgumentError(error)) err(`${usage}\n`);
  else if (!(error instanceof ConfigError) && error instanceof Error && process.env.PLATFORM_GITOPS_DEBUG) err(`${error.stack}\n`);
  if (afterError !== undefined) err(`${afterError}\n`);
  return exitCodeOf(error);
}

/** A command line as a command receives it. */
export interface ParsedCommandLine<O extends Options> {
  /** The options' values, `--help` included. */
  readonly values: CommandValues<O> & { readonly help?: boolean };
  /** The words without `--` (a subcommand, an environment). */
  readonly positionals: readonly string[];
}

/**
 * `--timeout -5` as `--timeout=-5`: parseArgs takes a value that starts with a dash for an
 * option and refuses it as "ambiguous"; joined, the command's own rule says what is wrong with it.
 */
function negativeValuesJoined(argv: readonly string[], options: Options): string[] {
  const args: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index]!;
    const next = argv[index + 1];
    const option = word.startsWith('--') && !word.includes('=') ? options[word.slice(2)] : undefined;
    if (option?.type === 'string' && next !== undefined && /^-\.?\d/.test(next)) {
      args.push(`${word}=${next}`);
      index++;
    } else args.push(word);
  }
  return args;
}

/**
 * Read `argv` with the definition's options the way every command does: strict (an unknown
 * option, a missing value or an unexpected word is an error), `--help`/`-h` added, and each
 * option at most once unless it is declared `multiple` (parseArgs alone would keep the last
 * of `--env testing --env staging`). Throws parseArgs' TypeError or a UsageError.
 */
export function parseCommandLine<O extends Options>(definition: Pick<CommandDefinition<O>, 'options' | 'positionals'>, argv: readonly string[]): ParsedCommandLine<O> {
  const options: Options = { ...definition.options, help: { type: 'boolean', short: 'h' } };
  const { values, positionals, tokens } = parseArgs({
    args: negativeValuesJoined(argv, options),
    options,
    strict: true,
    allowPositionals: definition.positionals ?? false,
    tokens: true,
  });
  const given = new Map<string, (string | undefined)[]>();
  for (const token of tokens) {
    if (token.kind === 'option' && options[token.name]?.multiple !== true) given.set(token.name, [...(given.get(token.name) ?? []), token.value]);
  }
  for (const [name, occurrences] of given) {
    if (occurrences.length < 2 || name === 'help') continue;
    const shown = options[name]!.type === 'string' ? ` (${occurrences.map((value) => JSON.stringify(value)).join(', ')})` : '';
    throw new UsageError(`--${name} is given more than once${shown}; give it once`);
  }
  return { values: values as ParsedCommandLine<O>['values'], positionals };
}

/**
 * The one way a command runs: parse the command line (`parseCommandLine`: strict, `--help`,
 * no repeated option), run, and turn every error into one message and the exit code of the
 * convention in src/base/errors.ts (2 usage, 1 refused or failed). Resolves to the exit code; never rejects.
 */
export function executeCommand<O extends Options>(definition: CommandDefinition<O> | CommandGroup, argv: readonly string[], context: CommandContext): Promise<number> {
  if ('subcommands' in definition) return executeSubcommand(definition, argv, context);
  const { name, usage } = definition;
  return Promise.resolve()
    .then(() => {
      const { values, positionals } = parseCommandLine(definition, argv);
      if (values.help) {
        context.out(`${usage}\n`);
        return 0;
      }
      return definition.run(values, positionals, context);
    })
    .catch((error: unknown) => {
      const reported = reportError(name, usage, error, definition.afterError, context.err);
      const code = reported === EXIT_REFUSED ? (definition.refusedExitCode ?? EXIT_REFUSED) : reported;
      // Whoever asked for JSON reads stdout as one document: the failure is one too.
      if (definition.options['output'] !== undefined && jsonRequested(argv)) {
        context.out(`${JSON.stringify({ command: name, passed: false, exitCode: code, error: redactCredentials(error instanceof Error ? error.message : String(error)) }, null, 2)}\n`);
      }
      return code;
    });
}

/** Whether the command line asks for `--output json` (read from the words: it may not have parsed). */
function jsonRequested(argv: readonly string[]): boolean {
  return argv.some((word, index) => word === '--output=json' || (word === '--output' && argv[index + 1] === 'json'));
}

/** Run the subcommand of `group` the first word of `argv` names on the rest of `argv`; `--help` alone prints the group's usage. */
function executeSubcommand(group: CommandGroup, argv: readonly string[], context: CommandContext): Promise<number> {
  const [word, ...rest] = argv;
  if (word === '--help' || word === '-h') {
    context.out(`${group.usage}\n`);
    return Promise.resolve(0);
  }
  if (word !== undefined && !word.startsWith('-') && Object.hasOwn(group.subcommands, word)) return executeCommand(group.subcommands[word]!, rest, context);
  const names = Object.keys(group.subcommands);
  const choices = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names.join('');
  const problem =
    word === undefined
      ? `a command is required: ${choices}`
      : word.startsWith('-')
        ? `a command is required before any option: ${choices}`
        : `unknown command "${word}"; choose ${choices}`;
  return Promise.resolve(reportError(group.name, group.usage, new UsageError(problem), undefined, context.err));
}

/** A command of a bundle's table: its line in the list of commands, and its definition. */
export interface CommandEntry {
  /** What the command does, in one line (the list printed for a missing or unknown command). */
  readonly summary: string;
  /**
   * Its definition. Loaded when the command runs, so a bundle initializes the modules of the
   * command it runs and no other (smoke's database and broker clients are not synth's cost).
   */
  readonly load: () => Command | Promise<Command>;
}

/** A bundle's commands by name: the first word after `node scripts/run.cjs` (`npm run <name>` runs it). */
export type CommandTable = Readonly<Record<string, CommandEntry>>;

/** The list of commands, printed for a missing or unknown one. */
export function commandList(table: CommandTable): string {
  const width = Math.max(...Object.keys(table).map((name) => name.length));
  const lines = Object.entries(table).map(([name, entry]) => `  ${name.padEnd(width)}  ${entry.summary}`);
  return `usage: npm run <command> [-- <options>]   (node scripts/run.cjs <command> [<options>])\n\nCommands:\n${lines.join('\n')}\n\nnpm run <command> -- --help prints a command's usage.`;
}

/**
 * Run the command the first word of `argv` names, in `table`, on the rest of `argv`
 * (`executeCommand`). A missing or unknown command is a usage error (exit 2) listing them.
 */
export function executeCommandLine(table: CommandTable, argv: readonly string[], context: CommandContext): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || !Object.hasOwn(table, name)) {
    context.err(`${name === undefined ? 'a command is required' : `unknown command "${name}"`}\n${commandList(table)}\n`);
    return Promise.resolve(2);
  }
  return Promise.resolve()
    .then(() => table[name]!.load())
    .then(
      (definition) => executeCommand(definition, args, context),
      (error: unknown) => reportError(name, '', error, undefined, context.err),
    );
}

/** A bundle's entry point (src/main.ts, e2e/cli.ts): run the command named by this process's arguments on its streams. */
export function runCommandLine(table: CommandTable, argv: readonly string[] = process.argv.slice(2)): void {
  void executeCommandLine(table, argv, processContext()).then((code) => {
    process.exitCode = code;
  });
}

/** A required option: its value, or a UsageError naming it. */
export function required(value: string | undefined, option: string): string {
  if (value === undefined || value === '') throw new UsageError(`${option} is required`);
  return value;
}

/** A number of seconds given on the command line: a whole number, at least 1; `fallback` when not given. */
export function seconds(value: string | undefined, option: string, fallback: number): number;
export function seconds(value: string | undefined, option: string): number | undefined;
export function seconds(value: string | undefined, option: string, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new UsageError(`${option} "${value}" must be a whole number of seconds, at least 1`);
  return parsed;
}
