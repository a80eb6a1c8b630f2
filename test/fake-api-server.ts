import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { temporaryDirectory } from './support';

/** A kind the fake serves: its group/version, plural and whether it is namespaced. */
const KINDS: Record<string, { groupVersion: string; plural: string; namespaced: boolean }> = {
  Gateway: { groupVersion: 'gateway.networking.k8s.io/v1', plural: 'gateways', namespaced: true },
  HTTPRoute: { groupVersion: 'gateway.networking.k8s.io/v1', plural: 'httproutes', namespaced: true },
  EndpointSlice: { groupVersion: 'discovery.k8s.io/v1', plural: 'endpointslices', namespaced: true },
  Deployment: { groupVersion: 'apps/v1', plural: 'deployments', namespaced: true },
  ReplicaSet: { groupVersion: 'apps/v1', plural: 'replicasets', namespaced: true },
  Pod: { groupVersion: 'v1', plural: 'pods', namespaced: true },
  Canary: { groupVersion: 'flagger.app/v1beta1', plural: 'canaries', namespaced: true },
  Event: { groupVersion: 'v1', plural: 'events', namespaced: true },
  Application: { groupVersion: 'argoproj.io/v1alpha1', plural: 'applications', namespaced: true },
  Node: { groupVersion: 'v1', plural: 'nodes', namespaced: false },
};

