import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as stream from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { KubeConfig, ObjectApi, statusMessage } from './object-api';
import { RefusedError, UsageError } from '../base/errors';

/** A Kubernetes object as the API server returns it, read as plain JSON. */
export interface LiveObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly generation?: number;
    readonly ownerReferences?: readonly { readonly kind: string; readonly name: string; readonly controller?: boolean }[];
    readonly uid?: string;
    readonly deletionTimestamp?: string;
    readonly [field: string]: unknown;
  };
  readonly [field: string]: any;
}

/** `<Kind> <namespace>/<name>` (`<Kind> <name>` when cluster-scoped), as every message names an object. */
export function resourceId(kind: string, name: string, namespace?: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** Who the live operations write as (server-side field manager). */
const FIELD_MANAGER = 'platform-gitops-ops';

/** What the client library needs to find one object: its kind, name and namespace. */
function objectRef(apiVersion: string, kind: string, name: string, namespace: string | undefined): { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } {
  return { apiVersion, kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }) } };
}

/** Which cluster to talk to. */
export interface ConnectionOptions {
  /**
   * The kubeconfig context to use.
   * @default - the kubeconfig's current context
   */
  readonly context?: string;
  /**
   * `KUBECONFIG`: kubeconfig files, separated by `:`, merged in order as kubectl merges them (the first current context wins).
   * @default - ~/.kube/config, else the in-cluster service account
   */
  readonly kubeconfig?: string;
}

/**
 * One cluster, reached with the user's kubeconfig through the official Kubernetes client
 * library (@kubernetes/client-node): discovery, the generic object API and the typed core
 * API. Every object is read as plain JSON, the shape `kubectl get -o json` prints.
 */
export class ClusterConnection {
  /** The kubeconfig context in use. */
  readonly context: string;
  /** The API server's address. */
  readonly server: string;
  private readonly objects: ObjectApi;
  private readonly config: k8s.KubeConfig;

  constructor(options: ConnectionOptions = {}) {
    const config = new KubeConfig();
    const kubeconfig = options.kubeconfig === '' ? undefined : options.kubeconfig;
    try {
      if (kubeconfig === undefined) {
        // Where kubectl looks without KUBECONFIG: ~/.kube/config, else the in-cluster service
        // account. The library would otherwise fall back to http://localhost:8080.
        if (!fs.existsSync(path.join(os.homedir(), '.kube', 'config')) && process.env['KUBERNETES_SERVICE_HOST'] === undefined) {
          throw new Error('there is none: set KUBECONFIG or write ~/.kube/config');
        }
        config.loadFromDefault({}, false);
      } else {
        const [first, ...rest] = kubeconfig.split(path.delimiter).filter((file) => file !== '');
        config.loadFromFile(first!);
        for (const file of rest) {
          const more = new k8s.KubeConfig();
          more.loadFromFile(file);
          config.mergeConfig(more, true);
        }
      }
    } catch (error) {
      throw new RefusedError(`the kubeconfig${kubeconfig ? ` (KUBECONFIG=${kubeconfig})` : ''} cannot be read: ${(error as Error).message}`);
    }
    if (options.context !== undefined) {
      const known = config.getContexts().map((context) => context.name);
      if (!known.includes(options.context)) {
        throw new UsageError(`--context "${options.context}" is not in the kubeconfig (its contexts: ${known.join(', ') || 'none'})`);
      }
      config.setCurrentContext(options.context);
    }
    const cluster = config.getCurrentCluster();
    if (cluster === null) {
      throw new RefusedError(`no cluster to talk to: the kubeconfig${kubeconfig ? ` (KUBECONFIG=${kubeconfig})` : ''} has no current context; give --context`);
    }
    this.config = config;
    this.context = config.getCurrentContext();
    this.server = cluster.server;
    this.objects = ObjectApi.forConfig(config);
  }

  /** One object, or undefined when it does not exist. */
  async get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<LiveObject | undefined> {
    try {
      return (await this.objects.read(objectRef(apiVersion, kind, name, namespace))) as LiveObject;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw this.failure(`read ${resourceId(kind, name, namespace)}`, error);
    }
  }

  /** Every object of a kind (in a namespace), optionally filtered by a label and a field selector; [] when the kind is not served. */
  async list(apiVersion: string, kind: string, namespace?: string, labelSelector?: string, fieldSelector?: string): Promise<LiveObject[]> {
    try {
      const list = await this.objects.list(apiVersion, kind, namespace, undefined, undefined, undefined, fieldSelector, labelSelector);
      return list.items.map((item) => ({ ...item, apiVersion, kind }) as LiveObject);
    } catch (error) {
      if (statusOf(error) === 404 || /unrecognized|not found|no resource/i.test(String((error as Error).message))) return [];
      throw this.failure(`list ${kind}${namespace === undefined ? '' : ` in ${namespace}`}`, error);
    }
  }

