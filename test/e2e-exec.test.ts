import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { execAgainstCluster } from '../e2e/exec';

describe('npm run e2e -- --exec', () => {
  it("runs a `node` of its command on the harness's own Node, whatever PATH the run was given", async () => {
    const lines: string[] = [];
    // A PATH without node_modules/.bin: what a person's shell may hand the harness.
    const result = await execAgainstCluster({ command: 'node -p process.version', cwd: os.tmpdir(), env: { PATH: '/usr/local/bin:/usr/bin:/bin' }, timeoutSeconds: 60, log: (line) => lines.push(line) });
    expect(result.exitCode).toBe(0);
    expect(lines).toEqual([`exec | ${process.version}`]);
  });
});
