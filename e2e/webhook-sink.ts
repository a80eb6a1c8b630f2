import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a RecordingServer received. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The body, parsed when it is JSON. */
  readonly body: any;
}

/**
 * A loopback HTTP server standing in for a webhook or an API: it records every request and
 * answers each path as `answers` says (default 200 `ok`). The e2e gives it as the team
 * chat's address (Argo CD's deployment notifications reach it); tests read `requests`.
 */
export class RecordingServer {
  readonly requests: RecordedRequest[] = [];
  /** The answer of a path, by path; unset paths answer 200 `ok`. */
  answers = new Map<string, { status: number; body: string }>();
  url = '';
  private server?: http.Server;

  async start(): Promise<this> {
    this.server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        const path = request.url ?? '';
        this.requests.push({ method: request.method ?? '', path, headers: request.headers, body });
        const answer = this.answers.get(path) ?? { status: 200, body: 'ok' };
        response.writeHead(answer.status, { 'content-type': answer.body.startsWith('{') ? 'application/json' : 'text/plain' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The requests to one path. */
  to(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  close(): Promise<void> {
    // A client's kept-alive connection would hold close() open.
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
