import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readManifestTree } from '../src/base/manifest-files';
import { ApiError, type KubeClient, type KubeObject, resourceId } from './kube-client';
import { waitFor } from './processes';

/** Objects of every YAML file of a folder (src/base/manifest-files.ts reads it), with the file each came from. */
export function readObjects(dir: string): { file: string; object: KubeObject }[] {
  return [...readManifestTree(dir)].flatMap(([file, text]) =>
    parseAllDocuments(text)
      .map((doc) => doc.toJS() as KubeObject | null)
      .filter((object): object is KubeObject => object !== null && typeof object === 'object')
      .map((object) => ({ file, object })),
  );
}

/** Every CRD of a folder (schemas/crds), to make all the platform's kinds known. */
export function readCrds(dir: string): KubeObject[] {
  return readObjects(dir).map((entry) => entry.object).filter((o) => o.kind === 'CustomResourceDefinition');
}

/**
 * Apply CRDs and wait until the server serves every version each of them serves (its
 * discovery lists the kind; asked again until it does, at most `timeoutMs` in all): a dry-run
 * of a custom resource before that would read as the kind being unknown. A CRD the server
 * refuses is logged and not waited for. `check` runs between the steps (throws to stop).
 */
export async function installCrds(client: KubeClient, crds: readonly KubeObject[], timeoutMs: number, log: (line: string) => void, check: () => void = () => {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const applied: KubeObject[] = [];
  for (const crd of crds) {
    check();
    try {
      await client.apply(crd);
      applied.push(crd);
    } catch (error) {
      log(`CRD ${crd.metadata.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  await waitForCrdsServed(client, applied, Math.max(deadline - Date.now(), 0), check);
}

/** Wait until the server serves every version each CRD serves (its discovery lists the kind), at most `timeoutMs` in all. */
export async function waitForCrdsServed(client: KubeClient, crds: readonly KubeObject[], timeoutMs: number, check: () => void = () => {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (const version of (crd.spec.versions as { name: string; served: boolean }[]).filter((v) => v.served)) {
      const [apiVersion, kind] = [`${crd.spec.group}/${version.name}`, crd.spec.names.kind as string];
      await waitFor(`${kind} (${apiVersion}) to be served`, Math.max(deadline - Date.now(), 0), async () => ((await client.resource(apiVersion, kind)) === undefined ? undefined : true), check);
    }
  }
}

export interface DryRunResult {
  readonly environment: string;
  /** Rendered objects dry-run, and the Pods dry-run from their pod templates. */
  readonly objects: number;
  readonly pods: number;
  /** `<file>: <Kind> <namespace>/<name>: <the API server's answer>` */
  readonly failures: readonly string[];
}

/** The pod template of a workload (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob); undefined for others. */
export function podTemplateOf(object: KubeObject): { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: any } | undefined {
  switch (object.kind) {
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'Job':
      return object.spec?.template;
    case 'CronJob':
      return object.spec?.jobTemplate?.spec?.template;
    default:
      return undefined;
  }
}

/**
 * The Pod a workload's controller would create from its template. Pod Security admission
 * enforces on Pods only (on workloads it warns), so this is the object that shows whether
 * the namespace's `pod-security.kubernetes.io/enforce` level admits the template.
 */
export function podFromTemplate(object: KubeObject): KubeObject | undefined {
  const template = podTemplateOf(object);
  if (!template?.spec) return undefined;
  // A StatefulSet's controller adds a volume per claim template, bound to the claim of the
  // pod's ordinal, `<claim>-<set>-<ordinal>` (kubernetes pkg/controller/statefulset
  // stateful_set_utils.go `updateStorage`, `getPersistentVolumeClaimName`).
  const claims: any[] = object.kind === 'StatefulSet' ? (object.spec?.volumeClaimTemplates ?? []) : [];
  const spec =
    claims.length === 0
      ? template.spec
      : {
          ...template.spec,
          volumes: [
            ...(template.spec.volumes ?? []).filter((volume: any) => !claims.some((claim) => claim.metadata?.name === volume.name)),
            ...claims.map((claim) => ({ name: claim.metadata.name, persistentVolumeClaim: { claimName: `${claim.metadata.name}-${object.metadata.name}-0` } })),
          ],
        };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: object.metadata.name,
      namespace: object.metadata.namespace,
      ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
      ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
    },
    spec,
  };
}

const describeObject = (object: KubeObject): string => resourceId(object.kind, object.metadata?.name, object.metadata?.namespace);

const answer = (error: unknown): string => (error instanceof ApiError ? error.message.replace(/^(PATCH|POST) \S+: /, '') : String(error));

/**
 * Server-side dry-run of every rendered object of an environment against the real API
 * server with every CRD installed: defaulting, CEL rules, names, label values and
 * quantities are judged by the server, unknown fields refused (fieldValidation=Strict).
 * Then a Pod from every pod template is dry-run too, so admission judges what the
 * workload's controller would create: Pod Security (enforced on Pods, only warned on
 * workloads), the ServiceAccount, the Pod's own validation.
 *
 * A dry-run creates nothing a later object could live in or refer to, so before it the
 * environment's Namespaces are applied for real with the labels the platform renders
 * (their Pod Security levels), every other namespace an object names is created bare,
 * and the ServiceAccounts its Pods run as are applied for real (the rendered one, or a
 * bare one for a name the render does not define, such as `default`, which no controller
 * creates in this cluster). Applied with server-side apply, so the next environment's
 * Namespace of the same name takes exactly its own labels.
 */
export async function dryRunEnvironment(client: KubeClient, environment: string, distDir: string): Promise<DryRunResult> {
  const entries = readObjects(path.join(distDir, environment));
  const failures: string[] = [];
  const rendered = new Map(entries.map(({ object }) => [`${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name}`, object]));
  const namespaces = new Set<string>();
  for (const { object } of entries) if (object.metadata?.namespace) namespaces.add(object.metadata.namespace);
  for (const { file, object } of entries.filter(({ object }) => object.kind === 'Namespace')) {
    namespaces.delete(object.metadata.name);
    await client.apply(object).catch((error: unknown) => failures.push(`${file}: ${describeObject(object)}: ${answer(error)}`));
  }
  for (const name of [...namespaces].sort()) {
    if (!(await client.get('v1', 'Namespace', name))) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }

  const pods = entries.flatMap(({ file, object }) => {
    const pod = podFromTemplate(object);
    return pod ? [{ file, object, pod }] : [];
  });
  const serviceAccounts = new Map<string, KubeObject>();
  for (const { pod } of pods) {
    const name = pod.spec.serviceAccountName ?? 'default';
    const namespace = pod.metadata.namespace ?? 'default';
    serviceAccounts.set(
      `${namespace}/${name}`,
      rendered.get(`ServiceAccount/${namespace}/${name}`) ?? { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    );
  }
  for (const key of [...serviceAccounts.keys()].sort()) await client.apply(serviceAccounts.get(key)!);

  for (const { file, object } of entries) {
    try {
      await client.apply(object, { dryRun: true });
    } catch (error) {
      failures.push(`${file}: ${describeObject(object)}: ${answer(error)}`);
    }
  }
  for (const { file, object, pod } of pods) {
    try {
      await client.create(pod, { dryRun: true });
    } catch (error) {
      failures.push(`${file}: ${resourceId('Pod', pod.metadata.name, pod.metadata.namespace ?? 'default')} (from ${describeObject(object)}'s template): ${answer(error)}`);
    }
  }
  return { environment, objects: entries.length, pods: pods.length, failures };
}
