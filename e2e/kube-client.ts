import * as fs from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { E2eError } from '../src/base/errors';
import { KubeConfig, ObjectApi, statusMessage } from '../src/cluster/object-api';
import { waitFor } from './processes';

/** A Kubernetes object as the API server returns it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; name: string }[];
    deletionTimestamp?: string;
    resourceVersion?: string;
    [key: string]: unknown;
  };
  [key: string]: any;
}

/** How the harness names an object in its messages: as the live operations do. */
export { resourceId } from '../src/cluster/connection';

/** An answer of the API server that is not 2xx. */
export class ApiError extends E2eError {
  constructor(
    public readonly status: number,
    public readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Apply-patch, merge-patch and JSON bodies, as the API server names them. */
const CONTENT = { apply: 'application/apply-patch+yaml', merge: 'application/merge-patch+json', json: 'application/json' } as const;

/**
 * The harness's client of the e2e API server, on the official client library (the same
 * generic object API as `npm run ops`, src/cluster/object-api.ts): client-certificate
 * authentication, discovery of kinds (CRDs included, asked again on a miss), server-side
 * apply, dry-run with strict field validation, list, merge patch of an object or its status.
 */
export class KubeClient {
  private readonly config = new KubeConfig();
  private readonly objects: ObjectApi;
  /** The kinds `watchKinds` asked for, by `apiVersion/kind`, once their watch started. */
  private readonly watched = new Map<string, WatchedKind>();
  private readonly kindsToWatch = new Set<string>();
  /** Per watched kind, the newest resourceVersion this client's own writes returned. */
  private readonly ownWrites = new Map<string, bigint>();
  private closed = false;
  private readonly changeWaiters = new Set<{ readonly kinds?: ReadonlySet<string>; readonly wake: () => void }>();

  constructor(
    /** `https://127.0.0.1:<port>` */
    public readonly server: string,
    tls: { ca: string; cert: string; key: string },
    private readonly fieldManager = 'platform-gitops-e2e',
  ) {
    this.config.loadFromOptions({
      clusters: [{ name: 'e2e', server, caData: fs.readFileSync(tls.ca).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'e2e', certData: fs.readFileSync(tls.cert).toString('base64'), keyData: fs.readFileSync(tls.key).toString('base64') }],
      contexts: [{ name: 'e2e', cluster: 'e2e', user: 'e2e' }],
      currentContext: 'e2e',
    });
    this.objects = ObjectApi.forConfig(this.config);
  }

  /**
   * Keep the objects of these kinds (`v1/Pod`, `argoproj.io/v1alpha1/Application`) from a
   * watch, from the first `list` of each on: the loops that read them every second or two
   * then cost the API server nothing between changes, and `changed` wakes them at a change.
   */
  watchKinds(kinds: readonly string[]): void {
    for (const kind of kinds) this.kindsToWatch.add(kind);
  }

  /**
   * Resolves at the next change of a watched kind (of one of `kinds`, when given), or after
   * `timeoutMs`. Ask before the work whose changes should wake the next round.
   */
  changed(timeoutMs: number, kinds?: readonly string[]): Promise<void> {
    return new Promise((resolve) => {
      const waiter = {
        ...(kinds === undefined ? {} : { kinds: new Set(kinds) }),
        wake: (): void => {
          clearTimeout(timer);
          this.changeWaiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, timeoutMs);
      this.changeWaiters.add(waiter);
      // A kind nothing listed yet is watched from now on (once served).
      for (const kind of kinds ?? []) void this.startWatch(kind).catch(() => undefined);
    });
  }

  /** Stop the watches. */
  close(): void {
    this.closed = true;
    for (const watched of this.watched.values()) watched.stop();
    this.watched.clear();
  }

  /** Whether the API server answers /readyz with ok. */
  async ready(): Promise<boolean> {
    return new k8s.Health(this.config).readyz({ timeout: 5_000 }).catch(() => false);
  }

  /** The API server's version (`v1.36.3`). */
  async version(): Promise<string> {
    return String((await this.config.makeApiClient(k8s.VersionApi).getCode()).gitVersion);
  }

  /** Run a call of the library; its failure as an ApiError naming the call and the object. */
  private async call<T>(what: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (error instanceof k8s.ApiException) {
        const body = error.body as { reason?: unknown } | undefined;
        throw new ApiError(error.code, typeof body?.reason === 'string' ? body.reason : '', `${what}: ${error.code} ${statusMessage(error.body, error.code)}`);
      }
      if (error instanceof Error && /Unrecognized API version and kind/.test(error.message)) throw new ApiError(404, 'NotFound', `${what}: the server does not serve it`);
      throw error;
    }
  }

  /** `PATCH <namespace>/<Kind>/<name>`: one word after the verb, as the dry-run's answers are read. */
  private label(verb: string, object: Pick<KubeObject, 'kind' | 'metadata'>): string {
    return `${verb} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.kind}/${object.metadata.name ?? ''}`;
  }

  /** Whether the server serves a kind; undefined when it does not. */
  async resource(apiVersion: string, kind: string): Promise<{ namespaced: boolean } | undefined> {
    return (await this.objects.serves(apiVersion, kind)) ? { namespaced: true } : undefined;
  }

  /**
   * Server-side apply (what Argo CD and kubectl do with --server-side); `dryRun` asks
   * the server to run admission, defaulting and validation without storing anything.
   */
  async apply(object: KubeObject, options: { dryRun?: boolean; force?: boolean } = {}): Promise<KubeObject> {
    const applied: KubeObject = await this.call(this.label('PATCH', object), () =>
      this.objects.write(object as unknown as k8s.KubernetesObject, { method: 'PATCH', contentType: CONTENT.apply }, object, {
        fieldManager: this.fieldManager,
        fieldValidation: 'Strict',
        ...((options.force ?? true) ? { force: 'true' as const } : {}),
        ...(options.dryRun ? { dryRun: 'All' as const } : {}),
      }),
    );
    if (!options.dryRun) this.wrote(object, applied);
    return applied;
  }

  async get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<KubeObject | undefined> {
    try {
      return await this.call(`GET ${namespace ? `${namespace}/` : ''}${kind}/${name}`, () => this.objects.read({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } }) as Promise<KubeObject>);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Every object of a kind, in all namespaces (or one); [] when the kind is not served (yet). */
  async list(apiVersion: string, kind: string, namespace?: string): Promise<KubeObject[]> {
    const watched = this.watched.get(`${apiVersion}/${kind}`);
    if (watched?.synced && watched.hasSeen(this.ownWrites.get(`${apiVersion}/${kind}`))) return watched.list(namespace).map((item) => ({ ...item, apiVersion, kind }));
    if (!(await this.objects.serves(apiVersion, kind))) return [];
    await this.startWatch(`${apiVersion}/${kind}`);
    try {
      const list = await this.call(`GET ${kind}`, () => this.objects.list(apiVersion, kind, namespace));
      return ((list.items ?? []) as KubeObject[]).map((item) => ({ ...item, apiVersion, kind }));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        this.objects.forgetDiscovery();
        return [];
      }
      throw error;
    }
  }

  /**
   * Every object of a kind that a converged run synced `expected` of: the read is retried,
   * discovery asked again, until that many are listed (at most `seconds`), so one request
   * that fails or one discovery that misses on a loaded machine does not read as none.
   * With `expected` 0 it is one read, and a failure reads as none.
   */
  async listSynced(apiVersion: string, kind: string, expected: number, seconds = 30): Promise<KubeObject[]> {
    if (expected === 0) return this.list(apiVersion, kind).catch(() => []);
    return waitFor(`the ${expected} synced ${kind} objects to be listed`, seconds * 1000, async () => {
      const found = await this.list(apiVersion, kind);
      if (found.length >= expected) return found;
      this.forgetDiscovery();
      return undefined;
    });
  }

  /** Create; `dryRun` asks the server to run admission and validation without storing anything. */
  async create(object: KubeObject, options: { dryRun?: boolean } = {}): Promise<KubeObject> {
    const created: KubeObject = await this.call(this.label('POST', object), () =>
      this.objects.write(object as unknown as k8s.KubernetesObject, { method: 'POST', contentType: CONTENT.json }, object, options.dryRun ? { dryRun: 'All', fieldValidation: 'Strict' } : {}),
    );
    if (!options.dryRun) this.wrote(object, created);
    return created;
  }

  /** JSON merge patch of the object (or of its status subresource). */
  async mergePatch(object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>, patch: unknown, subresource?: 'status'): Promise<KubeObject> {
    const patched: KubeObject = await this.call(this.label('PATCH', object), () =>
      this.objects.write(object as unknown as k8s.KubernetesObject, { method: 'PATCH', contentType: CONTENT.merge, ...(subresource ? { subresource } : {}) }, patch),
    );
    this.wrote(object, patched);
    return patched;
  }

  async delete(object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<void> {
    try {
      await this.call(this.label('DELETE', object), () => this.objects.delete(object as unknown as k8s.KubernetesObject));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
    this.wrote(object, undefined);
  }

  /**
   * Read your own writes from a watch: the kind's watch answers a list once it has seen the
   * resourceVersion this client's write returned (for a deletion, any later event); until then
   * the list asks the server, so a pass never misses what the pass before it wrote.
   */
  private wrote(object: Pick<KubeObject, 'apiVersion' | 'kind'>, written: KubeObject | undefined): void {
    const id = `${object.apiVersion}/${object.kind}`;
    const watched = this.watched.get(id);
    if (watched === undefined) return;
    const version = resourceVersionNumber(written?.metadata?.resourceVersion) ?? (watched.version() ?? 0n) + 1n;
    if (version > (this.ownWrites.get(id) ?? 0n)) this.ownWrites.set(id, version);
  }

  /** Forget discovered kinds (after CRDs were installed or removed). */
  forgetDiscovery(): void {
    this.objects.forgetDiscovery();
  }

  /** Start the watch of a kind `watchKinds` named (`apps/v1/Deployment`), once it is served. */
  private async startWatch(id: string): Promise<void> {
    if (this.closed || this.watched.has(id) || !this.kindsToWatch.has(id)) return;
    const apiVersion = id.slice(0, id.lastIndexOf('/'));
    const kind = id.slice(id.lastIndexOf('/') + 1);
    const path = await this.objects.collectionPath(apiVersion, kind);
    if (path === undefined || this.closed || this.watched.has(id)) return;
    this.watched.set(id, new WatchedKind(path, new k8s.Watch(this.config), () => this.objects.list(apiVersion, kind), () => this.wakeWaiters(id)));
  }

  private wakeWaiters(kind: string): void {
    for (const waiter of [...this.changeWaiters]) if (waiter.kinds === undefined || waiter.kinds.has(kind)) waiter.wake();
  }
}

/** A resourceVersion as a number; undefined when it is not one (they are opaque to clients, and etcd revisions on this API server). */
function resourceVersionNumber(resourceVersion: string | undefined): bigint | undefined {
  return resourceVersion !== undefined && /^\d+$/.test(resourceVersion) ? BigInt(resourceVersion) : undefined;
}

/**
 * One kind's objects as a watch keeps them (the client library's ListWatch: one LIST, then
 * each change the API server sends; a 410 Gone lists again). A watch that fails (the kind no
 * longer served, the API server gone) is replaced a second later by a new one that lists
 * first, and until a LIST has answered the kind is not `synced`: the client lists as before,
 * so it never answers from objects kept before a failure.
 */
class WatchedKind {
  private informer: k8s.ListWatch<k8s.KubernetesObject>;
  private listed = false;
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly watch: k8s.Watch,
    private readonly listFn: () => Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>,
    private readonly onChange: () => void,
  ) {
    this.informer = this.start();
  }

  /** Whether the current watch's LIST answered and filled it (it keeps the objects from then on; a 410 Gone empties it until it lists again). */
  get synced(): boolean {
    return this.listed && !this.stopped && this.informer.latestResourceVersion() !== '';
  }

  /** The newest resourceVersion the watch has seen, as a number (the API server's are etcd revisions). */
  version(): bigint | undefined {
    return resourceVersionNumber(this.informer.latestResourceVersion());
  }

  /** Whether the watch has seen `resourceVersion` (an own write's), or there is none to see. */
  hasSeen(resourceVersion: bigint | undefined): boolean {
    if (resourceVersion === undefined) return true;
    const seen = this.version();
    return seen !== undefined && seen >= resourceVersion;
  }

  list(namespace?: string): readonly KubeObject[] {
    // Plain JSON, as the API server sent it (ObjectApi and the library's Watch parse it so).
    return this.informer.list(namespace) as readonly unknown[] as readonly KubeObject[];
  }

  stop(): void {
    this.stopped = true;
    void this.informer.stop();
  }

  private start(): k8s.ListWatch<k8s.KubernetesObject> {
    this.listed = false;
    // A watch whose request was on its way when the kind was stopped is ended as it opens
    // (ListWatch aborts only a watch that has opened).
    const watch = {
      watch: async (...args: Parameters<k8s.Watch['watch']>): Promise<AbortController> => {
        const controller = await this.watch.watch(...args);
        if (this.stopped) controller.abort();
        return controller;
      },
    } as k8s.Watch;
    const informer = new k8s.ListWatch(this.path, watch, async () => {
      const list = await this.listFn();
      // Stopped while it listed: no watch is opened after the stop (ListWatch checks only before the list).
      if (this.stopped) throw new Error('stopped');
      if (informer === this.informer) this.listed = true;
      return list;
    }, false);
    informer.on('change', () => this.onChange());
    informer.on('error', () => {
      if (informer !== this.informer) return;
      this.listed = false;
      if (!this.stopped) setTimeout(() => {
        if (!this.stopped && informer === this.informer) this.informer = this.start();
      }, 1_000).unref();
    });
    void informer.start().catch(() => undefined);
    return informer;
  }
}
