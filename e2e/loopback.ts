import * as fs from 'node:fs';
import * as net from 'node:net';
import { E2eError } from '../src/base/errors';

/** The lowest port `freePort` hands out: above the fixed ports of the run's servers (Envoy Gateway's 18000-19001, webhooks' 9443). */
export const LISTEN_PORTS_FROM = 20_000;

/**
 * The kernel's ephemeral range, `[first, last]`: the local ports it gives outbound connections
 * and `listen(0)` (Linux `/proc/sys/net/ipv4/ip_local_port_range`; elsewhere IANA's dynamic
 * range, 49152-65535, RFC 6335).
 */
export function ephemeralRange(file = '/proc/sys/net/ipv4/ip_local_port_range'): readonly [number, number] {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const [first, last] = text.trim().split(/\s+/).map(Number);
  return Number.isInteger(first) && Number.isInteger(last) ? [first!, last!] : [49_152, 65_535];
}

/** Ports handed out by this process, never handed out again. */
const handedOut = new Set<number>();

/** Whether a port can be bound on loopback now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A free TCP port on loopback for a server the run starts, from below the kernel's ephemeral
 * range. A port the kernel picks for `listen(0)` lies in that range, and until the server given
 * it binds it, any outbound connection may take it as its local port: argocd-repo-server once
 * died with "bind: address already in use" on the metrics port picked that way a moment
 * before. Below the range only another listener can take a port; each is bound once to test
 * it, and none is handed out twice in a process. The first port tried is random, so that runs
 * in the same network namespace rarely try the same ones.
 */
export async function freePort(range: readonly [number, number] = ephemeralRange()): Promise<number> {
  const [first, last] = [LISTEN_PORTS_FROM, range[0] - 1];
  const size = last - first + 1;
  if (size < 1_000) throw new Error(`the kernel's ephemeral port range ${range[0]}-${range[1]} leaves fewer than 1,000 ports from ${LISTEN_PORTS_FROM} for the run's servers: raise net.ipv4.ip_local_port_range's first port`);
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = first + ((start + i) % size);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 from ${first} to ${last}`);
}

/** Whether something listens on a loopback port: true, or undefined (a `waitFor` probe). */
export function listening(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(undefined));
  });
}

/** A process listening on a TCP port (from /proc: `/proc/net/tcp{,6}` and each process's fds). */
export interface PortHolder {
  readonly port: number;
  readonly pid: number;
  /** Its command line, as `/proc/<pid>/cmdline` holds it, space-separated. */
  readonly command: string;
}

/** The socket inodes listening (state 0A, TCP_LISTEN) on `port`, from `/proc/net/tcp` and `tcp6` under `proc`. */
function listeningInodes(port: number, proc: string): Set<string> {
  const inodes = new Set<string>();
  for (const file of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(`${proc}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    // `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...`; the address `HEX:PORT`.
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '0A') continue;
      if (Number.parseInt(fields[1]!.split(':').pop()!, 16) === port) inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** The processes listening on `port` (none found: an empty list, as for a port held by another user's process we cannot read). */
export function portHolders(port: number, proc = '/proc'): PortHolder[] {
  const inodes = listeningInodes(port, proc);
  if (inodes.size === 0) return [];
  const holders: PortHolder[] = [];
  for (const entry of fs.readdirSync(proc).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(a) - Number(b))) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`${proc}/${entry}/fd`);
    } catch {
      continue;
    }
    const holds = fds.some((fd) => {
      try {
        const target = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`${proc}/${entry}/fd/${fd}`));
        return target !== null && inodes.has(target[1]!);
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    let command = '';
    try {
      command = fs.readFileSync(`${proc}/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    } catch {
      // gone meanwhile
    }
    holders.push({ port, pid: Number(entry), command });
  }
  return holders;
}

/** Whether `port` can be listened on for every address (`::`, dual-stack; `0.0.0.0` where IPv6 is off), as a server binding `:port` does. */
export function bindableOnAll(port: number): Promise<boolean> {
  const attempt = (host: string): Promise<boolean | 'no-family'> =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.unref();
      server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EAFNOSUPPORT' || error.code === 'EADDRNOTAVAIL' ? 'no-family' : false));
      server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
    });
  return attempt('::').then((result) => (result === 'no-family' ? attempt('0.0.0.0').then((v4) => v4 === true) : result));
}

/**
 * Refuse at once when a fixed port a program of the run must listen on is taken, naming the
 * port, what the run needs it for and the processes holding it: such a program would otherwise
 * exit minutes later, once its controller's turn comes (Envoy Gateway's health probe on 8081
 * did, beside another run).
 */
export async function assertFixedPortsFree(ports: Readonly<Record<number, string>>, proc = '/proc'): Promise<void> {
  const taken: string[] = [];
  for (const [port, use] of Object.entries(ports).sort(([a], [b]) => Number(a) - Number(b))) {
    if (await bindableOnAll(Number(port))) continue;
    const holders = portHolders(Number(port), proc);
    const by = holders.length === 0 ? 'a process this one cannot see' : holders.map((h) => `pid ${h.pid} (${h.command || '?'})`).join(', ');
    taken.push(`port ${port} (${use}) is taken by ${by}`);
  }
  if (taken.length > 0) {
    throw new E2eError(`${taken.join('; ')}: another e2e run? Run as root, npm run e2e runs in network namespaces of its own, where these ports are its own`);
  }
}
