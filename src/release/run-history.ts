import { git, hasCommittedHead, readCommittedFiles } from '../base/git';
import { ValuesFile } from '../environments/values-file';
import { tagsIn } from '../strategies/values-registry';

/**
 * What an environment ran, as its application's values file's committed history says: the
 * one record a rollback may go back to (contract 1.5, as a reviewed change). Read through the
 * project's git helper (../base/git.ts).
 */
export interface RunHistory {
  /** The values file, relative to the project root. */
  readonly file: string;
  /** Whether the project is a git work tree with at least one commit: else there is no history. */
  readonly committed: boolean;
  /** The tags the file had serving (its strategy's running tag), newest first, each once. */
  readonly ran: readonly string[];
  /** Tags the file deployed but never served (a blue-green unit beside the active one), newest first. */
  readonly neverServed: readonly string[];
  /** A shallow clone: the history stops at its cut, so a tag missing from it may have run before. */
  readonly shallow: boolean;
  /** The file in the work tree differs from HEAD's (edited, or not tracked). */
  readonly uncommitted: boolean;
}

/** The run history of the values file `file` (project-relative) of the project at `root`. */
export function readRunHistory(root: string, file: string): RunHistory {
  if (!hasCommittedHead(root)) return { file, committed: false, ran: [], neverServed: [], shallow: false, uncommitted: false };
  const log = git(root, ['log', '--format=%H', '--', file]);
  const commits = log.ok ? log.stdout.split('\n').filter(Boolean) : [];
  const texts = readCommittedFiles(root, commits.map((commit) => `${commit}:./${file}`));
  const ran: string[] = [];
  const deployed: string[] = [];
  for (const commit of commits) {
    const text = texts.get(`${commit}:./${file}`);
    const tags = text === undefined ? undefined : tagsIn(new ValuesFile(file, text).data());
    if (tags === undefined) continue;
    if (!ran.includes(tags.running)) ran.push(tags.running);
    for (const tag of tags.deployed) if (!deployed.includes(tag)) deployed.push(tag);
  }
  const status = git(root, ['status', '--porcelain', '--untracked-files=all', '--', file]);
  return {
    file,
    committed: true,
    ran,
    neverServed: deployed.filter((tag) => !ran.includes(tag)),
    shallow: git(root, ['rev-parse', '--is-shallow-repository']).stdout.trim() === 'true',
    uncommitted: !status.ok || status.stdout.trim() !== '',
  };
}
