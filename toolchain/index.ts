import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';


/** Component names of toolchain/build.sh. */
export type Component = 'kubernetes' | 'etcd' | 'argocd' | 'kwok' | 'kustomize' | 'helm' | 'sops' | 'age' | 'kubeconform' | 'prometheus' | 'envoy-gateway' | 'alertmanager' | 'prometheus-operator' | 'flagger' | 'flagger-loadtester' | 'distribution' | 'cert-manager' | 'network-policy' | 'upstream-charts';

/** What the e2e cluster runs (`npm run e2e`): every component but the test-only tools (kubeconform, promtool, Alertmanager, Flagger's load tester). */
export const CLUSTER_COMPONENTS: readonly Component[] = ['sops', 'age', 'kustomize', 'helm', 'kwok', 'etcd', 'kubernetes', 'argocd', 'envoy-gateway', 'cert-manager', 'prometheus-operator', 'flagger', 'distribution', 'network-policy', 'upstream-charts'];

/** The built toolchain: one cached folder per component and its pinned version. */
export interface Toolchain {
  readonly versions: Readonly<Record<Component, string>>;
  /** Absolute path of a binary of a component (`bin('kubernetes', 'kube-apiserver')`). */
  bin(component: Component, name: string): string;
  /**
   * Absolute path of an upstream Helm chart at a version, from its pinned release's Go module
   * (`upstreamChart('cert-manager', 'v1.21.2')`; build.sh's UPSTREAM_CHARTS), served to Argo CD
   * in place of a stand-in.
   */
  upstreamChart(name: string, version: string): string;
  /** Absolute path of the folder of upstream CRD files a component's build keeps (`crds('cert-manager')`). */
  crds(component: Component): string;
}

/** One of the toolchain's scripts in the project at `projectRoot`. */
function scriptPath(projectRoot: string, script: 'build.sh' | 'packages.sh'): string {
  return path.join(projectRoot, 'toolchain', script);
}

/**
 * Build what is missing (toolchain/build.sh prints each component as it goes; a warm
 * cache answers in a second), install the Debian packages, and locate the binaries.
 */
export function ensureToolchain(components: readonly Component[] | 'all', projectRoot: string): Toolchain {
  const packages = spawnSync('bash', [scriptPath(projectRoot, 'packages.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (packages.status !== 0) throw new E2eError('toolchain/packages.sh failed: the Debian packages above are missing');
  const build = spawnSync('bash', [scriptPath(projectRoot, 'build.sh'), ...(components === 'all' ? [] : components)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (build.status !== 0) throw new E2eError('toolchain/build.sh failed (see its output above)');
  return locateToolchain(projectRoot);
}

/** The toolchain as build.sh reports it (`--print`), without building. */
export function locateToolchain(projectRoot: string): Toolchain {
  const printed = spawnSync('bash', [scriptPath(projectRoot, 'build.sh'), '--print'], { encoding: 'utf8' });
  if (printed.status !== 0) throw new E2eError(`toolchain/build.sh --print failed: ${printed.stderr}`);
  const folders = new Map<string, string>();
  const versions: Record<string, string> = {};
  for (const line of printed.stdout.trim().split('\n')) {
    const [component, version, folder] = line.split(' ');
    folders.set(component!, folder!);
    versions[component!] = version!;
  }
  return {
    versions: versions as Record<Component, string>,
    bin(component, name) {
      const file = path.join(folders.get(component) ?? '', name);
      if (!fs.existsSync(file)) throw new E2eError(`${name} is not built (${file}); run toolchain/build.sh ${component}`);
      return file;
    },
    upstreamChart(name, version) {
      const folder = path.join(folders.get('upstream-charts') ?? '', 'charts', version, name);
      if (!fs.existsSync(path.join(folder, 'Chart.yaml'))) throw new E2eError(`chart ${name} ${version} is not in the toolchain (${folder}): add it to UPSTREAM_CHARTS in toolchain/build.sh, or run toolchain/build.sh upstream-charts`);
      return folder;
    },
    crds(component) {
      const folder = path.join(folders.get(component) ?? '', 'crds');
      if (!fs.existsSync(folder)) throw new E2eError(`the CRDs of ${component} are not in the toolchain (${folder}); run toolchain/build.sh ${component}`);
      return folder;
    },
  };
}
