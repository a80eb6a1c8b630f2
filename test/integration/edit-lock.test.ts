import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RELEASE } from '../../src/commands/release';
import { SYNTH } from '../../src/commands/synth';
import { applicationValuesPath, ValuesFile } from '../../src/environments/values-file';
import { EDIT_DIR } from '../../src/release/edit-lock';
import { commitCopy, copyEnvironments, dataCopy, newerTag } from '../project-copy';
import { runInProcess } from '../support';

// An edit interrupted between writing its values file and swapping dist/ in (a killed
// process) leaves a lock whose process is gone: the next command renders dist/ from the
// values files as they are, removes the program's own leftovers and says so.

let root: string;
beforeEach(() => {
  root = dataCopy();
  commitCopy(root);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** The pid of a process that has ended. */
function goneProcess(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

/** What a release killed after writing the values file and before swapping dist/ leaves. */
function interruptedRelease(): { file: string; tag: string } {
  const application = copyEnvironments(root).testing!.applications[0]!;
  const file = applicationValuesPath('testing', application.name);
  const tag = newerTag(root);
  const text = new ValuesFile(file, fs.readFileSync(path.join(root, file), 'utf8')).edited((document) => document.setIn(['image', 'tag'], tag));
  fs.writeFileSync(path.join(root, file), text);
  fs.mkdirSync(path.join(root, EDIT_DIR));
  fs.writeFileSync(path.join(root, EDIT_DIR, '4242.values.tmp'), text);
  fs.writeFileSync(path.join(root, EDIT_DIR, 'lock.json'), JSON.stringify({ pid: goneProcess(), command: 'release', file, sha256: createHash('sha256').update(text).digest('hex') }));
  return { file, tag };
}

describe('an interrupted edit', () => {
  it('is recovered by the next command: dist/ rendered from the values written, leftovers removed', async () => {
    const { file, tag } = interruptedRelease();
    const synth = await runInProcess(SYNTH, [], root);
    expect(synth.status).toBe(0);
    expect(synth.stderr).toMatch(new RegExp(`^synth: recovered from an interrupted release \\(process \\d+\\): ${file} had been written: dist/ rendered again from it; removed ${EDIT_DIR}/4242.values.tmp\\n$`));
    expect(fs.existsSync(path.join(root, EDIT_DIR))).toBe(false);
    expect((await runInProcess(SYNTH, ['--check'], root)).status).toBe(0);
    expect(fs.readFileSync(path.join(root, 'dist', 'testing', `${path.basename(file)}`), 'utf8')).toContain(`:${tag}`);
  });

  it('does not stop the next edit, which runs after the recovery', async () => {
    interruptedRelease();
    const staging = copyEnvironments(root).staging!;
    const result = await runInProcess(RELEASE, ['--env', 'testing', '--tag', newerTag(root)], root);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain('release: recovered from an interrupted release');
    expect((await runInProcess(SYNTH, ['--check'], root)).status).toBe(0);
    expect(copyEnvironments(root).staging).toEqual(staging);
  });

  it('is recovered even when a command killed while replacing it left its claim', async () => {
    const { file } = interruptedRelease();
    fs.writeFileSync(path.join(root, EDIT_DIR, 'lock.json.claim'), JSON.stringify({ pid: goneProcess(), command: 'synth', nonce: 'gone' }));
    const synth = await runInProcess(SYNTH, [], root);
    expect(synth.status, synth.stderr).toBe(0);
    expect(synth.stderr).toContain(`recovered from an interrupted release (process `);
    expect(synth.stderr).toContain(`${file} had been written`);
    expect(fs.existsSync(path.join(root, EDIT_DIR))).toBe(false);
  });

  it('refuses an edit while another process holds the lock, naming it', async () => {
    fs.mkdirSync(path.join(root, EDIT_DIR));
    // This test's own process runs: a lock it holds under another pid is a live holder.
    fs.writeFileSync(path.join(root, EDIT_DIR, 'lock.json'), JSON.stringify({ pid: process.ppid, command: 'promote' }));
    const result = await runInProcess(RELEASE, ['--env', 'testing', '--tag', newerTag(root)], root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`release: another promote (process ${process.ppid}) is editing this project; run this again when it has finished`);
    expect(result.stderr).toContain('Nothing was written.');
  });

  it('takes a lock whose pid now belongs to another process (after a reboot) for a stopped one: its recorded start time differs', async () => {
    const start = Number(fs.readFileSync(`/proc/${process.ppid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]);
    expect(start).toBeTypeOf('number');
    fs.mkdirSync(path.join(root, EDIT_DIR));
    // A running process (this test's parent), but not the one that took the lock: it started at another time.
    fs.writeFileSync(path.join(root, EDIT_DIR, 'lock.json'), JSON.stringify({ pid: process.ppid, command: 'promote', nonce: 'before-reboot', start: start! + 1 }));
    const synth = await runInProcess(SYNTH, [], root);
    expect(synth.status, synth.stderr).toBe(0);
    expect(synth.stderr).toContain(`recovered from an interrupted promote (process ${process.ppid})`);
    // The same pid and start time: the holder itself, still running.
    fs.mkdirSync(path.join(root, EDIT_DIR));
    fs.writeFileSync(path.join(root, EDIT_DIR, 'lock.json'), JSON.stringify({ pid: process.ppid, command: 'promote', nonce: 'running', start }));
    const refused = await runInProcess(SYNTH, [], root);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`another promote (process ${process.ppid}) is editing this project`);
  });
});

/**
 * A program that takes the project's lock `rounds` times (src/release/edit-lock.ts), each time
 * creating a marker file exclusively while it holds it: two of them at once must never both
 * hold the lock, and, with no process killed, never take the other's lock for an interrupted
 * edit. Bundled from the source, as the commands are.
 */
function lockingProgram(dir: string): string {
  const entry = path.join(dir, 'locking.ts');
  fs.writeFileSync(
    entry,
    `import * as fs from 'node:fs';
import * as path from 'node:path';
import { withProjectLock } from ${JSON.stringify(path.resolve(__dirname, '../../src/release/edit-lock'))};
import { RefusedError } from ${JSON.stringify(path.resolve(__dirname, '../../src/base/errors'))};
const [root, rounds, recoveries] = [process.argv[2]!, Number(process.argv[3]), process.argv[4] === 'recoveries'];
let held = 0;
for (let round = 0; round < rounds; round += 1) {
  try {
    withProjectLock(root, 'stress', (line) => { console.error(line); if (!recoveries) process.exit(4); }, () => {
      const marker = path.join(root, 'inside');
      fs.closeSync(fs.openSync(marker, 'wx'));
      held += 1;
      fs.rmSync(marker);
    });
  } catch (error) {
    if (!(error instanceof RefusedError)) { console.error(error); process.exit(5); }
  }
}
console.log(held);
`,
  );
  const program = path.join(dir, 'locking.cjs');
  buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: program, logLevel: 'error' });
  return program;
}

/** Two runs of the locking program at once, `rounds` times each. */
function raceTwo(program: string, rounds: number, recoveries = false): Promise<{ status: number | null; stdout: string; stderr: string }[]> {
  return Promise.all(
    [1, 2].map(
      () =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [program, root, String(rounds), ...(recoveries ? ['recoveries'] : [])]);
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk) => (stdout += String(chunk)));
          child.stderr.on('data', (chunk) => (stderr += String(chunk)));
          child.on('close', (status) => resolve({ status, stdout, stderr }));
        }),
    ),
  );
}

describe('two commands taking the lock at the same moment', () => {
  it('never both hold it, and neither takes the other for an interrupted edit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-lock-race-'));
    try {
      const runs = await raceTwo(lockingProgram(dir), 400);
      for (const run of runs) expect(run.stderr).toBe('');
      expect(runs.map((run) => run.status)).toEqual([0, 0]);
      // Each held it at times; the rest of the rounds were refused naming the other.
      for (const run of runs) expect(Number(run.stdout)).toBeGreaterThan(0);
      expect(fs.existsSync(path.join(root, EDIT_DIR))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('recovers a stopped command\'s lock once, when both find it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-lock-race-'));
    try {
      interruptedRelease();
      const runs = await raceTwo(lockingProgram(dir), 50, true);
      expect(runs.map((run) => run.status)).toEqual([0, 0]);
      const recovered = runs.flatMap((run) => run.stderr.split('\n').filter((line) => line.startsWith('recovered from an interrupted release')));
      expect(recovered).toHaveLength(1);
      for (const run of runs) expect(run.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('recovered'))).toEqual([]);
      expect(fs.existsSync(path.join(root, EDIT_DIR))).toBe(false);
      expect((await runInProcess(SYNTH, ['--check'], root)).status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
