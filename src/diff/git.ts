import { UsageError } from '../errors';
import { readCommittedTree, runGit } from '../dist-layout';

/** The branch a pull request merges into; its merge base is the default base of a diff. */
export const MAIN_BRANCHES = ['main', 'origin/main'] as const;

const git = runGit;

/** The full commit id a ref names; a UsageError naming the ref when it names none. */
export function resolveCommit(root: string, ref: string): string {
  const result = git(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (!result.ok) throw new UsageError(`"${ref}" does not name a commit in ${root}`);
  return result.stdout.trim();
}

/**
 * The default base: where HEAD left `main` (or `origin/main` in a CI clone). On main
 * itself that is HEAD, so the diff shows what the working tree changes.
 */
export function defaultBase(root: string): { ref: string; commit: string } {
  resolveCommit(root, 'HEAD');
  for (const branch of MAIN_BRANCHES) {
    if (!git(root, ['rev-parse', '--verify', '--quiet', `${branch}^{commit}`]).ok) continue;
    const result = git(root, ['merge-base', 'HEAD', branch]);
    if (!result.ok) throw new UsageError(`HEAD and ${branch} have no common commit; pass --base <git-ref>`);
    return { ref: `merge-base(HEAD, ${branch})`, commit: result.stdout.trim() };
  }
  throw new UsageError(`neither ${MAIN_BRANCHES.join(' nor ')} exists in ${root}; pass --base <git-ref>`);
}

export { readCommittedTree };

/** `1a2b3c4`: a commit as people read it. */
export function shortCommit(commit: string): string {
  return commit.slice(0, 7);
}
