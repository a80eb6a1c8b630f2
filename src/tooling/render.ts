import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Environment } from '../environments';
import { renderEnvironment } from '../synth';
import { type ChartVersions, projectChartVersions } from '../synth/chart-versions';
import { type ManifestTree, readManifestTree } from '../base/manifest-files';

/**
 * Render environments into a temporary folder and return the files; nothing else is written.
 * Chart versions are decided against the project's record (at `root`), as synth decides them.
 */
export function renderToTree(environments: readonly Environment[], root: string): ManifestTree {
  return renderWithVersions(environments, root).tree;
}

/** renderToTree, with each environment's chart versions as synth would record them. */
export function renderWithVersions(environments: readonly Environment[], root: string): { tree: ManifestTree; versions: Map<string, ChartVersions> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-render-'));
  try {
    const versions = new Map<string, ChartVersions>();
    for (const environment of environments) {
      versions.set(environment.name, renderEnvironment(environment, path.join(dir, environment.name), undefined, projectChartVersions(root, environment.name)));
    }
    return { tree: readManifestTree(dir, '.yaml', true), versions };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
