import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Environment } from '../environments';
import { renderEnvironment } from '../synth';
import { type ManifestTree, readManifestTree } from '../base/manifest-files';

/** Render environments into a temporary folder and return the files; nothing else is written. */
export function renderToTree(environments: readonly Environment[]): ManifestTree {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-render-'));
  try {
    for (const environment of environments) renderEnvironment(environment, path.join(dir, environment.name));
    return readManifestTree(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
