import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2E } from '../e2e/command';
import { COMMANDS } from '../src/commands';
import { type Command, parseCommandLine } from '../src/tooling/cli';
import { ROOT } from './support';

/**
 * Every `npm run <script> ...` the documentation shows, in a fenced code block or in inline
 * code, runs as written: the script exists, and for a command of scripts/run.cjs the words
 * after `--` parse with that command's options exactly as `executeCommand` parses them
 * (strict, each option once). Placeholders (`<env>`, `vX.Y.Z`) stand for values.
 *
 * A synopsis is read as one: `[...]` is optional, `a|b` (or ` | ` between parts) offers
 * alternatives and `...` repeats; every combination of the optional parts and alternatives
 * must parse, so `npm run diff [-- --base <ref>] [-- --format markdown]` fails (with both
 * parts, the second `--` makes `--format` a positional) where
 * `npm run diff [-- [--base <ref>] [--format markdown]]` passes. `[options]` stands for the
 * options a usage lists below it. A command shown on purpose in a form that does not run
 * says so beside it: NOT_RUNNABLE in the same line.
 */
const NOT_RUNNABLE = '(not runnable as written)';

/** README.md and every guide in docs/ (the platform contract is the requirement, not a guide to commands). */
const DOCUMENTS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((file) => file.endsWith('.md') && file !== 'platform-contract.md').map((file) => `docs/${file}`)];

/** One `npm run` the documentation shows: where, and its text from `npm run` on. */
interface DocumentedCommand {
  readonly where: string;
  readonly text: string;
  /** The documentation line holding it, for the NOT_RUNNABLE marker. */
  readonly line: string;
}

