import * as net from 'node:net';

/**
 * A SOCKS5 proxy (RFC 1928, CONNECT without authentication) that maps the public
 * addresses the platform names (`github.com:22`, `charts.jetstack.io:443`) to the
 * harness's servers on loopback, and refuses everything else. Argo CD's repository
 * server and Helm reach it through ALL_PROXY/HTTPS_PROXY, so the rendered URLs stay
 * exactly as committed and nothing leaves the machine.
 */
export class LoopbackProxy {
  private readonly routes = new Map<string, number>();
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Destinations asked for that have no route, for error messages. */
  readonly refused = new Set<string>();
  port = 0;

  constructor() {
    this.server = net.createServer((socket) => this.handle(socket));
  }

  /** Send `host:port` to `127.0.0.1:localPort`. */
  route(host: string, port: number, localPort: number): void {
    this.routes.set(`${host.toLowerCase()}:${port}`, localPort);
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(client: net.Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'request' = 'greeting';
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting') {
        if (buffer.length < 2 || buffer.length < 2 + buffer[1]!) return;
        if (buffer[0] !== 5) return void client.destroy();
        buffer = buffer.subarray(2 + buffer[1]!);
        client.write(Buffer.from([5, 0])); // version 5, no authentication
        stage = 'request';
      }
      if (stage === 'request') {
        const parsed = parseRequest(buffer);
        if (!parsed) return;
        client.off('data', onData);
        const rest = buffer.subarray(parsed.length);
        this.connect(client, parsed.host, parsed.port, rest);
      }
    };
    client.on('data', onData);
  }

  private connect(client: net.Socket, host: string, port: number, rest: Buffer): void {
    const destination = `${host.toLowerCase()}:${port}`;
    const local = this.routes.get(destination);
    if (local === undefined) {
      this.refused.add(destination);
      client.end(Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0])); // connection not allowed by ruleset
      return;
    }
    const upstream = net.connect(local, '127.0.0.1', () => {
      client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, (local >> 8) & 0xff, local & 0xff]));
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => {
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
  }
}

/** A CONNECT request: version, command, reserved, address type, address, port. */
function parseRequest(buffer: Buffer): { host: string; port: number; length: number } | undefined {
  if (buffer.length < 5) return undefined;
  const type = buffer[3];
  let host: string;
  let offset: number;
  if (type === 1) {
    if (buffer.length < 10) return undefined;
    host = [...buffer.subarray(4, 8)].join('.');
    offset = 8;
  } else if (type === 3) {
    const length = buffer[4]!;
    if (buffer.length < 5 + length + 2) return undefined;
    host = buffer.subarray(5, 5 + length).toString('utf8');
    offset = 5 + length;
  } else if (type === 4) {
    if (buffer.length < 22) return undefined;
    host = buffer.subarray(4, 20).toString('hex');
    offset = 20;
  } else {
    return { host: '', port: 0, length: buffer.length };
  }
  return { host, port: buffer.readUInt16BE(offset), length: offset + 2 };
}
