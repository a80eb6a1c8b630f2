import * as fs from 'node:fs';
import * as https from 'node:https';
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KubeClient, type KubeObject } from '../e2e/kube-client';
import { Pki } from '../e2e/pki';
import { waitFor } from '../e2e/processes';

// Unit tests of the e2e harness's own logic; test/e2e/ runs it on the real engines.

/** An API server over TLS on loopback answering with `handle`, and a KubeClient of it as the administrator. */
async function tlsApiServer(name: string, handle: http.RequestListener): Promise<{ client: KubeClient; server: https.Server; close: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `platform-gitops-${name}-`));
  const pki = new Pki(dir);
  const ca = pki.ca('ca', `/CN=${name}-ca`);
  const serving = pki.leaf('server', ca, '/CN=127.0.0.1', 'server', [], ['127.0.0.1']);
  const admin = pki.leaf('admin', ca, '/CN=admin', 'client');
  const server = https.createServer({ cert: fs.readFileSync(serving.cert), key: fs.readFileSync(serving.key) }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = new KubeClient(`https://127.0.0.1:${port}`, { ca: ca.cert, cert: admin.cert, key: admin.key });
  return {
    client,
    server,
    close: async () => {
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("the report's reads of what a converged run synced (KubeClient.listSynced)", () => {
  /**
   * An API server that serves Certificates over TLS, but whose first `misses` answers of
   * discovery say the group version is not there (as one can on a loaded machine).
   */
  async function flakyServer(misses: number): Promise<{ client: KubeClient; discoveries: () => number; close: () => Promise<void> }> {
    let discoveries = 0;
    const { client, close } = await tlsApiServer('list-synced', (request, response) => {
      response.setHeader('Content-Type', 'application/json');
      if (request.url === '/apis/cert-manager.io/v1') {
        discoveries += 1;
        if (discoveries <= misses) {
          response.statusCode = 404;
          response.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 }));
          return;
        }
        response.end(JSON.stringify({ kind: 'APIResourceList', groupVersion: 'cert-manager.io/v1', resources: [{ name: 'certificates', kind: 'Certificate', namespaced: true, verbs: ['list'] }] }));
        return;
      }
      if (request.url?.startsWith('/apis/cert-manager.io/v1/certificates')) {
        response.end(JSON.stringify({ kind: 'CertificateList', items: [{ metadata: { name: 'webapp', namespace: 'webapp' } }] }));
        return;
      }
      response.statusCode = 404;
      response.end('{}');
    });
    return { client, discoveries: () => discoveries, close };
  }

  it('asks again until the Certificates a converged run synced are listed', async () => {
    const server = await flakyServer(2);
    try {
      const listed = await server.client.listSynced('cert-manager.io/v1', 'Certificate', 1, 10);
      expect(listed.map((c) => `${c.metadata.namespace}/${c.metadata.name}`)).toEqual(['webapp/webapp']);
      expect(server.discoveries()).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('reads once, none on a miss, where the run synced none; names the kind when they never come', async () => {
    const once = await flakyServer(1);
    try {
      expect(await once.client.listSynced('cert-manager.io/v1', 'Certificate', 0)).toEqual([]);
      expect(once.discoveries()).toBe(1);
    } finally {
      await once.close();
    }
    const never = await flakyServer(Number.MAX_SAFE_INTEGER);
    try {
      await expect(never.client.listSynced('cert-manager.io/v1', 'Certificate', 1, 1)).rejects.toThrow(/timed out after 1 s waiting for the 1 synced Certificate objects to be listed/);
    } finally {
      await never.close();
    }
  });
});

describe('kinds kept from a watch (KubeClient.watchKinds, changed)', () => {
  /** An API server over TLS that serves ConfigMaps: LISTs counted, and a watch the test sends events on. */
  async function watchingServer(): Promise<{
    client: KubeClient;
    lists: () => number;
    send: (type: string, object: object) => void;
    endWatch: () => void;
    watchCount: () => number;
    /** Answer no new watch (its headers held) until called with false. */
    holdWatches: (hold: boolean) => void;
    closedByClient: (index: number) => Promise<void>;
    refuseWatches: (refuse: boolean) => void;
    watching: Promise<void>;
    close: () => Promise<void>;
  }> {
    let lists = 0;
    let refuseWatches = false;
    let holdWatches = false;
    const held: http.ServerResponse[] = [];
    const watches: http.ServerResponse[] = [];
    let watchStarted!: () => void;
    const watching = new Promise<void>((resolve) => (watchStarted = resolve));
    const { client, close } = await tlsApiServer('watched', (request, response) => {
      response.setHeader('Content-Type', 'application/json');
      const url = new URL(request.url ?? '/', 'https://127.0.0.1');
      if (url.pathname === '/api/v1') {
        response.end(JSON.stringify({ kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['list', 'watch'] }] }));
      } else if (url.pathname === '/api/v1/configmaps' && url.searchParams.get('watch') === 'true') {
        if (refuseWatches) {
          response.statusCode = 503;
          response.end('{}');
          return;
        }
        watches.push(response);
        if (holdWatches) held.push(response);
        else response.flushHeaders();
        watchStarted();
      } else if (request.method === 'PATCH' && url.pathname === '/api/v1/namespaces/app/configmaps/first') {
        response.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '10' }, data: { written: 'yes' } }));
      } else if (url.pathname === '/api/v1/configmaps' || url.pathname === '/api/v1/namespaces/app/configmaps') {
        lists += 1;
        response.end(JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'first', namespace: 'app', resourceVersion: '7' } }] }));
      } else {
        response.statusCode = 404;
        response.end('{}');
      }
    });
    return {
      client,
      lists: () => lists,
      send: (type, object) => watches.at(-1)!.write(`${JSON.stringify({ type, object })}\n`),
      endWatch: () => watches.at(-1)!.end(),
      watchCount: () => watches.length,
      holdWatches: (hold) => {
        holdWatches = hold;
        if (!hold) for (const response of held.splice(0)) response.flushHeaders();
      },
      closedByClient: (index) => new Promise<void>((resolve) => (watches[index]!.closed ? resolve() : watches[index]!.on('close', () => resolve()))),
      refuseWatches: (refuse) => (refuseWatches = refuse),
      watching,
      close: async () => {
        client.close();
        for (const response of watches) response.end();
        await close();
      },
    };
  }

  const names = (objects: readonly KubeObject[]) => objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

  /** Run `test` against a new watching server, closed after it whatever happens. */
  async function withWatchingServer(test: (server: Awaited<ReturnType<typeof watchingServer>>) => Promise<void>): Promise<void> {
    const server = await watchingServer();
    try {
      await test(server);
    } finally {
      await server.close();
    }
  }

  /** Watch ConfigMaps from the client's first list on, and wait until the watch is open. */
  async function watchConfigMaps(server: { client: KubeClient; watching: Promise<void> }): Promise<void> {
    server.client.watchKinds(['v1/ConfigMap']);
    await server.client.list('v1', 'ConfigMap');
    await server.watching;
  }

  it('lists once, then answers from the watch, each change included, without asking the server again', async () => {
    await withWatchingServer(async (server) => {
    server.client.watchKinds(['v1/ConfigMap']);
    expect(names(await server.client.list('v1', 'ConfigMap'))).toEqual(['app/first']);
    await server.watching;
    const lists = server.lists();
    const change = server.client.changed(10_000);
    server.send('ADDED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'second', namespace: 'other', resourceVersion: '8' } });
    await change;
    expect(names(await server.client.list('v1', 'ConfigMap'))).toEqual(['app/first', 'other/second']);
    expect(names(await server.client.list('v1', 'ConfigMap', 'other'))).toEqual(['other/second']);
    server.send('DELETED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '9' } });
    await server.client.changed(10_000);
    const listed = await server.client.list('v1', 'ConfigMap');
    expect(names(listed)).toEqual(['other/second']);
    expect(listed[0]).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(server.lists()).toBe(lists);
    });
  });

  it("reads its own writes: asks the server until the watch has seen what this client wrote", async () => {
    await withWatchingServer(async (server) => {
    await watchConfigMaps(server);
    await server.client.list('v1', 'ConfigMap');
    const before = server.lists();
    await server.client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app' }, data: { written: 'yes' } });
    // The watch has not sent the write yet: the server is asked.
    await server.client.list('v1', 'ConfigMap');
    expect(server.lists()).toBe(before + 1);
    const change = server.client.changed(10_000);
    server.send('MODIFIED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '10' }, data: { written: 'yes' } });
    await change;
    const listed = await server.client.list('v1', 'ConfigMap');
    expect(listed[0]?.data).toEqual({ written: 'yes' });
    expect(server.lists()).toBe(before + 1);
    });
  });

  it('lists as before while its watch fails, and answers from a new watch once one has listed again', async () => {
    await withWatchingServer(async (server) => {
    await watchConfigMaps(server);
    // The client's own list, and the watch's.
    expect(server.lists()).toBe(2);
    await server.client.list('v1', 'ConfigMap');
    expect(server.lists()).toBe(2);
    // The watch ends and the API server refuses the next one: the kept objects are not used.
    server.refuseWatches(true);
    server.endWatch();
    await waitFor('the failed watch to be seen', 5_000, async () => {
      await server.client.list('v1', 'ConfigMap');
      return server.lists() > 2 ? true : undefined;
    });
    // Watches are served again: a new one lists, then the client answers from it.
    server.refuseWatches(false);
    await waitFor('a new watch', 10_000, async () => {
      const before = server.lists();
      await server.client.list('v1', 'ConfigMap');
      return server.lists() === before ? true : undefined;
    });
    const settled = server.lists();
    expect(names(await server.client.list('v1', 'ConfigMap'))).toEqual(['app/first']);
    expect(server.lists()).toBe(settled);
    });
  });

  it('ends a watch that opens after it was closed (its request on its way when the client closed)', async () => {
    await withWatchingServer(async (server) => {
    await watchConfigMaps(server);
    // The server ends the watch and holds the answer to the one the client asks next; the
    // client is closed meanwhile, then the watch opens.
    server.holdWatches(true);
    server.endWatch();
    await waitFor('the watch asked again', 5_000, () => (server.watchCount() === 2 ? true : undefined));
    server.client.close();
    server.holdWatches(false);
    await server.closedByClient(1);
    });
  });

  it('lists as before a kind it was not asked to watch, and wakes only for the kinds a wait names', async () => {
    await withWatchingServer(async (server) => {
    await server.client.list('v1', 'ConfigMap');
    await server.client.list('v1', 'ConfigMap', 'app');
    expect(server.lists()).toBe(2);
    await watchConfigMaps(server);
    let other = false;
    void server.client.changed(60_000, ['v1/Secret']).then(() => (other = true));
    const started = Date.now();
    const change = server.client.changed(10_000, ['v1/ConfigMap']);
    server.send('MODIFIED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '8' } });
    await change;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(other).toBe(false);
    // With no change, a wait ends at its bound.
    const quiet = Date.now();
    await server.client.changed(300, ['v1/ConfigMap']);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(290);
    });
  });
});
