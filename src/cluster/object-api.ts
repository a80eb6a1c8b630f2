import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';

/**
 * How long a kept connection may stay idle before the client closes it: well inside the API
 * server's own idle timeout (90 s, k8s.io/apiserver `SecureServingInfo.Serve`), so that no
 * request goes out on a connection the server is closing.
 */
const IDLE_CONNECTION_MS = 30_000;

/**
 * The client library's kubeconfig, keeping its connections between requests. The library
 * (1.4) makes a new agent for every request (`applySecurityAuthentication` calls
 * `createAgent`), so every request of a verb opened a connection of its own, with a TLS
 * handshake of its own on https: dozens per verb, each a round trip or two to a remote
 * cluster (kubernetes-client/javascript#2893; 2.0.1 still makes a new dispatcher, undici's,
 * for every request, docs/runtime.md). This keeps one keep-alive agent
 * per server and TLS identity (CA, client certificate and key, verification), as client-go
 * keeps one transport per configuration. An agent of a proxy (`proxy-url`) stays the
 * library's. Watches take their agents elsewhere (`applyToFetchOptions`), unchanged.
 */
export class KubeConfig extends k8s.KubeConfig {
  private readonly agents = new Map<string, http.Agent>();

  override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const made = context.getAgent();
    const cluster = this.getCurrentCluster();
    if (made === undefined || cluster === null || cluster.proxyUrl !== undefined) return;
    const secure = made.constructor === https.Agent;
    // Only the library's own plain agents are replaced: a subclass is a proxy's.
    if (!secure && made.constructor !== http.Agent) return;
    // What the library gave the agent it made (Node keeps an agent's options as `options`).
    const options = (made as unknown as { readonly options: https.AgentOptions }).options;
    const identity = [cluster.server, secure, options.ca, options.cert, options.key, options.pfx, options.passphrase, options.rejectUnauthorized, options.servername].map((part) => (Buffer.isBuffer(part) ? part.toString('base64') : part));
    const key = createHash('sha256').update(JSON.stringify(identity)).digest('hex');
    let agent = this.agents.get(key);
    if (agent === undefined) {
      const kept = { ...options, keepAlive: true, timeout: IDLE_CONNECTION_MS };
      agent = secure ? new https.Agent(kept) : new http.Agent(kept);
      this.agents.set(key, agent);
    }
    context.setAgent(agent);
  }
}

/** Every query parameter a write may carry, by name (the API server's own). */
export interface WriteQuery {
  /** `All`: admission, defaulting and validation run; nothing is stored. */
  readonly dryRun?: 'All';
  /** `Strict`: a field the schema does not know is an error, not a warning. */
  readonly fieldValidation?: 'Strict';
  /** Who writes (server-side apply's field manager). */
  readonly fieldManager?: string;
  /** Server-side apply: take fields another manager owns. */
  readonly force?: 'true';
}

/**
 * The client library's generic object API (discovery of every kind, CRDs included, and the
 * REST path of an object), answering plain JSON: the library's model classes turn
 * timestamps into Dates and know only the built-in kinds' fields, while the live
 * operations compare objects as `kubectl get -o json` prints them. Writes the generic
 * methods lack, a subresource (`status`) and `fieldValidation`, go through `write`.
 * The one Kubernetes client of the project: `npm run ops` and the e2e harness use it.
 */
export class ObjectApi extends k8s.KubernetesObjectApi {
  /** An API client for `config` (its current context), as the library makes its own. */
  static forConfig(config: k8s.KubeConfig): ObjectApi {
    return config.makeApiClient(ObjectApi);
  }

  protected override async processResponse<T extends k8s.KubernetesObject>(response: k8s.ResponseContext): Promise<T> {
    const text = await response.body.text();
    let body: unknown = text;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) return body as T;
    throw new k8s.ApiException(response.httpStatusCode, statusMessage(body, response.httpStatusCode), body, response.headers);
  }

  /**
   * A write of one object: create (POST) or a patch (PATCH) of it or of its `status`, or a
   * POST to its `eviction` (a pod's), with the query given.
   */
  async write(
    spec: k8s.KubernetesObject,
    action: { readonly method: 'POST' | 'PATCH'; readonly contentType: string; readonly subresource?: 'status' | 'eviction' },
    body: unknown,
    query: WriteQuery = {},
  ): Promise<any> {
    // A create goes to the collection; a patch and a subresource to the object's own path.
    const path = await this.specUriPath(structuredClone(spec), action.method === 'POST' && action.subresource === undefined ? 'create' : 'patch');
    const context = this.configuration.baseServer.makeRequestContext(
      action.subresource === undefined ? path : `${path}/${action.subresource}`,
      action.method === 'POST' ? k8s.HttpMethod.POST : k8s.HttpMethod.PATCH,
    );
    context.setHeaderParam('Accept', 'application/json');
    context.setHeaderParam('Content-Type', action.contentType);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) context.setQueryParam(name, value);
    context.setBody(JSON.stringify(body));
    return this.requestPromise(context);
  }

  /** Whether the server serves a kind (a CRD installed and established); discovery asked again on a miss. */
  async serves(apiVersion: string, kind: string): Promise<boolean> {
    try {
      return (await this.resource(apiVersion, kind)) !== undefined;
    } catch (error) {
      if (error instanceof k8s.ApiException && error.code === 404) return false;
      throw error;
    }
  }

  /** The path of a served kind's objects in every namespace (`/api/v1/pods`, what a watch of them reads); undefined when not served. */
  async collectionPath(apiVersion: string, kind: string): Promise<string | undefined> {
    const resource = await this.resource(apiVersion, kind).catch(() => undefined);
    if (resource === undefined) return undefined;
    return `${apiVersion.includes('/') ? '/apis' : '/api'}/${apiVersion}/${resource.name}`;
  }

  /** Forget what discovery found (after CRDs were installed or removed). */
  forgetDiscovery(): void {
    this.apiVersionResourceCache = {};
  }
}

/** The message of a Kubernetes Status body, or the HTTP status. */
export function statusMessage(body: unknown, code: number): string {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : typeof body === 'string' && body !== '' ? body : `HTTP ${code}`;
}
