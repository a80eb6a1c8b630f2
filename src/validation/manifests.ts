import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { RefusedError } from '../base/errors';
import { readYamlDocuments } from '../base/yaml-documents';

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
 * The most the gate reads: a rendered tree is one folder per environment holding one file per
 * chart (src/contract/layout.ts), a few hundred kilobytes in all; these bounds are far above
 * it (the benchmark's 100 copies of every application stay well inside) and keep a mistyped
 * `--dir` (`/`, a home folder) from reading a whole disk.
 */
export const RENDERED_TREE_LIMITS = { files: 10_000, fileBytes: 16 * 1024 * 1024 } as const;

/**
 * The documents of one file, as plain values, or why one is not YAML: read fast with js-yaml
 * (readYamlDocuments); a file js-yaml refuses, or that may hold anchors, is read again with
 * the yaml library, whose messages name each broken document and which refuses an alias bomb.
 */
export function documentsOf(text: string): ({ readonly value: unknown } | { readonly problem: string })[] {
  const values = readYamlDocuments(text);
  if (values !== undefined) return values.map((value) => ({ value }));
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length > 0) return { problem: document.errors.map((error) => error.message).join('; ') };
    try {
      return { value: document.toJS() as unknown };
    } catch (error) {
      // An alias expanding beyond the yaml library's bound (maxAliasCount): a resource
      // exhaustion attack, never a rendered manifest.
      return { problem: error instanceof Error ? error.message : String(error) };
    }
  });
}

/**
 * Every object of the `.yaml` files directly inside each folder of `dir` (`dist/<environment>/`),
 * in a stable order: environments, then files, then documents as written. A file over
 * RENDERED_TREE_LIMITS.fileBytes is unreadable; more files than RENDERED_TREE_LIMITS.files is refused.
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
    const names = fs
      .readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isFile() && MANIFEST_FILE.test(entry.name))
      .map((entry) => entry.name)
      .sort();
    for (const file of names) {
      files += 1;
      if (files > RENDERED_TREE_LIMITS.files) throw new RefusedError(`${dir}: more than ${RENDERED_TREE_LIMITS.files} manifest files below it; is it a rendered tree (one folder per environment)?`);
      const size = fs.statSync(path.join(root, file)).size;
      if (size > RENDERED_TREE_LIMITS.fileBytes) {
        unreadable.push({ environment, file, problem: `${size} bytes, more than a rendered file may have (${RENDERED_TREE_LIMITS.fileBytes})` });
        continue;
      }
      for (const document of documentsOf(fs.readFileSync(path.join(root, file), 'utf8'))) {
        if ('problem' in document) {
          unreadable.push({ environment, file, problem: document.problem });
          continue;
        }
        const object = document.value;
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
