import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2E } from '../e2e/command';
import { COMMANDS } from '../src/commands';
import { RefusedError } from '../src/base/errors';
import { printable } from '../src/base/printable';
import { type CommandDefinition } from '../src/tooling/cli';
import { ROOT, runInProcess } from './support';

const OPTIONS = {
  env: { type: 'string' },
  check: { type: 'boolean' },
  set: { type: 'string', multiple: true },
} as const;

/** A command that prints what it was given, for the framework's parsing alone. */
const ECHO: CommandDefinition<typeof OPTIONS> = {
  name: 'echo',
  usage: 'usage: echo [--env <environment>] [--check] [--set <value>]...',
  options: OPTIONS,
  run(values, _positionals, { out }) {
    out(`${JSON.stringify(values)}\n`);
    return 0;
  },
};

describe('executeCommand: the command line', () => {
  it('takes each option once', async () => {
    const result = await runInProcess(ECHO, ['--env', 'testing', '--check', '--set', 'a', '--set', 'b']);
    expect(result).toEqual({ status: 0, stdout: '{"env":"testing","check":true,"set":["a","b"]}\n', stderr: '' });
  });

  it('refuses an option given twice, naming it and its values, with the usage (exit 2)', async () => {
    // parseArgs alone keeps the last value: `--env testing --env staging` would act on staging.
    const twice = await runInProcess(ECHO, ['--env', 'testing', '--env', 'staging']);
    expect(twice).toEqual({
      status: 2,
      stdout: '',
      stderr: `echo: --env is given more than once ("testing", "staging"); give it once\n${ECHO.usage}\n`,
    });
    const inline = await runInProcess(ECHO, ['--env=testing', '--check', '--env', 'testing']);
    expect(inline.status).toBe(2);
    expect(inline.stderr.split('\n')[0]).toBe('echo: --env is given more than once ("testing", "testing"); give it once');
    const flag = await runInProcess(ECHO, ['--check', '--check']);
    expect(flag.status).toBe(2);
    expect(flag.stderr.split('\n')[0]).toBe('echo: --check is given more than once; give it once');
  });

  it('escapes control characters in every message it prints, as JSON strings escape them', async () => {
    const failing: CommandDefinition<typeof OPTIONS> = {
      ...ECHO,
      run(values) {
        throw new RefusedError(`file ${values.env} is not readable`);
      },
    };
    const result = await runInProcess(failing, ['--env', 'a\u001b[2Jb\rc\u0007d\ne\u009bf']);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('echo: file a\\u001b[2Jb\\rc\\u0007d\ne\\u009bf is not readable\n');
    expect(printable('tab\there, line\nkept')).toBe('tab\there, line\nkept');
  });

  it('takes an option declared repeatable as often as it is given', async () => {
    expect((await runInProcess(ECHO, ['--set', 'a', '--set', 'a'])).stdout).toBe('{"set":["a","a"]}\n');
  });
});

describe('the commands', () => {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('are the table of src/commands/index.ts and e2e, each the npm script of its name', async () => {
    const run = Object.entries(scripts).filter(([, command]) => command.includes('scripts/run.cjs'));
    expect(Object.fromEntries(run)).toEqual(Object.fromEntries([...Object.keys(COMMANDS), 'e2e'].map((name) => [name, `node scripts/run.cjs ${name}`])));
    for (const [name, entry] of Object.entries(COMMANDS)) expect((await entry.load()).name, name).toBe(name);
    expect(E2E.name).toBe('e2e');
  });

  it('print through their context and read the project from it, never from the process', () => {
    const sources = [
      ...(fs.readdirSync(path.join(ROOT, 'src', 'commands'), { recursive: true, withFileTypes: true }) as fs.Dirent[])
        .filter((entry) => entry.isFile())
        .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name))),
      path.join('e2e', 'command.ts'),
    ];
    for (const file of sources) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      expect(text, file).not.toMatch(/\bconsole\.|process\.std(out|err)|\bprojectRoot\(|__dirname/);
    }
  });
});
