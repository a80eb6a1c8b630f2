import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { locateToolchain } from '../../toolchain';
import { RefusedError } from '../base/errors';
import { KUBERNETES_VERSIONS } from '../validation/schema-catalog';
import { KUBECONFORM_TEMPLATE, kubeconformSchemas, kubeconformVersion } from './kubeconform-schemas';

/** kubeconform's verdict on one resource (`-output json -verbose`, pkg/output/json.go). */
export interface KubeconformResult {
  readonly filename: string;
  readonly kind: string;
  readonly name: string;
  readonly version: string;
  /** `statusValid`, `statusInvalid`, `statusError`, `statusSkipped`, `statusEmpty`. */
  readonly status: string;
  readonly msg: string;
}

/** kubeconform as the e2e toolchain built it, with the project's schemas in its layout. */
export interface Kubeconform {
  readonly binary: string;
  readonly version: string;
  /** The converted schemas' folder. */
  readonly schemas: string;
}

/** The command that builds kubeconform (toolchain/build.sh, cached in ~/.cache/platform-gitops). */
export const KUBECONFORM_BUILD_COMMAND = 'bash toolchain/build.sh kubeconform';

/**
 * The toolchain's kubeconform and the converted schemas (converted first when absent, into
 * the gate's cache folder); RefusedError naming the build command when it is not built.
 */
export function prepareKubeconform(root: string, cacheDir: string, progress: (message: string) => void = () => {}): Kubeconform {
  const toolchain = locateToolchain(root);
  let binary: string;
  try {
    binary = toolchain.bin('kubeconform', 'kubeconform');
  } catch {
    throw new RefusedError(`kubeconform ${toolchain.versions.kubeconform} is not built; build it with ${KUBECONFORM_BUILD_COMMAND}`);
  }
  return { binary, version: toolchain.versions.kubeconform, schemas: kubeconformSchemas(root, cacheDir, progress) };
}

/** Arguments of one kubeconform run against one supported Kubernetes version. */
export function kubeconformArguments(kubeconform: Kubeconform, minor: string, targets: readonly string[], extra: readonly string[] = []): string[] {
  return [
    '-strict',
    '-kubernetes-version',
    kubeconformVersion(minor),
    '-schema-location',
    path.join(kubeconform.schemas, KUBECONFORM_TEMPLATE),
    // A JSON file in a rendered folder (as the chart version record was before it moved beside the values) is not a manifest.
    '-ignore-filename-pattern',
    '\\.json$',
    ...extra,
    ...targets,
  ];
}

/** Every resource's verdict, per supported Kubernetes version (one kubeconform run each, as the gate checks both). */
export function runKubeconform(kubeconform: Kubeconform, targets: readonly string[]): Map<string, KubeconformResult[]> {
  const results = new Map<string, KubeconformResult[]>();
  for (const minor of KUBERNETES_VERSIONS) {
    const run = spawnSync(kubeconform.binary, kubeconformArguments(kubeconform, minor, targets, ['-output', 'json', '-verbose']), {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    if (run.error !== undefined || (run.status !== 0 && run.status !== 1)) {
      throw new RefusedError(`kubeconform (Kubernetes ${minor}) failed: ${run.error?.message ?? run.stderr}`);
    }
    results.set(minor, (JSON.parse(run.stdout) as { resources: KubeconformResult[] }).resources);
  }
  return results;
}
