import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectCopy, runInCopy } from '../project-copy';

const copies: string[] = [];
afterEach(() => {
  for (const dir of copies.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Whether `ensureBuilt()` of the copy's scripts/build.cjs compiled (true) or found build/ current. */
function ensureBuiltIn(root: string): boolean {
  const result = spawnSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(path.join(root, 'scripts', 'build.cjs'))}).ensureBuilt()))`], {
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout === 'true';
}

describe('the build of the commands (scripts/build.cjs)', () => {
  it('is not redone after a values file changes, only after a source does', () => {
    const root = projectCopy();
    copies.push(root);
    expect(ensureBuiltIn(root)).toBe(false);
    // Data: the values files are read when a command runs, never compiled in.
    fs.appendFileSync(path.join(root, 'src', 'environments', 'testing', 'environment.yaml'), '# an edit of data\n');
    expect(ensureBuiltIn(root)).toBe(false);
    // Code.
    fs.appendFileSync(path.join(root, 'src', 'naming.ts'), '// an edit of code\n');
    expect(ensureBuiltIn(root)).toBe(true);
    expect(ensureBuiltIn(root)).toBe(false);
  });
});

/** Add a command to the copy's table (src/commands/index.ts), its definition `exported` from src/commands/<name>.ts. */
function addCommand(root: string, name: string, exported: string, source: string): void {
  fs.writeFileSync(path.join(root, 'src', 'commands', `${name}.ts`), source);
  const table = path.join(root, 'src', 'commands', 'index.ts');
  const text = fs.readFileSync(table, 'utf8');
  const anchor = 'export const COMMANDS = {\n';
  expect(text).toContain(anchor);
  const entry = `  ${name}: { summary: 'a test', load: () => import('./${name}.js').then((module) => module.${exported}) },\n`;
  fs.writeFileSync(table, text.replace(anchor, `${anchor}${entry}`));
}

// A bug (an error no check anticipates), run the way `npm run <command>` runs it
// (scripts/run.cjs): one line without the variable, the stack trace in src/ terms with it,
// though the bundles are minified. The bug is a command added to a copy for the purpose.
describe('a bug in a command', () => {
  it('prints one line, and with PLATFORM_GITOPS_DEBUG=1 its stack trace in src/ files', () => {
    const root = projectCopy();
    copies.push(root);
    addCommand(
      root,
      'bug',
      'BUG',
      [
        "import { type CommandDefinition } from '../tooling/cli';",
        '',
        'function misbehave(): number {',
        "  throw new Error('a bug');",
        '}',
        '',
        "export const BUG: CommandDefinition<{}> = { name: 'bug', usage: 'usage: bug', options: {}, run: () => misbehave() };",
        '',
      ].join('\n'),
    );
    const plain = runInCopy(root, 'bug', []);
    expect(plain).toMatchObject({ status: 1, stderr: 'bug: a bug\n' });
    const debug = runInCopy(root, 'bug', [], { PLATFORM_GITOPS_DEBUG: '1' });
    expect(debug.status).toBe(1);
    expect(debug.stderr).toMatch(/^bug: a bug\nError: a bug\n\s+at misbehave \(.*src\/commands\/bug\.ts:4:9\)\n/);
  });
});

// scripts/run.cjs keeps V8's code cache beside the bundle, one per command, holding what the
// run that wrote it compiled; a run that stops early compiles a part only.
describe("a command's code cache (build/<bundle>.js.<command>.cache)", () => {
  it('written by a run that stopped early (--help) is written again by the next run that completes, then kept', () => {
    const root = projectCopy();
    copies.push(root);
    const cache = path.join(root, 'build', 'main.js.synth.cache');
    for (const file of [cache, `${cache}.partial`]) fs.rmSync(file, { force: true });
    const outdir = (name: string) => ['--outdir', path.join(root, '.scratch', name)];

    // Compared by digest: a deep comparison of two megabyte buffers takes seconds.
    const digest = () => crypto.createHash('sha256').update(fs.readFileSync(cache)).digest('hex');

    // A command line that cannot be read compiles next to nothing: no cache.
    expect(runInCopy(root, 'synth', ['--no-such-option']).status).toBe(2);
    expect(fs.existsSync(cache)).toBe(false);

    expect(runInCopy(root, 'synth', ['--help']).status).toBe(0);
    const early = { size: fs.statSync(cache).size, digest: digest() };
    expect(fs.existsSync(`${cache}.partial`)).toBe(true);
    expect(runInCopy(root, 'synth', ['--outdir', path.join(root, 'no-such-folder', '..', 'src')]).status).toBe(1);
    expect(digest()).toBe(early.digest);

    expect(runInCopy(root, 'synth', outdir('first')).status).toBe(0);
    const complete = digest();
    expect(fs.existsSync(`${cache}.partial`)).toBe(false);
    expect(fs.statSync(cache).size).toBeGreaterThan(early.size);
    expect(runInCopy(root, 'synth', outdir('second')).status).toBe(0);
    expect(digest()).toBe(complete);

    // Another command of the same bundle keeps a cache of its own; synth's stays as it was.
    expect(runInCopy(root, 'validate', ['--rules']).status).toBe(0);
    expect(fs.existsSync(path.join(root, 'build', 'main.js.validate.cache'))).toBe(true);
    expect(digest()).toBe(complete);
  });

  it('written for an earlier build is not used by a later one, even of the same length', () => {
    // V8 checks cached data against the length of the source only, and a run of an earlier
    // build writes its cache when it ends, after any rebuild that happened meanwhile.
    const root = projectCopy();
    copies.push(root);
    const cache = path.join(root, 'build', 'main.js.probe.cache');
    const probe = (word: string) =>
      `import { type CommandDefinition } from '../tooling/cli';\n\nexport const PROBE: CommandDefinition<{}> = { name: 'probe', usage: '', options: {}, run: (_values, _positionals, { out }) => (out('${word}'), 0) };\n`;
    addCommand(root, 'probe', 'PROBE', probe('before'));
    expect(runInCopy(root, 'probe', [])).toMatchObject({ status: 0, stdout: 'before' });
    const earlier = fs.readFileSync(cache);

    fs.writeFileSync(path.join(root, 'src', 'commands', 'probe.ts'), probe('behind'));
    expect(runInCopy(root, 'probe', [])).toMatchObject({ status: 0, stdout: 'behind' });
    fs.writeFileSync(cache, earlier);
    expect(runInCopy(root, 'probe', [])).toMatchObject({ status: 0, stdout: 'behind' });
  });
});
