import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** A rendered Kubernetes object as the gate reads it. */
export interface ManifestObject {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly [field: string]: any;
}

/** An object and where it was rendered: `dist/<environment>/<file>`. */
export interface LocatedObject {
  readonly environment: string;
  /** Path of the file inside the environment's folder, e.g. `application.yaml`. */
  readonly file: string;
  readonly object: ManifestObject;
}

/** A file that is not a stream of YAML mappings. */
export interface UnreadableFile {
  readonly environment: string;
  readonly file: string;
  readonly problem: string;
}

export interface RenderedTree {
  readonly environments: readonly string[];
  readonly objects: readonly LocatedObject[];
  readonly files: number;
  readonly unreadable: readonly UnreadableFile[];
}

/** Rendered manifests end in `.yaml` (src/contract/layout.ts). */
const MANIFEST_FILE = /\.ya?ml$/;

/**
 * Every object below `dir`, which holds one folder per environment (`dist/<environment>/`),
 * in a stable order: environments, then files, then documents as written.
 */
export function readRenderedTree(dir: string): RenderedTree {
  const environments = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort();
  const objects: LocatedObject[] = [];
  const unreadable: UnreadableFile[] = [];
  let files = 0;
  for (const environment of environments) {
    const root = path.join(dir, environment);
    const names = (fs.readdirSync(root, { recursive: true }) as string[]).filter((file) => MANIFEST_FILE.test(file)).sort();
    for (const file of names) {
      files += 1;
      for (const document of parseAllDocuments(fs.readFileSync(path.join(root, file), 'utf8'))) {
        if (document.errors.length > 0) {
          unreadable.push({ environment, file, problem: document.errors.map((error) => error.message).join('; ') });
          continue;
        }
        const object = document.toJS() as unknown;
        if (object === null || object === undefined) continue;
        if (typeof object !== 'object' || Array.isArray(object)) {
          unreadable.push({ environment, file, problem: 'a document is not a mapping (a Kubernetes object)' });
          continue;
        }
        objects.push({ environment, file, object: object as ManifestObject });
      }
    }
  }
  return { environments, objects, files, unreadable };
}

/** `Kind/name`, the way findings name an object. */
export function objectLabel(object: ManifestObject): string {
  return `${String(object.kind ?? '(no kind)')}/${object.metadata?.name ?? '(no name)'}`;
}

/** Namespace of a namespaced object; `default` when it says none, as kubectl would apply it. */
export function namespaceOf(object: ManifestObject): string {
  return object.metadata?.namespace ?? 'default';
}

/** Kinds that run pods, with where their pod template is. */
const POD_TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  Pod: [],
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

/** Workloads whose containers run until stopped, so probes decide their traffic and restarts. */
export const LONG_RUNNING_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

export interface PodTemplate {
  readonly labels: Readonly<Record<string, string>>;
  readonly spec: Record<string, any>;
}

/** The pod template of a workload (for a Pod, the Pod itself); undefined for other kinds. */
export function podTemplateOf(object: ManifestObject): PodTemplate | undefined {
  const route = typeof object.kind === 'string' ? POD_TEMPLATE_PATHS[object.kind] : undefined;
  if (route === undefined) return undefined;
  let template: any = object;
  for (const key of route) template = template?.[key];
  if (typeof template !== 'object' || template === null) return { labels: {}, spec: {} };
  return { labels: template.metadata?.labels ?? {}, spec: template.spec ?? {} };
}

export interface ContainerRef {
  /** `container "web"` or `init container "migrate"`, for messages. */
  readonly label: string;
  readonly init: boolean;
  readonly container: Record<string, any>;
}

/** Containers and init containers of a pod spec, in that order. */
export function containersOf(spec: Readonly<Record<string, any>>): ContainerRef[] {
  const list = (items: unknown, init: boolean): ContainerRef[] =>
    (Array.isArray(items) ? items : []).map((container: Record<string, any>) => ({
      label: `${init ? 'init container' : 'container'} ${JSON.stringify(container?.name ?? '(unnamed)')}`,
      init,
      container: container ?? {},
    }));
  return [...list(spec.containers, false), ...list(spec.initContainers, true)];
}

export interface ImageReference {
  /** Everything before the tag or digest: `registry.example.com/platform/webapp`. */
  readonly repository: string;
  readonly tag: string | undefined;
  readonly digest: string | undefined;
}

/** `host[:port]/path[:tag][@digest]`; the tag is after the last `:` of the last path part. */
export function parseImage(image: string): ImageReference {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : undefined;
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(':');
  const tagged = colon > name.lastIndexOf('/');
  return {
    repository: tagged ? name.slice(0, colon) : name,
    tag: tagged ? name.slice(colon + 1) : undefined,
    digest,
  };
}
