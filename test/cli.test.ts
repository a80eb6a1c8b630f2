import { describe, expect, it } from 'vitest';
import { type CommandDefinition } from '../src/tooling/cli';
import { runInProcess } from './support';

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

  it('takes an option declared repeatable as often as it is given', async () => {
    expect((await runInProcess(ECHO, ['--set', 'a', '--set', 'a'])).stdout).toBe('{"set":["a","a"]}\n');
  });
});
