import * as fs from 'node:fs';
import * as https from 'node:https';
import { E2eError } from '../src/base/errors';

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

/** Where a kind is served: its REST path segment and whether it lives in a namespace. */
interface ResourceInfo {
  readonly plural: string;
  readonly namespaced: boolean;
}

/** An answer of the API server that is not 2xx. */
/** `<Kind> <namespace>/<name>` (`<Kind> <name>` when cluster-scoped), as the harness names an object in its messages. */
export function resourceId(kind: string, name: string, namespace?: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

export class ApiError extends E2eError {
  constructor(
    public readonly status: number,
    public readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A small client for the e2e API server: client-certificate authentication, discovery of
 * kinds (CRDs included, refreshed on a miss), server-side apply, dry-run, list, patch.
 * Just what the harness needs; every call is bounded by a timeout.
 */
export class KubeClient {
  private readonly agent: https.Agent;
  private readonly resources = new Map<string, ResourceInfo>();

  constructor(
    /** `https://127.0.0.1:<port>` */
    public readonly server: string,
    tls: { ca: string; cert: string; key: string },
    private readonly fieldManager = 'platform-gitops-e2e',
  ) {
    this.agent = new https.Agent({
      ca: fs.readFileSync(tls.ca),
      cert: fs.readFileSync(tls.cert),
      key: fs.readFileSync(tls.key),
      keepAlive: true,
      maxSockets: 8,
    });
  }

  close(): void {
    this.agent.destroy();
  }

  /** One HTTP call; parses JSON; throws ApiError on a non-2xx answer. */
  request(method: string, urlPath: string, body?: string, contentType = 'application/json', timeoutMs = 30_000): Promise<any> {
    const url = new URL(urlPath, this.server);
    return new Promise((resolve, reject) => {
      const req = https.request(
        url,
        {
          method,
          agent: this.agent,
          headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': contentType } : {}) },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: any = text;
            try {
              parsed = text.length > 0 ? JSON.parse(text) : {};
            } catch {
              // not JSON (e.g. /readyz): keep the text
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve(parsed);
            else reject(new ApiError(status, parsed?.reason ?? '', `${method} ${url.pathname}: ${status} ${parsed?.message ?? text}`));
          });
        },
      );
      req.on('timeout', () => req.destroy(new E2eError(`${method} ${url.pathname}: no answer in ${timeoutMs} ms`)));
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  private async discover(apiVersion: string): Promise<void> {
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let list: any;
    try {
      list = await this.request('GET', base);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return;
      throw error;
    }
    for (const r of list.resources ?? []) {
      if (String(r.name).includes('/')) continue;
      this.resources.set(`${apiVersion}/${r.kind}`, { plural: r.name, namespaced: r.namespaced });
    }
  }

  /** The REST path segment of a kind; undefined when the server does not serve it. */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    const key = `${apiVersion}/${kind}`;
    if (!this.resources.has(key)) await this.discover(apiVersion);
    return this.resources.get(key);
  }

  private async path(apiVersion: string, kind: string, namespace?: string, name?: string): Promise<string> {
    const info = await this.resource(apiVersion, kind);
    if (!info) throw new ApiError(404, 'NotFound', `the server does not serve ${kind} (${apiVersion})`);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = info.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
    return `${base}${ns}/${info.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  /**
   * Server-side apply (what Argo CD and kubectl do with --server-side); `dryRun` asks
   * the server to run admission, defaulting and validation without storing anything.
   */
  async apply(object: KubeObject, options: { dryRun?: boolean; force?: boolean } = {}): Promise<KubeObject> {
    const target = await this.path(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name);
    const query = new URLSearchParams({ fieldManager: this.fieldManager, fieldValidation: 'Strict' });
    if (options.force ?? true) query.set('force', 'true');
    if (options.dryRun) query.set('dryRun', 'All');
    return this.request('PATCH', `${target}?${query}`, JSON.stringify(object), 'application/apply-patch+yaml');
  }

  async get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<KubeObject | undefined> {
    try {
      return await this.request('GET', await this.path(apiVersion, kind, namespace, name));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Every object of a kind, in all namespaces; [] when the kind is not served (yet). */
  async list(apiVersion: string, kind: string, namespace?: string): Promise<KubeObject[]> {
    const info = await this.resource(apiVersion, kind);
    if (!info) return [];
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = namespace !== undefined && info.namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    try {
      const list = await this.request('GET', `${base}${ns}/${info.plural}`);
      return (list.items ?? []).map((item: KubeObject) => ({ ...item, apiVersion, kind }));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        this.resources.delete(`${apiVersion}/${kind}`);
        return [];
      }
      throw error;
    }
  }

  /** Create; `dryRun` asks the server to run admission and validation without storing anything. */
  async create(object: KubeObject, options: { dryRun?: boolean } = {}): Promise<KubeObject> {
    const info = await this.resource(object.apiVersion, object.kind);
    if (!info) throw new ApiError(404, 'NotFound', `the server does not serve ${object.kind} (${object.apiVersion})`);
    const target = await this.path(object.apiVersion, object.kind, object.metadata.namespace);
    const query = options.dryRun ? `?${new URLSearchParams({ dryRun: 'All', fieldValidation: 'Strict' })}` : '';
    return this.request('POST', `${target}${query}`, JSON.stringify(object));
  }

  /** JSON merge patch of the object (or of its status subresource). */
  async mergePatch(object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>, patch: unknown, subresource?: 'status'): Promise<KubeObject> {
    const target = await this.path(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name);
    return this.request('PATCH', subresource ? `${target}/${subresource}` : target, JSON.stringify(patch), 'application/merge-patch+json');
  }

  async delete(object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<void> {
    try {
      await this.request('DELETE', await this.path(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }

  /** The API server's version (`v1.36.3`). */
  async version(): Promise<string> {
    const info = await this.request('GET', '/version');
    return String(info.gitVersion);
  }

  /** Forget discovered kinds (after CRDs were installed or removed). */
  forgetDiscovery(): void {
    this.resources.clear();
  }
}
