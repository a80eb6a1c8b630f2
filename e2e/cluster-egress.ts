import * as fs from 'node:fs';
import * as net from 'node:net';
import { stringify } from 'yaml';

/**
 * The API server's way into the cluster network, which the e2e cluster does not have: an HTTP
 * CONNECT proxy on a Unix socket given to kube-apiserver as its `cluster` egress
 * (`--egress-selector-config-file`, k8s.io/apiserver v0.36.3 pkg/server/egressselector:
 * HTTPConnect over `uds`; over `tcp` it loads a client certificate even for a plain `http://`
 * URL, which validation allows without one, and v1.36.3 panics there: getTLSConfig(nil),
 * egress_selector.go:279, seen on the e2e cluster). The API server dials through it everything it sends into the cluster: a webhook
 * whose configuration names a Service (pkg/util/webhook/authentication.go: the Cluster network
 * context; the address is the Service's ClusterIP and port, its TLS name the Service's DNS name)
 * and a node's kubelet (exec, port-forward and logs, to kwok on loopback).
 *
 * It sends a Service's `clusterIP:port` that the harness routes (`route`) to the loopback port
 * of the real program behind it, a loopback address (kwok's kubelet API, a webhook called by
 * URL) to itself, and refuses any other destination at once (503), as a Service with no ready
 * endpoint refuses: nothing leaves the machine.
 */
export class ClusterEgress {
  private readonly routes = new Map<string, number>();
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Destinations refused, for the log. */
  readonly refused = new Set<string>();
  /** The Unix socket it listens on, once listening. */
  socket = '';

  constructor() {
    this.server = net.createServer((socket) => this.handle(socket));
  }

  /** Send the API server's connections to `address:port` (a Service's ClusterIP and port) to `127.0.0.1:localPort`. */
  route(address: string, port: number, localPort: number): void {
    this.routes.set(`${address}:${port}`, localPort);
  }

  /** Listen on the Unix socket `socket` (an absolute path in the run folder). */
  async listen(socket: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(socket, () => resolve());
    });
    this.socket = socket;
  }

  /** The EgressSelectorConfiguration that sends the API server's cluster traffic here, written to `file`. */
  writeConfiguration(file: string): void {
    const configuration = {
      apiVersion: 'apiserver.k8s.io/v1beta1',
      kind: 'EgressSelectorConfiguration',
      egressSelections: [{ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: this.socket } } } }],
    };
    fs.writeFileSync(file, stringify(configuration));
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Where a CONNECT to `host:port` goes: a routed Service's loopback port, a loopback address itself, else nowhere. */
  target(host: string, port: number): { host: string; port: number } | undefined {
    const routed = this.routes.get(`${host}:${port}`);
    if (routed !== undefined) return { host: '127.0.0.1', port: routed };
    // kwok's kubelet API, the InternalDNS address `localhost`, listens on 127.0.0.1 only.
    if (host === 'localhost') return { host: '127.0.0.1', port };
    if (host === '::1' || /^127\./.test(host)) return { host, port };
    return undefined;
  }

  private handle(client: net.Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) {
        if (buffer.length > 8192) client.destroy();
        return;
      }
      client.off('data', onData);
      const request = /^CONNECT (\S+):(\d+) HTTP\/1\.[01]\r\n/.exec(buffer.subarray(0, end + 2).toString('latin1'));
      const rest = buffer.subarray(end + 4);
      const host = request?.[1]?.replace(/^\[|\]$/g, '');
      const target = request === null || host === undefined ? undefined : this.target(host, Number(request[2]));
      if (target === undefined) {
        if (request !== null) this.refused.add(`${request[1]}:${request[2]}`);
        client.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      let connected = false;
      const upstream = net.connect(target.port, target.host, () => {
        connected = true;
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      this.sockets.add(upstream);
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => {
        if (!connected) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
        else client.destroy();
      });
      client.on('close', () => upstream.destroy());
    };
    client.on('data', onData);
  }
}
