import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolatedChild, ISOLATED_VARIABLE, runIsolated, whyNotIsolated } from '../e2e/isolation';
import { assertFixedPortsFree, bindableOnAll, freePort, portHolders } from '../e2e/loopback';
import { Supervisor } from '../e2e/processes';
import { ENVOY_GATEWAY_PORTS } from '../e2e/envoy-gateway';
import { commandLine } from '../e2e/command';

// A run ends everything it started, however it ends, and a second run beside a first has ports
// of its own or refuses at once, naming the port and what holds it. The e2e runs as root (its
// namespaces, the git server's account), as does this.

const dirs: string[] = [];
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function temporary(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-run-ends-'));
  dirs.push(dir);
  return dir;
}

/** Whether a `sleep <marker>` runs anywhere on the machine. */
function sleeping(marker: string): boolean {
  return spawnSync('pgrep', ['-f', `^sleep ${marker}$`]).status === 0;
}

async function until(what: () => boolean, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (what()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return what();
}

/** A run in miniature: a process tree (a `sleep <marker>` of its own group, as the harness starts its programs), `ready` written once it waits; a SIGTERM ends it with 3. */
function runLike(marker: string, ready: string): string {
  return `require('node:child_process').spawn('sleep', ['${marker}'], { detached: true, stdio: 'ignore' }).unref();
process.on('SIGTERM', () => process.exit(3));
require('node:fs').writeFileSync(${JSON.stringify(ready)}, '');
setInterval(() => {}, 1000);`;
}

describe('the processes listening on a port, read from /proc (e2e/loopback.ts portHolders)', () => {
  it('names each process whose socket listens on the port, in IPv4 or IPv6, and no other', () => {
    const proc = temporary();
    fs.mkdirSync(path.join(proc, 'net'));
    const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    // 8081 = 0x1F91: listening (0A) on 127.0.0.1 as inode 111, and on :: as 222; an established (01) connection from 8081 as 333; 9443 (0x24E3) listening as 444.
    fs.writeFileSync(path.join(proc, 'net', 'tcp'), `${header}   0: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0\n   1: 0100007F:1F91 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0 20 4 30 10 -1\n   2: 00000000:24E3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0 100 0 0 10 0\n`);
    fs.writeFileSync(path.join(proc, 'net', 'tcp6'), `${header}   0: 00000000000000000000000000000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0 100 0 0 10 0\n`);
    const processes: Record<string, { cmdline: string[]; fds: string[] }> = {
      '41': { cmdline: ['envoy-gateway', 'server', '--config-path', '/run/a/envoy-gateway.yaml'], fds: ['socket:[111]', '/dev/null'] },
      '7': { cmdline: ['other-run-gateway'], fds: ['socket:[222]'] },
      '52': { cmdline: ['client'], fds: ['socket:[333]'] },
      '60': { cmdline: ['webhook'], fds: ['socket:[444]'] },
    };
    for (const [pid, { cmdline, fds }] of Object.entries(processes)) {
      fs.mkdirSync(path.join(proc, pid, 'fd'), { recursive: true });
      fs.writeFileSync(path.join(proc, pid, 'cmdline'), `${cmdline.join('\0')}\0`);
      fds.forEach((target, fd) => fs.symlinkSync(target, path.join(proc, pid, 'fd', String(fd))));
    }
    fs.mkdirSync(path.join(proc, 'self'));
    expect(portHolders(8081, proc)).toEqual([
      { port: 8081, pid: 7, command: 'other-run-gateway' },
      { port: 8081, pid: 41, command: 'envoy-gateway server --config-path /run/a/envoy-gateway.yaml' },
    ]);
    expect(portHolders(9443, proc)).toEqual([{ port: 9443, pid: 60, command: 'webhook' }]);
    expect(portHolders(18000, proc)).toEqual([]);
  });
});

describe('a fixed port another process holds (e2e/loopback.ts assertFixedPortsFree)', () => {
  it('refuses at once, naming the port, what the run needs it for and the process holding it', async () => {
    const port = await freePort();
    // Held on 127.0.0.1 only: Envoy Gateway binds every address, which that refuses too.
    const holder = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${port}, '127.0.0.1', () => console.log('listening'))`], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    children.push(holder.pid!);
    await once(holder.stdout!, 'data');
    expect(await bindableOnAll(port)).toBe(false);
    await expect(assertFixedPortsFree({ [port]: "Envoy Gateway's health probe" })).rejects.toThrow(
      new RegExp(`^port ${port} \\(Envoy Gateway's health probe\\) is taken by pid ${holder.pid} \\(\\S*${path.basename(process.execPath)} -e .*listen\\(${port}, .*\\): another e2e run\\?`),
    );
    holder.kill('SIGKILL');
    await once(holder, 'close');
    await expect(assertFixedPortsFree({ [port]: "Envoy Gateway's health probe" })).resolves.toBeUndefined();
  });

  it("lists Envoy Gateway's fixed ports, the health probe's 8081 among them", () => {
    expect(Object.keys(ENVOY_GATEWAY_PORTS).map(Number)).toContain(8081);
  });
});

