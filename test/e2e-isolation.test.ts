import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { isolated } from '../e2e/isolation';

/** Whether a `sleep <marker>` runs anywhere on the machine. */
function sleeping(marker: string): boolean {
  return spawnSync('pgrep', ['-f', `^sleep ${marker}$`]).status === 0;
}

async function gone(marker: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!sleeping(marker)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !sleeping(marker);
}

/**
 * A stand-in for the harness under the command line of an e2e case: it starts a process of its
 * own process group, as the harness starts the control plane and Argo CD (detached), says so,
 * then waits, or kills itself outright.
 */
function harnessLike(marker: string, then: 'wait' | 'die'): string {
  const start = `require('node:child_process').spawn('sleep', ['${marker}'], { detached: true, stdio: 'ignore' }).unref();`;
  const after = then === 'wait' ? 'setInterval(() => {}, 1000);' : "setTimeout(() => process.kill(process.pid, 'SIGKILL'), 100);";
  return `${start} console.log('started'); ${after}`;
}

// The e2e cases run as root (their network namespaces), as does this.
describe('an e2e case runs in namespaces of its own (e2e/isolation.ts isolated)', () => {
  it('leaves no process behind when the command that waits on the run is killed outright', async () => {
    const marker = `${600 + Math.random()}`;
    const [command, ...args] = isolated([process.execPath, '-e', harnessLike(marker, 'wait')]);
    const run = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    await once(run.stdout!, 'data');
    expect(sleeping(marker)).toBe(true);
    run.kill('SIGKILL');
    expect(await gone(marker, 5_000), `sleep ${marker} still runs`).toBe(true);
  });

  it('leaves no process behind when the harness itself is killed outright', async () => {
    const marker = `${600 + Math.random()}`;
    const [command, ...args] = isolated([process.execPath, '-e', harnessLike(marker, 'die')]);
    const run = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    await once(run.stdout!, 'data');
    await once(run, 'close');
    expect(await gone(marker, 5_000), `sleep ${marker} still runs`).toBe(true);
  });
});
