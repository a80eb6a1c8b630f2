import { parseAllDocuments } from 'yaml';
import { readCommittedFiles } from '../base/git';
import { type ClusterConnection, type LiveObject, resourceId } from './connection';

/** One field where the live object is not what git renders. */
export interface FieldDifference {
  /** `spec.template.spec.containers[name=webapp].image`. */
  readonly path: string;
  /** As rendered, JSON; `(absent)` when git does not render it. */
  readonly desired: string;
  /** As live, JSON; `(absent)` when the cluster does not have it. */
  readonly live: string;
}

/** One resource Argo CD compares differently from git. */
export interface ResourceDrift {
  /** `<Kind> <namespace>/<name>`. */
  readonly resource: string;
  /** Argo CD's verdict: `OutOfSync`, with `requiresPruning` when git no longer has it. */
  readonly status: string;
  readonly differences: readonly FieldDifference[];
  /** What the field-level diff could not show, and why. */
  readonly note?: string;
}

function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A zero value that Kubernetes' JSON leaves out: null, 0, false, '', [], and an object of nothing else. */
function isZero(value: unknown): boolean {
  if (value === null || value === 0 || value === false || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return isRecord(value) && Object.values(value).every(isZero);
}

/** A list whose items are objects with a `name` each (containers, ports, env): matched by name, as a strategic merge would. */
function byName(items: readonly unknown[]): Map<string, unknown> | undefined {
  if (!items.every((item) => isRecord(item) && typeof item['name'] === 'string')) return undefined;
  return new Map(items.map((item) => [(item as { name: string }).name, item]));
}

/**
 * The fields git renders whose live value differs, walking the rendered object: a field the
 * cluster adds (defaults, status, metadata the API server and controllers write) is not a
 * difference, as in Argo CD's comparison of what the manifest sets. Lists of named items are
 * matched by name; other lists compare whole.
 */
export function fieldDifferences(desired: unknown, live: unknown, path = ''): FieldDifference[] {
  const value = shown;
  // The API server leaves a field at its zero value out of what it returns (Go's omitempty):
  // `minReadySeconds: 0` or `hostNetwork: false` rendered, absent live, is no difference.
  if (live === undefined && isZero(desired)) return [];
  if (isRecord(desired)) {
    if (!isRecord(live)) return [{ path, desired: value(desired), live: value(live) }];
    return Object.keys(desired).flatMap((key) => (key === 'status' && path === '' ? [] : fieldDifferences(desired[key], live[key], path === '' ? key : `${path}.${key}`)));
  }
  if (Array.isArray(desired)) {
    const wanted = byName(desired);
    const have = Array.isArray(live) ? byName(live) : undefined;
    if (wanted !== undefined && have !== undefined) {
      return [...wanted].flatMap(([name, item]) => fieldDifferences(item, have.get(name), `${path}[name=${name}]`));
    }
    if (!Array.isArray(live) || live.length !== desired.length) return [{ path, desired: value(desired), live: value(live) }];
    return desired.flatMap((item, index) => fieldDifferences(item, live[index], `${path}[${index}]`));
  }
  // Numbers the API server keeps as strings and back (an int-or-string port) compare as text.
  if (desired === live || (live !== undefined && desired !== undefined && String(desired) === String(live) && typeof desired !== typeof live)) return [];
  return [{ path, desired: value(desired), live: value(live) }];
}

/** Where an Application's rendered objects are in git: its first source's folder and file. */
function renderedFile(app: LiveObject): string | undefined {
  const spec = app['spec'] ?? {};
  const source = spec.sources?.[0] ?? spec.source;
  if (typeof source?.path !== 'string' || source.chart !== undefined) return undefined;
  const include = source.directory?.include;
  return typeof include === 'string' && !/[*{]/.test(include) ? `${source.path}/${include}` : undefined;
}

const key = (kind: string, name: string, namespace?: string) => `${kind}/${namespace || ''}/${name}`;

/**
 * The resources of an Application that Argo CD reports OutOfSync, each with the fields
 * where the live object differs from the object git renders at the revision Argo CD
 * compared (read from this checkout's git history). Objects rendered by a Helm chart or
 * decrypted by the sops plugin are not in `dist/`: Argo CD's verdict is shown alone.
 */
export async function applicationDrift(cluster: ClusterConnection, root: string, app: LiveObject): Promise<ResourceDrift[]> {
  const resources: any[] = (app['status']?.resources ?? []).filter((r: any) => r.status === 'OutOfSync');
  if (resources.length === 0) return [];
  const file = renderedFile(app);
  const revision = String(app['status']?.sync?.revisions?.[0] ?? app['status']?.sync?.revision ?? '');
  const rendered = new Map<string, unknown>();
  let unavailable: string | undefined;
  let fallback: string | undefined;
  if (file === undefined) {
    unavailable = 'rendered by a Helm chart, not in dist/: Argo CD compares it (argocd app diff)';
  } else {
    // The revision Argo CD compared; when this checkout has not fetched it, HEAD's file, said so.
    const files = readCommittedFiles(root, [`${revision}:${file}`, `HEAD:${file}`]);
    const atRevision = files.get(`${revision}:${file}`);
    const text = atRevision ?? files.get(`HEAD:${file}`);
    if (atRevision === undefined) fallback = `compared with ${file} at this checkout's HEAD: ${revision.slice(0, 7) || 'the compared revision'}, which Argo CD compared, is not in its history (git fetch)`;
    if (text === undefined) {
      unavailable = `${file} is not in this checkout's history (git fetch)`;
    } else {
      for (const doc of parseAllDocuments(text)) {
        const object = doc.toJS() as LiveObject | null;
        if (object?.kind === undefined) continue;
        // Argo CD names a cluster-scoped resource without a namespace, and a namespaced one the
        // manifest leaves without one in the destination's: the object is found under either.
        rendered.set(key(object.kind, object.metadata.name, object.metadata.namespace), object);
        if (object.metadata.namespace === undefined) rendered.set(key(object.kind, object.metadata.name, app['spec']?.destination?.namespace), object);
      }
    }
  }
  const drifts: ResourceDrift[] = [];
  for (const resource of resources) {
    const id = resourceId(resource.kind, resource.name, resource.namespace);
    const status = resource.requiresPruning ? 'OutOfSync (git no longer has it: sync --prune deletes it)' : 'OutOfSync';
    const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
    const desired = rendered.get(key(resource.kind, resource.name, resource.namespace));
    if (resource.kind === 'Secret') {
      // A Secret is never read: the verbs need no permission to read Secrets (./operations-role.ts).
      drifts.push({ resource: id, status, differences: [], note: 'a Secret: its live values are never read; Argo CD compared them' });
      continue;
    }
    if (desired === undefined) {
      const note = resource.requiresPruning ? undefined : (unavailable ?? `not in ${file}`);
      drifts.push({ resource: id, status, differences: [], ...(note === undefined ? {} : { note }) });
      continue;
    }
    const live = await cluster.get(apiVersion, resource.kind, resource.name, resource.namespace);
    if (live === undefined) {
      drifts.push({ resource: id, status, differences: [], note: 'missing from the cluster: the next sync creates it' });
      continue;
    }
    const differences = fieldDifferences(desired, live);
    drifts.push({
      resource: id,
      status,
      differences,
      ...(differences.length === 0
        ? { note: `no field git renders differs: a field Argo CD normalizes, or one the manifest leaves to its default, was changed${fallback === undefined ? '' : `; ${fallback}`}` }
        : fallback === undefined
          ? {}
          : { note: fallback }),
    });
  }
  return drifts;
}