/** A JSON merge patch (RFC 7386) applied to `target`: objects merged, `null` removes a field, anything else replaces. */
function mergePatch(target: any, patch: any): any {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * A JSON patch (RFC 6902) applied to a copy of `target`: `test`, `replace`, `add` and `remove`
 * at JSON pointers, all or none; undefined when an operation fails (a test that does not hold,
 * a path that is not there), which the API server answers with 422.
 */
function jsonPatch(target: any, operations: readonly { op: string; path: string; value?: unknown }[]): any {
  const result = structuredClone(target);
  for (const { op, path: pointer, value } of operations) {
    const keys = pointer.split('/').slice(1).map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    let parent = result;
    for (const key of keys) parent = parent?.[key];
    if (parent === null || typeof parent !== 'object') return undefined;
    const index = Array.isArray(parent) ? (last === '-' ? parent.length : Number(last)) : last;
    const present = Array.isArray(parent) ? Number.isInteger(index) && (index as number) < parent.length : Object.hasOwn(parent, last);
    if (op === 'test') {
      if (!present || JSON.stringify(parent[index]) !== JSON.stringify(value)) return undefined;
    } else if (op === 'add') {
      if (Array.isArray(parent)) parent.splice(index as number, 0, value);
      else parent[last] = value;
    } else if (op === 'replace' || op === 'remove') {
      if (!present) return undefined;
      if (op === 'replace') parent[index] = value;
      else if (Array.isArray(parent)) parent.splice(index as number, 1);
      else delete parent[last];
    } else return undefined;
  }
  return result;
}

/**
 * An API server on loopback over plain HTTP, for the unit tests of the verbs that read and
 * patch the cluster through the client library: discovery of the kinds above, GET of one
 * object, lists (label selectors of `key=value` pairs) and merge or JSON patches of one object. A
 * test plays a controller in `afterPatch`. What a real API server and controllers do with
 * these objects is tested on the e2e cluster.
 */
export class FakeApiServer {
  /** The objects served, by kind; a test sets them. */
  objects: Record<string, any[]> = {};
  /** Kinds answered as an API server without them answers (404 on discovery and paths): a cluster without Argo CD. */
  readonly unserved = new Set<string>();
  /** Every request's method and path, in order. */
  readonly requests: string[] = [];
  /** Every patch's object and body (a JSON patch's body: its operations), in order. */
  readonly patches: { kind: string; name: string; body: any }[] = [];
  /** What a controller does once an object was patched (the object as stored, changed in place). */
  afterPatch: (kind: string, object: any, body: any) => void = () => undefined;
  /** What a controller does once an object was read (the object as stored, changed in place after the answer). */
  afterRead: (kind: string, object: any) => void = () => undefined;
  /** How many connections clients opened to this server. */
  connections = 0;
  private server?: http.Server;

  async start(dir: string): Promise<string> {
    this.server = http.createServer((request, response) => this.answer(request, response));
    this.server.on('connection', () => this.connections++);
    // Idle connections outlive the client's (30 s, src/cluster/object-api.ts), as on an API server (90 s).
    this.server.keepAliveTimeout = 90_000;
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
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => this.reply(request, body, response));
  }

  private reply(request: http.IncomingMessage, text: string, response: http.ServerResponse): void {
    const url = new URL(request.url!, 'http://fake');
    this.requests.push(`${request.method} ${url.pathname}`);
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    for (const [kind, info] of Object.entries(KINDS).filter(([name]) => !this.unserved.has(name))) {
      const base = info.groupVersion === 'v1' ? '/api/v1' : `/apis/${info.groupVersion}`;
      if (url.pathname === base) {
        const resources = Object.entries(KINDS)
          .filter(([name, other]) => other.groupVersion === info.groupVersion && !this.unserved.has(name))
          .map(([name, other]) => ({ name: other.plural, kind: name, namespaced: other.namespaced, singularName: '', verbs: ['get', 'list'] }));
        send(200, { kind: 'APIResourceList', groupVersion: info.groupVersion, resources });
        return;
      }
      const match = info.namespaced
        ? new RegExp(`^${base}/namespaces/([^/]+)/${info.plural}(?:/([^/]+))?$`).exec(url.pathname)
        : new RegExp(`^${base}/()${info.plural}(?:/([^/]+))?$`).exec(url.pathname);
      if (match === null) continue;
      const [, namespace, name] = match;
      const inNamespace = (this.objects[kind] ?? []).filter((o) => !info.namespaced || (o.metadata.namespace ?? namespace) === namespace);
      if (name !== undefined) {
        const found = inNamespace.find((o) => o.metadata.name === name);
        if (found === undefined) send(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${info.plural} "${name}" not found` });
        else if (request.method === 'PATCH') {
          const patch = JSON.parse(text);
          this.patches.push({ kind, name, body: patch });
          // A patch written at a resourceVersion (optimistic concurrency) conflicts with any later write, as the API server answers it.
          const at = Array.isArray(patch) ? undefined : patch?.metadata?.resourceVersion;
          if (at !== undefined && at !== found.metadata.resourceVersion) {
            send(409, { kind: 'Status', code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled on ${info.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again` });
            return;
          }
          const merged = String(request.headers['content-type']).startsWith('application/json-patch+json') ? jsonPatch(found, patch) : mergePatch(found, patch);
          if (merged === undefined) {
            send(422, { kind: 'Status', code: 422, reason: 'Invalid', message: `the JSON patch of ${info.plural} "${name}" does not apply` });
            return;
          }
          if (found.metadata.resourceVersion !== undefined) merged.metadata.resourceVersion = String(Number(found.metadata.resourceVersion) + 1);
          // Changed in place: the test holds the object it served.
          for (const key of Object.keys(found)) delete found[key];
          Object.assign(found, merged);
          this.afterPatch(kind, found, patch);
          send(200, { apiVersion: info.groupVersion, kind, ...found });
        } else {
          send(200, { apiVersion: info.groupVersion, kind, ...structuredClone(found) });
          this.afterRead(kind, found);
        }
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

/**
 * A FakeApiServer for the tests of one describe block: started before them, its kubeconfig in a
 * temporary folder (`kubeconfig()` once started), closed and removed after them.
 */
export function fakeApiServerForTests(prefix: string): { readonly api: FakeApiServer; readonly kubeconfig: () => string } {
  const api = new FakeApiServer();
  const dir = temporaryDirectory(prefix);
  let kubeconfig = '';
  beforeAll(async () => {
    kubeconfig = await api.start(dir);
  });
  afterAll(async () => {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { api, kubeconfig: () => kubeconfig };
}