describe("the cluster's processes once the run stops (e2e/processes.ts Supervisor)", () => {
  it('stops every process tree it started, and starts none once the stop began', async () => {
    const dir = temporary();
    const supervisor = new Supervisor(path.join(dir, 'logs'), dir);
    const marker = `${700 + Math.random()}`;
    // A program that starts a child of its own, in its group.
    supervisor.start({ name: 'tree', command: 'sh', args: ['-c', `sleep ${marker} & wait`] });
    expect(await until(() => sleeping(marker))).toBe(true);
    const stopping = supervisor.stopAll(1_000);
    const late = `${700 + Math.random()}`;
    expect(() => supervisor.start({ name: 'late', command: 'sleep', args: [late] })).toThrow('late not started: the run is stopping');
    await stopping;
    expect(sleeping(marker)).toBe(false);
    expect(sleeping(late)).toBe(false);
  });
});

describe('npm run e2e in namespaces of its own (e2e/isolation.ts)', () => {
  it('runs isolated as root, not when already isolated or not root', () => {
    expect(whyNotIsolated({}, 0)).toBeUndefined();
    expect(whyNotIsolated({ [ISOLATED_VARIABLE]: '1' }, 0)).toBe(`${ISOLATED_VARIABLE} is set`);
    expect(whyNotIsolated({}, 1000)).toBe('not root');
  });

  it('passes the options on as the isolated run reads them, paths absolute', () => {
    expect(commandLine({ env: 'local', timeout: '600', 'no-dry-run': true, keep: false, report: 'r.json', exec: 'npm run ops -- status --env local' })).toEqual([
      '--env',
      'local',
      '--timeout',
      '600',
      '--no-dry-run',
      '--report',
      path.resolve('r.json'),
      '--exec',
      'npm run ops -- status --env local',
    ]);
  });

  it('is marked isolated inside, and its own loopback has the fixed ports free', () => {
    const port = Object.keys(ENVOY_GATEWAY_PORTS)[0]!;
    const server = net.createServer();
    return new Promise<void>((resolve, reject) => {
      // Whether this test or another process of this network holds the port, the isolated
      // run's loopback has it: the check runs once the listen succeeded or failed.
      const check = () => {
        const [command, ...args] = isolatedChild([process.execPath, '-e', `require('node:net').createServer().listen(${port}, () => { console.log(process.env.${ISOLATED_VARIABLE}); process.exit(0); })`]);
        const result = spawnSync(command!, args, { encoding: 'utf8' });
        server.close();
        try {
          expect(result.stdout.trim()).toBe('1');
          expect(result.status).toBe(0);
          resolve();
        } catch (error) {
          reject(error);
        }
      };
      server.once('error', check);
      server.listen(Number(port), check);
    });
  });

  it('passes a SIGTERM on to the run, which stops, and nothing it started outlives it', async () => {
    const marker = `${700 + Math.random()}`;
    const ready = path.join(temporary(), 'ready');
    const ended = runIsolated([process.execPath, '-e', runLike(marker, ready)], os.tmpdir(), (pid) => children.push(pid));
    expect(await until(() => fs.existsSync(ready) && sleeping(marker))).toBe(true);
    process.emit('SIGTERM');
    expect(await ended).toBe(3);
    expect(await until(() => !sleeping(marker), 5_000)).toBe(true);
  });

  it('ends everything in it when the unshare that holds it is killed outright', async () => {
    const marker = `${700 + Math.random()}`;
    const ready = path.join(temporary(), 'ready');
    let unshare = 0;
    const ended = runIsolated([process.execPath, '-e', runLike(marker, ready)], os.tmpdir(), (pid) => (unshare = pid));
    expect(await until(() => fs.existsSync(ready) && sleeping(marker))).toBe(true);
    process.kill(unshare, 'SIGKILL');
    expect(await ended).toBe(128 + os.constants.signals.SIGKILL);
    expect(await until(() => !sleeping(marker), 5_000)).toBe(true);
  });

  it('ends everything in it when the command that started it is killed outright', async () => {
    const marker = `${700 + Math.random()}`;
    const ready = path.join(temporary(), 'ready');
    const [command, ...args] = isolatedChild([process.execPath, '-e', runLike(marker, ready)]);
    // The outer npm run e2e: it starts the isolated run, then is killed with SIGKILL.
    const outer = spawn(process.execPath, ['-e', `require('node:child_process').spawn(${JSON.stringify(command)}, ${JSON.stringify(args)}, { stdio: 'ignore', detached: true }); setInterval(() => {}, 1000);`], { stdio: 'ignore' });
    expect(await until(() => fs.existsSync(ready) && sleeping(marker))).toBe(true);
    outer.kill('SIGKILL');
    expect(await until(() => !sleeping(marker), 5_000)).toBe(true);
  });
});