/** The `npm run ...` commands in `text` (a code line or an inline code span), each up to the shell's next operator or comment. */
function commandsIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/\bnpm run\b/g)) {
    let command = text.slice(match.index);
    const end = command.search(/\s#|&&|\|\||;/);
    if (end >= 0) command = command.slice(0, end);
    // A command inside parentheses of prose or a comment ends at the closing one.
    const opened = (command.match(/\(/g) ?? []).length;
    let closed = 0;
    for (let i = 0; i < command.length; i++) {
      if (command[i] === ')' && ++closed > opened) {
        command = command.slice(0, i);
        break;
      }
    }
    found.push(command.trim());
  }
  return found;
}

/** Every `npm run` of a Markdown file: in fenced code blocks, line by line, and in inline code spans. */
function documentedCommands(file: string): DocumentedCommand[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const commands: DocumentedCommand[] = [];
  let fence: string | undefined;
  // Prose (outside fences), one paragraph at a time: an inline code span may cross a line break.
  let paragraph: { start: number; lines: string[] } | undefined;
  const flush = () => {
    if (paragraph === undefined) return;
    const text = paragraph.lines.join('\n');
    for (const span of text.matchAll(/(`+)([\s\S]*?[^`])\1(?!`)/g)) {
      const at = paragraph.start + text.slice(0, span.index).split('\n').length - 1;
      const content = span[2]!.replace(/\n/g, ' ').replace(/\\\|/g, '|');
      for (const command of commandsIn(content)) commands.push({ where: `${file}:${at + 1}`, text: command, line: lines[at]! });
    }
    paragraph = undefined;
  };
  lines.forEach((line, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      else for (const command of commandsIn(line)) commands.push({ where: `${file}:${index + 1}`, text: command, line });
      return;
    }
    if (marker !== undefined) {
      flush();
      fence = marker;
      return;
    }
    if (line.trim() === '') flush();
    else (paragraph ??= { start: index, lines: [] }).lines.push(line);
  });
  flush();
  return commands;
}

/** A synopsis, parsed: words, optional parts and alternatives. */
type Synopsis = { readonly word: string } | { readonly optional: Synopsis } | { readonly choice: readonly (readonly Synopsis[])[] };

/** Words of a command line: `[` and `]` on their own, a `<placeholder>` (spaces and all) inside its word, quotes removed. */
function tokens(text: string): string[] {
  const result: string[] = [];
  let word = '';
  const end = () => {
    if (word !== '') result.push(word);
    word = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (/\s/.test(c)) end();
    else if (c === '[' || c === ']') {
      end();
      result.push(c);
    } else if (c === '<' || c === "'" || c === '"') {
      const close = text.indexOf(c === '<' ? '>' : c, i + 1);
      if (close < 0) throw new Error(`unclosed ${c} in: ${text}`);
      word += c === '<' ? text.slice(i, close + 1) : text.slice(i + 1, close);
      i = close;
    } else word += c;
  }
  end();
  return result;
}

/** Parse `words` from `at` up to the closing `]` (or the end): parts separated by a lone `|` are alternatives. */
function parseSynopsis(words: readonly string[], at: { i: number }, nested: boolean): Synopsis {
  const alternatives: Synopsis[][] = [[]];
  while (at.i < words.length) {
    const word = words[at.i++]!;
    if (word === ']') {
      if (!nested) throw new Error(`an unopened ] in: ${words.join(' ')}`);
      return { choice: alternatives };
    }
    if (word === '|') alternatives.push([]);
    else if (word === '[') alternatives.at(-1)!.push({ optional: parseSynopsis(words, at, true) });
    else alternatives.at(-1)!.push({ word });
  }
  if (nested) throw new Error(`an unclosed [ in: ${words.join(' ')}`);
  return { choice: alternatives };
}

/** Every command line a synopsis stands for. */
function expand(synopsis: Synopsis): string[][] {
  if ('optional' in synopsis) return [[], ...expand(synopsis.optional)];
  if ('choice' in synopsis) {
    return synopsis.choice.flatMap((sequence) =>
      sequence.reduce<string[][]>((lines, part) => lines.flatMap((line) => expand(part).map((rest) => [...line, ...rest])), [[]]),
    );
  }
  const word = synopsis.word.replace(/\.\.\.$/, '');
  if (word === '') return [[]];
  // `a|b` outside a placeholder: one line per alternative.
  const alternatives = word.includes('<') ? [word] : word.split('|');
  return alternatives.map((alternative) => [alternative]);
}

/** What is wrong with one command line, `args` as the command receives them; undefined when it parses. */
function problemOf(command: Command, args: readonly string[]): string | undefined {
  let definition = command;
  let rest = args;
  if ('subcommands' in command) {
    const [word, ...others] = args;
    // `<command> [options]`: the usage of the whole group, each subcommand's own is read too.
    if (word?.startsWith('<')) return undefined;
    if (word === undefined || !Object.hasOwn(command.subcommands, word)) return `"${word ?? ''}" is not a subcommand of ${command.name} (${Object.keys(command.subcommands).join(', ')})`;
    definition = command.subcommands[word]!;
    rest = others;
  }
  if ('subcommands' in definition) return 'a subcommand of a subcommand';
  try {
    parseCommandLine(definition, rest);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The problems of a documented command `text` (from `npm run` on), given the commands by name. */
function problemsOf(text: string, scripts: Readonly<Record<string, string>>, commands: ReadonlyMap<string, Command>): string[] {
  const [npm, run, script, ...words] = tokens(text);
  if (npm !== 'npm' || run !== 'run' || script === undefined) return ['no script named'];
  // `npm run <command>`: any of them, as prose names the convention.
  if (script.startsWith('<')) return [];
  if (!Object.hasOwn(scripts, script)) return [`package.json has no script "${script}"`];
  const command = commands.get(script);
  const anyOptions = /\[options\]/.test(text);
  const lines = expand(parseSynopsis(words, { i: 0 }, false)).map((line) => line.filter((word) => word !== 'options' || !anyOptions));
  const problems = new Set<string>();
  for (const line of lines) {
    const separator = line.indexOf('--');
    const before = separator < 0 ? line : line.slice(0, separator);
    if (before.length > 0) problems.add(`${before.join(' ')}: arguments before \`--\` are npm's, not the script's`);
    const args = separator < 0 ? [] : line.slice(separator + 1);
    if (command === undefined) {
      if (args.length > 0) problems.add(`"${script}" (${scripts[script]}) is not a command of scripts/run.cjs; this test reads no options of it`);
      continue;
    }
    const problem = problemOf(command, args);
    if (problem !== undefined) problems.add(`npm run ${script} -- ${args.join(' ')}: ${problem.split('\n')[0]}`);
  }
  return [...problems];
}

async function loadCommands(): Promise<Map<string, Command>> {
  const commands = new Map<string, Command>(await Promise.all(Object.entries(COMMANDS).map(async ([name, entry]) => [name, await entry.load()] as const)));
  commands.set('e2e', E2E);
  return commands;
}

const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('every command the README and docs/ show', () => {
  const documented = DOCUMENTS.flatMap(documentedCommands);

  it('is found: the README and each guide show their commands', () => {
    for (const file of DOCUMENTS) expect(documented.some((command) => command.where.startsWith(`${file}:`)), file).toBe(true);
    // One of each kind of place: a fenced block, inline code in prose, a table cell, a comment.
    const texts = documented.map((command) => command.text);
    expect(texts).toContain('npm run synth');
    expect(texts).toContain('npm run synth -- --check');
    expect(texts).toContain('npm run secrets -- scaffold|check|missing|scan');
    expect(texts).toContain('npm run promote -- --from testing --to staging');
  });

  it('runs as written: its script exists and its arguments parse with the command options', async () => {
    const commands = await loadCommands();
    const problems = documented.flatMap(({ where, text, line }) => {
      const found = problemsOf(text, scripts, commands);
      if (line.includes(NOT_RUNNABLE)) return found.length > 0 ? [] : [`${where}: ${text}: runs as written; remove "${NOT_RUNNABLE}"`];
      return found.map((problem) => `${where}: ${text}: ${problem}`);
    });
    expect(problems).toEqual([]);
  });
});

describe("every command's usage", () => {
  it('runs as written, read the same way: its synopsis lines, up to the first blank line', async () => {
    const commands = await loadCommands();
    const usages = [...commands].flatMap(([name, command]) => [
      [name, command.usage] as const,
      ...('subcommands' in command ? Object.values(command.subcommands).map((subcommand) => [name, subcommand.usage] as const) : []),
    ]);
    const problems = usages.flatMap(([name, usage]) => {
      const synopsis = usage.split('\n\n')[0]!.split('\n');
      expect(synopsis[0], name).toMatch(new RegExp(`^usage: npm run ${name}\\b`));
      return synopsis.flatMap((line) => problemsOf(line.replace(/^usage: |^\s+/, ''), scripts, commands).map((problem) => `${name}: ${line}: ${problem}`));
    });
    expect(problems).toEqual([]);
  });
});

describe('how the test reads a synopsis', () => {
  const commands = new Map<string, Command>([['diff', { name: 'diff', usage: '', options: { base: { type: 'string' }, format: { type: 'string' } }, run: () => 0 }]]);
  const diffScripts = { diff: 'node scripts/run.cjs diff' };

  it('refuses a second `--`, a repeated option, an unknown option and words before `--`', () => {
    expect(problemsOf('npm run diff [-- --base <ref>] [-- --format markdown]', diffScripts, commands)).toEqual([
      "npm run diff -- --base <ref> -- --format markdown: Unexpected argument '--format'. This command does not take positional arguments",
    ]);
    expect(problemsOf('npm run diff -- --base a --base b', diffScripts, commands)).toEqual(['npm run diff -- --base a --base b: --base is given more than once ("a", "b"); give it once']);
    expect(problemsOf('npm run diff -- --head <ref>', diffScripts, commands)[0]).toMatch(/^npm run diff -- --head <ref>: Unknown option '--head'/);
    expect(problemsOf('npm run diff --base x', diffScripts, commands)).toEqual(["--base x: arguments before `--` are npm's, not the script's"]);
    expect(problemsOf('npm run nothing', diffScripts, commands)).toEqual(['package.json has no script "nothing"']);
  });

  it('accepts every combination of a well-formed synopsis, alternatives included', () => {
    expect(problemsOf('npm run diff [-- [--base <ref>] [--format text|markdown]]', diffScripts, commands)).toEqual([]);
    expect(problemsOf('npm run diff -- --base <git ref> | -- --format x', diffScripts, commands)).toEqual([]);
    expect(expand(parseSynopsis(tokens('[-- [--a] [--b <x y>]]'), { i: 0 }, false))).toEqual([[], ['--'], ['--', '--b', '<x y>'], ['--', '--a'], ['--', '--a', '--b', '<x y>']]);
  });

  it('finds commands in code blocks, inline code across a line break, table cells and comments', () => {
    expect(commandsIn('npm ci && npm run synth   # render')).toEqual(['npm run synth']);
    expect(commandsIn('# (or --tag <previous>; or: git revert <commit>, npm run synth)')).toEqual(['npm run synth']);
    expect(commandsIn('X=1 npm run verify -- --env staging   # ACME')).toEqual(['npm run verify -- --env staging']);
  });
});
