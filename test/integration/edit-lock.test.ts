import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
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

  it('refuses an edit while another process holds the lock, naming it', async () => {
    fs.mkdirSync(path.join(root, EDIT_DIR));
    // This test's own process runs: a lock it holds under another pid is a live holder.
    fs.writeFileSync(path.join(root, EDIT_DIR, 'lock.json'), JSON.stringify({ pid: process.ppid, command: 'promote' }));
    const result = await runInProcess(RELEASE, ['--env', 'testing', '--tag', newerTag(root)], root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`release: another promote (process ${process.ppid}) is editing this project; run this again when it has finished`);
    expect(result.stderr).toContain('Nothing was written.');
  });
});
