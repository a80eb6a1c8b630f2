import { createTwoFilesPatch, OMIT_HEADERS } from 'diff';
import { parseAllDocuments, stringify } from 'yaml';
import { ENVIRONMENT_ORDER } from '../environments';
import { type ManifestTree, kustomizationMember } from '../base/manifest-files';
import { compareText } from '../base/text-order';

/**
 * What changed between two rendered trees (`dist/` of a base and of a head), object by
 * object: an object is the same object when apiVersion, kind, namespace and name agree,
 * whichever chart file it sits in. The unified diff comes from jsdiff (`diff`).
 */

/** Lines of context around each change in an object's diff. */
export const DIFF_CONTEXT_LINES = 3;

/** How a Kubernetes object is told apart from the others of its environment. */
export interface ObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  /** Empty for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
}

/** One object present on one side only. */
export interface ObjectEntry {
  readonly identity: ObjectIdentity;
  /** `apps/v1 Deployment webapp/webapp-blue`: what the report prints. */
  readonly label: string;
  /** The chart file it is rendered into, relative to the environment folder. */
  readonly file: string;
}

/** One object present on both sides with different content. */
export interface ChangedObject extends ObjectEntry {
  /** Unified diff of the object's YAML, hunks only (`@@ ... @@` and the lines). */
  readonly patch: string;
}

/** The changes of one environment. */
export interface EnvironmentDiff {
  readonly environment: string;
  readonly added: readonly ObjectEntry[];
  readonly removed: readonly ObjectEntry[];
  readonly changed: readonly ChangedObject[];
}

/**
 * An application's chart version that moved, in its environment's record
 * (`src/environments/<env>/chart-versions.json`, beside the values, not in dist/).
 */
export interface ChartVersionChange {
  readonly environment: string;
  /** The record, relative to the project. */
  readonly file: string;
  readonly application: string;
  /** Undefined: the application is new (before) or gone (after). */
  readonly before: string | undefined;
  readonly after: string | undefined;
}

/** Every environment with at least one change, in promotion order; and the chart versions that moved. */
export interface RenderedDiff {
  readonly environments: readonly EnvironmentDiff[];
  /** In promotion order, applications by name. */
  readonly versions?: readonly ChartVersionChange[];
}

/** The chart versions that differ between two sets of records (environment -> application -> version). */
export function chartVersionChanges(
  before: ReadonlyMap<string, Readonly<Record<string, { readonly version: string }>>>,
  after: ReadonlyMap<string, Readonly<Record<string, { readonly version: string }>>>,
  file: (environment: string) => string,
): ChartVersionChange[] {
  const environments = [...new Set([...before.keys(), ...after.keys()])].sort(compareEnvironments);
  return environments.flatMap((environment) => {
    const then = before.get(environment) ?? {};
    const now = after.get(environment) ?? {};
    return [...new Set([...Object.keys(then), ...Object.keys(now)])]
      .sort(compareText)
      .filter((application) => then[application]?.version !== now[application]?.version)
      .map((application) => ({ environment, file: file(environment), application, before: then[application]?.version, after: now[application]?.version }));
  });
}

interface RenderedObject extends ObjectEntry {
  /** The object as YAML with sorted keys, so key order never counts as a change. */
  readonly text: string;
}

function identityOf(object: Record<string, any>, where: string): ObjectIdentity {
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  if (typeof object.kind !== 'string' || typeof object.apiVersion !== 'string' || typeof metadata.name !== 'string') {
    throw new Error(`${where}: a document without apiVersion, kind or metadata.name cannot be compared`);
  }
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : '',
    name: metadata.name,
  };
}

/**
 * A document of a release's kustomization folder (`dist/<env>/argocd/`: the kustomization and
 * its patches, src/infrastructure/argo-cd-kustomization.ts): not an object Argo CD applies as
 * written but what kustomize builds upstream's manifests with, so it is compared as the file
 * it is, by path (and position, for a file of several documents).
 */
function kustomizationFileIdentity(chartFile: string, index: number, count: number): ObjectIdentity {
  return { apiVersion: KUSTOMIZE_INPUT.apiVersion, kind: KUSTOMIZE_INPUT.kind, namespace: '', name: count > 1 ? `${chartFile}#${index + 1}` : chartFile };
}

