import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readManifestTree } from '../src/base/manifest-files';
import { ApiError, type KubeClient, type KubeObject } from './kube-client';

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

export interface DryRunResult {
  readonly environment: string;
  readonly objects: number;
  /** `<file>: <Kind> <namespace>/<name>: <the API server's answer>` */
  readonly failures: readonly string[];
}

/**
 * Server-side dry-run of every rendered object of an environment against the real API
 * server with every CRD installed: admission (pod security included), defaulting, CEL
 * rules, names, label values and quantities are judged by the server, unknown fields
 * refused (fieldValidation=Strict). Namespaces the environment renders are created for
 * real first, because a dry-run creates nothing a later object could live in.
 */
export async function dryRunEnvironment(client: KubeClient, environment: string, distDir: string): Promise<DryRunResult> {
  const entries = readObjects(path.join(distDir, environment));
  const failures: string[] = [];
  const namespaces = new Set<string>();
  for (const { object } of entries) {
    if (object.kind === 'Namespace') namespaces.add(object.metadata.name);
    else if (object.metadata?.namespace) namespaces.add(object.metadata.namespace);
  }
  for (const name of [...namespaces].sort()) {
    if (!(await client.get('v1', 'Namespace', name))) {
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }).catch(() => undefined);
    }
  }
  for (const { file, object } of entries) {
    const id = `${object.kind} ${object.metadata?.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata?.name}`;
    try {
      await client.apply(object, { dryRun: true });
    } catch (error) {
      const message = error instanceof ApiError ? error.message.replace(/^PATCH \S+: /, '') : String(error);
      failures.push(`${file}: ${id}: ${message}`);
    }
  }
  return { environment, objects: entries.length, failures };
}
