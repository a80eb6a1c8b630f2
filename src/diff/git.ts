import { loadPlatform } from '../environments/platform';
import { UsageError } from '../base/errors';
import { git, readCommittedTree, resolveCommit } from '../base/git';
import * as path from 'node:path';
import { type ManifestTree, readManifestTree } from '../base/manifest-files';
import { MANIFEST_EXTENSION, RENDERED_DIR } from '../contract/layout';

/**
 * The branch a pull request merges into, as a local branch and as the remote-tracking one
 * of a CI clone: the branch the Argo CD Applications follow (the platform setting), so
 * the diff's default base is what the cluster runs.
 */
export function mainBranches(): readonly [string, string] {
  const branch = loadPlatform().repository.targetRevision;
  return [branch, `origin/${branch}`];
}

/**
 * The default base: where HEAD left the platform's branch (or its `origin/` copy in a CI
 * clone). On that branch itself it is HEAD, so the diff shows what the working tree changes.
 */
export function defaultBase(root: string): { ref: string; commit: string } {
  resolveCommit(root, 'HEAD');
  const branches = mainBranches();
  for (const branch of branches) {
    if (!git(root, ['rev-parse', '--verify', '--quiet', `${branch}^{commit}`]).ok) continue;
    const result = git(root, ['merge-base', 'HEAD', branch]);
    if (!result.ok) throw new UsageError(`HEAD and ${branch} have no common commit; pass --base <git-ref>`);
    return { ref: `merge-base(HEAD, ${branch})`, commit: result.stdout.trim() };
  }
  throw new UsageError(`neither ${branches.join(' nor ')} exists in ${root}; pass --base <git-ref>`);
}

/** The rendered tree (`dist/`) as committed in `commit`, keyed relative to `dist/`. */
export function readCommittedRendering(root: string, commit: string): ManifestTree {
  return readCommittedTree(root, commit, RENDERED_DIR, MANIFEST_EXTENSION);
}

/** The encrypted Secrets (`secrets/**\/*.sops.yaml`) as committed in `commit`, keyed relative to `secrets/`. */
export function readCommittedSecrets(root: string, commit: string): ManifestTree {
  return readCommittedTree(root, commit, SECRETS_DIR, SOPS_FILE_SUFFIX);
}

/** The encrypted Secrets of the working tree, keyed relative to `secrets/`. */
export function readWorkingSecrets(root: string): ManifestTree {
  return readManifestTree(path.join(root, SECRETS_DIR), SOPS_FILE_SUFFIX);
}

const SECRETS_DIR = 'secrets';
const SOPS_FILE_SUFFIX = '.sops.yaml';
