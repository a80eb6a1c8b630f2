import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

/** A kind the fake serves: its group/version, plural and whether it is namespaced. */
const KINDS: Record<string, { groupVersion: string; plural: string; namespaced: boolean }> = {
  Gateway: { groupVersion: 'gateway.networking.k8s.io/v1', plural: 'gateways', namespaced: true },
  HTTPRoute: { groupVersion: 'gateway.networking.k8s.io/v1', plural: 'httproutes', namespaced: true },
  EndpointSlice: { groupVersion: 'discovery.k8s.io/v1', plural: 'endpointslices', namespaced: true },
  Deployment: { groupVersion: 'apps/v1', plural: 'deployments', namespaced: true },
  Pod: { groupVersion: 'v1', plural: 'pods', namespaced: true },
  Canary: { groupVersion: 'flagger.app/v1beta1', plural: 'canaries', namespaced: true },
  Event: { groupVersion: 'v1', plural: 'events', namespaced: true },
};

/**
 * An API server answering reads only, on loopback over plain HTTP, for the unit tests of
 * the verbs that read the cluster through the client library: discovery of the kinds
 * above, GET of one object and lists (label selectors of `key=value` pairs). What a real
 * API server and controllers do with these objects is tested on the e2e cluster.
 */
export class FakeApiServer {
  /** The objects served, by kind; a test sets them. */
  objects: Record<string, any[]> = {};
  /** Every request's method and path, in order. */
  readonly requests: string[] = [];
  private server?: http.Server;

  async start(dir: string): Promise<string> {
    this.server = http.createServer((request, response) => this.answer(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const port = (this.server.address() as AddressInfo).port;
    const kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'fake', user: { token: 'fake' } }],
        contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
        'current-context': 'fake',
      }),
    );
    return kubeconfig;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private answer(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url!, 'http://fake');
    this.requests.push(`${request.method} ${url.pathname}`);
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    for (const [kind, info] of Object.entries(KINDS)) {
      const base = info.groupVersion === 'v1' ? '/api/v1' : `/apis/${info.groupVersion}`;
      if (url.pathname === base) {
        const resources = Object.entries(KINDS)
          .filter(([, other]) => other.groupVersion === info.groupVersion)
          .map(([name, other]) => ({ name: other.plural, kind: name, namespaced: other.namespaced, singularName: '', verbs: ['get', 'list'] }));
        send(200, { kind: 'APIResourceList', groupVersion: info.groupVersion, resources });
        return;
      }
      const match = new RegExp(`^${base}/namespaces/([^/]+)/${info.plural}(?:/([^/]+))?$`).exec(url.pathname);
      if (match === null) continue;
      const [, namespace, name] = match;
      const inNamespace = (this.objects[kind] ?? []).filter((o) => (o.metadata.namespace ?? namespace) === namespace);
      if (name !== undefined) {
        const found = inNamespace.find((o) => o.metadata.name === name);
        if (found === undefined) send(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${info.plural} "${name}" not found` });
        else send(200, { apiVersion: info.groupVersion, kind, ...found });
        return;
      }
      const selector = (url.searchParams.get('labelSelector') ?? '').split(',').filter(Boolean).map((pair) => pair.split('='));
      const items = inNamespace.filter((o) => selector.every(([k, v]) => o.metadata.labels?.[k!] === v));
      send(200, { apiVersion: info.groupVersion, kind: `${kind}List`, metadata: {}, items });
      return;
    }
    send(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${url.pathname} is not served` });
  }
}
