import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Environment } from '../environments';
import { renderEnvironment } from '../synth';
import { projectChartVersions } from '../synth/chart-versions';
import { type ManifestTree, readManifestTree } from '../base/manifest-files';

/**
 * Render environments into a temporary folder and return the files; nothing else is written.
 * Chart versions are decided against the project's own dist/ (at `root`), as synth decides them.
 */
export function renderToTree(environments: readonly Environment[], root: string): ManifestTree {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-render-'));
  try {
    for (const environment of environments) renderEnvironment(environment, path.join(dir, environment.name), undefined, projectChartVersions(root, environment.name));
    return readManifestTree(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
