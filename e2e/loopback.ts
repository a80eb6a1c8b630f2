import * as fs from 'node:fs';
import * as net from 'node:net';

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