/** How a kustomization folder's document is labelled in the diff. */
const KUSTOMIZE_INPUT = { apiVersion: 'kustomize', kind: 'file' } as const;

function labelOf(identity: ObjectIdentity): string {
  const where = identity.namespace === '' ? identity.name : `${identity.namespace}/${identity.name}`;
  return `${identity.apiVersion} ${identity.kind} ${where}`;
}

function sortKey(identity: ObjectIdentity): string {
  return [identity.kind, identity.namespace, identity.name, identity.apiVersion].join('\u0000');
}

function environmentRank(environment: string): number {
  const index = (ENVIRONMENT_ORDER as readonly string[]).indexOf(environment);
  return index === -1 ? ENVIRONMENT_ORDER.length : index;
}

/** Environments in promotion order, unknown ones after them alphabetically. */
export function compareEnvironments(a: string, b: string): number {
  return environmentRank(a) - environmentRank(b) || compareText(a, b);
}

/** The objects of each environment of a tree, keyed by identity. */
function objectsByEnvironment(tree: ManifestTree): Map<string, Map<string, RenderedObject>> {
  const environments = new Map<string, Map<string, RenderedObject>>();
  const inKustomization = kustomizationMember([...tree.keys()]);
  for (const [file, text] of [...tree].sort(([a], [b]) => compareText(a, b))) {
    const slash = file.indexOf('/');
    if (slash === -1) continue; // dist/ holds one folder per environment; stray files are no environment
    const environment = file.slice(0, slash);
    const chartFile = file.slice(slash + 1);
    const objects = environments.get(environment) ?? new Map<string, RenderedObject>();
    environments.set(environment, objects);
    const documents = parseAllDocuments(text);
    for (const [index, document] of documents.entries()) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
      const object = document.toJS() as Record<string, any> | null;
      if (object === null || object === undefined) continue;
      const identity = inKustomization(file) ? kustomizationFileIdentity(chartFile, index, documents.length) : identityOf(object, file);
      let key = sortKey(identity);
      // The same identity twice in one environment is a rendering bug; keep both visible.
      for (let n = 2; objects.has(key); n += 1) key = `${sortKey(identity)}\u0000#${n}`;
      objects.set(key, {
        identity,
        label: labelOf(identity),
        file: chartFile,
        text: stringify(object, { sortMapEntries: true, lineWidth: 0 }),
      });
    }
  }
  return environments;
}

function entry(object: RenderedObject): ObjectEntry {
  return { identity: object.identity, label: object.label, file: object.file };
}

/** Compare two rendered trees; environments without changes are left out. */
export function diffRenderedTrees(base: ManifestTree, head: ManifestTree): RenderedDiff {
  const before = objectsByEnvironment(base);
  const after = objectsByEnvironment(head);
  const names = [...new Set([...before.keys(), ...after.keys()])].sort(compareEnvironments);
  const environments: EnvironmentDiff[] = [];
  for (const environment of names) {
    const old = before.get(environment) ?? new Map<string, RenderedObject>();
    const current = after.get(environment) ?? new Map<string, RenderedObject>();
    const keys = [...new Set([...old.keys(), ...current.keys()])].sort();
    const added: ObjectEntry[] = [];
    const removed: ObjectEntry[] = [];
    const changed: ChangedObject[] = [];
    for (const key of keys) {
      const a = old.get(key);
      const b = current.get(key);
      if (a === undefined) added.push(entry(b!));
      else if (b === undefined) removed.push(entry(a));
      else if (a.text !== b.text) {
        const patch = createTwoFilesPatch(a.label, b.label, a.text, b.text, undefined, undefined, {
          context: DIFF_CONTEXT_LINES,
          headerOptions: OMIT_HEADERS,
        });
        changed.push({ ...entry(b), patch });
      }
    }
    if (added.length + removed.length + changed.length > 0) environments.push({ environment, added, removed, changed });
  }
  return { environments };
}

/** Whether anything at all changed. */
export function hasChanges(diff: RenderedDiff): boolean {
  return diff.environments.length > 0 || (diff.versions ?? []).length > 0;
}