  /**
   * List the objects of a kind the API server must serve, as `list` does; refused, naming
   * `resource` (what is missing, for a person) and `hint`, where the API server does not serve
   * the kind (404: its CustomResourceDefinition is not installed), which `list` takes for none.
   */
  async listServed(apiVersion: string, kind: string, namespace: string | undefined, resource: string, hint: string): Promise<LiveObject[]> {
    try {
      const list = await this.objects.list(apiVersion, kind, namespace);
      return list.items.map((item) => ({ ...item, apiVersion, kind }) as LiveObject);
    } catch (error) {
      if (statusOf(error) === 404 || /unrecognized|not found|no resource/i.test(String((error as Error).message))) {
        throw new RefusedError(`${resource} is not served by ${this.server} (context ${this.context}): ${hint}`);
      }
      throw this.failure(`list ${kind}${namespace === undefined ? '' : ` in ${namespace}`}`, error);
    }
  }

  /** Create one object (POST); refused, with the API server's answer, when it exists or is invalid. */
  async create(object: { readonly apiVersion: string; readonly kind: string; readonly metadata: { readonly name: string; readonly namespace?: string; readonly [field: string]: unknown }; readonly [field: string]: unknown }): Promise<LiveObject> {
    try {
      return (await this.objects.write(object, { method: 'POST', contentType: 'application/json' }, object, { fieldManager: FIELD_MANAGER })) as LiveObject;
    } catch (error) {
      throw this.failure(`create ${resourceId(object.kind, object.metadata.name, object.metadata.namespace)}`, error);
    }
  }

  /** Delete one object, its dependents in the background (a Job's pods); false when it did not exist. */
  async delete(apiVersion: string, kind: string, name: string, namespace: string | undefined): Promise<boolean> {
    try {
      await this.objects.delete(objectRef(apiVersion, kind, name, namespace), undefined, undefined, undefined, undefined, 'Background');
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw this.failure(`delete ${resourceId(kind, name, namespace)}`, error);
    }
  }

  /** A JSON merge patch (RFC 7386) of one object; `null` removes a field. */
  async mergePatch(apiVersion: string, kind: string, name: string, namespace: string | undefined, patch: Record<string, unknown>): Promise<LiveObject> {
    try {
      return (await this.objects.write(objectRef(apiVersion, kind, name, namespace), { method: 'PATCH', contentType: k8s.PatchStrategy.MergePatch }, patch, { fieldManager: FIELD_MANAGER })) as LiveObject;
    } catch (error) {
      throw this.failure(`patch ${resourceId(kind, name, namespace)}`, error);
    }
  }

  /** A JSON patch (RFC 6902) of one object: operations applied in order, all or none. */
  async jsonPatch(apiVersion: string, kind: string, name: string, namespace: string | undefined, operations: readonly { op: string; path: string; value?: unknown }[]): Promise<LiveObject> {
    try {
      return (await this.objects.write(objectRef(apiVersion, kind, name, namespace), { method: 'PATCH', contentType: k8s.PatchStrategy.JsonPatch }, operations, { fieldManager: FIELD_MANAGER })) as LiveObject;
    } catch (error) {
      throw this.failure(`patch ${resourceId(kind, name, namespace)}`, error);
    }
  }

