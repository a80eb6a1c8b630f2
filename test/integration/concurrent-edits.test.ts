import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitCopy, copyEnvironments, newerTag, projectCopy, runInCopy } from '../project-copy';

// Two edits started together, by two people or two CI jobs: neither update is lost. One
// waits for nothing and is refused while the other holds the project's lock, or both run
// one after the other; dist/ always renders the values files.

let root: string;
beforeEach(() => {
  root = projectCopy();
  commitCopy(root);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function release(application: string, tag: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'run.cjs'), 'release', '--env', 'local', '--app', application, '--tag', tag], { cwd: root });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

describe('two edits at once', () => {
  it('never lose an update: each is written with dist/ or refused naming the other', async () => {
    const applications = copyEnvironments(root).local!.applications.map((application) => application.name);
    expect(applications.length).toBeGreaterThanOrEqual(2);
    const [first, second] = applications as [string, string];
    // Built once before, so the two runs start rendering together.
    expect(runInCopy(root, 'release', ['--help']).status).toBe(0);
    const tag = newerTag(root);
    const results = await Promise.all([release(first, tag), release(second, tag)]);
    for (const result of results) {
      if (result.status !== 0) expect(result.stderr).toMatch(/release: another release \(process \d+\) is editing this project/);
    }
    expect(results.some((result) => result.status === 0)).toBe(true);
    const after = copyEnvironments(root).local!;
    results.forEach((result, index) => {
      const application = after.applications.find((candidate) => candidate.name === [first, second][index])!;
      if (result.status === 0) expect(application.image.tag).toBe(tag);
    });
    // Whatever was written, dist/ is what the values files render.
    expect(runInCopy(root, 'synth', ['--check']).status).toBe(0);
  }, 300_000);
});