  /**
   * Evict a pod through the Eviction API (policy/v1), as `kubectl drain` does: the API server
   * refuses (HTTP 429) while the pod's PodDisruptionBudget allows no disruption. 'gone' when
   * the pod no longer exists.
   */
  async evict(namespace: string, pod: string): Promise<'evicted' | 'gone'> {
    const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace } };
    try {
      await this.objects.write(objectRef('v1', 'Pod', pod, namespace), { method: 'POST', contentType: 'application/json', subresource: 'eviction' }, eviction);
      return 'evicted';
    } catch (error) {
      if (statusOf(error) === 404) return 'gone';
      throw this.failure(`evict ${resourceId('Pod', pod, namespace)}`, error);
    }
  }

  /**
   * Run a command in a pod's container, as `kubectl exec` (the API server's exec
   * subresource, over a WebSocket); its output and whether it exited 0, bounded by `timeoutMs`.
   * `stdin`, when given, is written to the command's standard input (a way to hand it a secret
   * that no command line shows), which then stays open until the command ends: the end of a
   * stream does not reach every kubelet through the API server (kwok's does not), and before
   * the v5 protocol the client library ends it by closing the whole session. The command reads
   * what it needs (a number of lines), never up to the end.
   */
  async exec(namespace: string, pod: string, container: string, command: readonly string[], timeoutMs: number, stdin?: string): Promise<{ stdout: string; stderr: string; ok: boolean; message: string }> {
    let stdout = '';
    let stderr = '';
    const sink = (append: (text: string) => void) =>
      new stream.Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      });
    return new Promise((resolve, reject) => {
      let webSocket: { close(): void } | undefined;
      const timer = setTimeout(() => {
        webSocket?.close();
        reject(new RefusedError(`exec ${command.join(' ')} in ${namespace}/${pod} (${container}): no answer within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      new k8s.Exec(this.config)
        .exec(namespace, pod, container, [...command], sink((t) => (stdout += t)), sink((t) => (stderr += t)), stdin === undefined ? null : openInput(stdin), false, (status) => {
          clearTimeout(timer);
          resolve({ stdout, stderr, ok: status.status === 'Success', message: status.message ?? '' });
        })
        .then((opened) => {
          webSocket = opened;
        })
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(this.failure(`exec in Pod ${namespace}/${pod}`, error));
        });
    });
  }

  /** A container's log, as `kubectl logs [--previous] --tail <n>`: the last `tailLines` lines of the current (or the previous) run. */
  async logs(namespace: string, pod: string, container: string, options: { readonly previous?: boolean; readonly tailLines: number }): Promise<string> {
    try {
      return await this.config.makeApiClient(k8s.CoreV1Api).readNamespacedPodLog({ name: pod, namespace, container, previous: options.previous ?? false, tailLines: options.tailLines });
    } catch (error) {
      throw this.failure(`read the ${options.previous ? 'previous ' : ''}log of ${container} in Pod ${namespace}/${pod}`, error);
    }
  }

  /**
   * Forward a local port to a pod's port, as `kubectl port-forward` (the API server's
   * portforward subresource): each connection to 127.0.0.1:<local> reaches the pod.
   * `localPort` 0 takes a free one. Resolves once listening; `close` stops it.
   */
  async portForward(namespace: string, pod: string, port: number, localPort: number): Promise<{ readonly localPort: number; close(): Promise<void> }> {
    const forward = new k8s.PortForward(this.config);
    // Each connection has its WebSocket to the API server; both end together, or the
    // process would wait for the socket the API server keeps open.
    const connections = new Set<{ socket: net.Socket; close: () => void }>();
    const server = net.createServer((socket) => {
      const connection: { socket: net.Socket; close: () => void } = { socket, close: () => void socket.destroy() };
      connections.add(connection);
      // A peer that resets the connection ends it; it never takes the process down.
      socket.on('error', () => connection.close());
      socket.on('close', () => {
        connections.delete(connection);
        connection.close();
      });
      forward
        .portForward(namespace, pod, [port], socket, null, socket)
        .then((opened) => {
          const webSocket = typeof opened === 'function' ? opened() : opened;
          connection.close = () => {
            socket.destroy();
            webSocket?.close();
          };
          if (socket.destroyed) connection.close();
        })
        .catch(() => socket.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new RefusedError(`cannot listen on 127.0.0.1:${localPort} to forward to ${namespace}/${pod}:${port}: ${error.message}`)));
      server.listen(localPort, '127.0.0.1', resolve);
    });
    return {
      localPort: (server.address() as net.AddressInfo).port,
      close: () =>
        new Promise((resolve) => {
          for (const connection of connections) connection.close();
          server.close(() => resolve());
        }),
    };
  }

  /** An error that says what was asked of which cluster and what the API server answered. */
  private failure(what: string, error: unknown): ClusterRefusal {
    const status = statusOf(error);
    const body = (error as { body?: unknown }).body;
    const message = status === undefined || body === undefined ? (error as Error).message : statusMessage(typeof body === 'string' ? parsed(body) : body, status);
    return new ClusterRefusal(`cannot ${what} on ${this.server} (context ${this.context}): ${status === undefined ? '' : `HTTP ${status}: `}${message}`, status);
  }
}

/** A stream that holds `text` and never ends (see `exec`). */
function openInput(text: string): stream.Readable {
  const input = new stream.Readable({ read() {} });
  input.push(Buffer.from(text));
  return input;
}

/** A call the API server refused or did not answer: its message names the call and the cluster. */
export class ClusterRefusal extends RefusedError {
  constructor(
    message: string,
    /** The HTTP status, when the API server answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The HTTP status of a failed call of the client library, if it got an answer. */
function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/** A body parsed as JSON, or the text itself. */
function parsed(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}
