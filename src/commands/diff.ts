import { formatDiff, DIFF_FORMATS, type DiffFormat } from '../diff/format';
import { resolveCommit, shortCommit } from '../base/git';
import { defaultBase, readCommittedRendering, readCommittedSecrets, readWorkingSecrets } from '../diff/git';
import { diffSecretTrees } from '../diff/secrets-diff';
import { chartVersionChanges, diffRenderedTrees, hasChanges } from '../diff/rendered-diff';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../environments';
import { chartVersionsPath, committedChartVersions } from '../synth/chart-versions';
import { UsageError } from '../base/errors';
import { type CommandDefinition } from '../tooling/cli';
import { readValuesTexts } from '../environments/values-file';
import { renderWithVersions } from '../tooling/render';

const USAGE = `usage: npm run diff -- [--base <git-ref>] [--head <git-ref>] [--format text|markdown]

Compares the rendered manifests of the base with those of the working tree, per
environment: objects added, removed and changed (with a unified YAML diff); the chart
versions that moved in each environment's record (src/environments/<env>/chart-versions.json);
then each encrypted Secret of secrets/ added, removed or changed, with its keys (never a value).
  --base    commit to compare against (default: the merge base of HEAD and main);
            its committed dist/ is used: CI keeps dist/ equal to what the code renders
  --head    compare against this commit's committed dist/ instead of rendering the
            working tree
  --format  text (default, for a terminal) or markdown (for a pull-request comment)
Exit code: 0 no change, 1 changes, 2 error.`;

const OPTIONS = {
  base: { type: 'string' },
  head: { type: 'string' },
  format: { type: 'string', default: 'text' },
} as const;

/** `npm run diff`: the rendered change between two commits, or a commit and the working tree. */
export const DIFF: CommandDefinition<typeof OPTIONS> = {
  name: 'diff',
  usage: USAGE,
  options: OPTIONS,
  // 1 says "changes": an invalid configuration or a failed git is an error, 2.
  refusedExitCode: 2,
  run(values, _positionals, { root, out }) {
    if (!(DIFF_FORMATS as readonly string[]).includes(values.format)) {
      throw new UsageError(`--format "${values.format}" must be one of ${DIFF_FORMATS.join(', ')}`);
    }
    const base = values.base === undefined ? defaultBase(root) : { ref: values.base, commit: resolveCommit(root, values.base) };
    const baseTree = readCommittedRendering(root, base.commit);
    const baseVersions = committedChartVersions(root, base.commit, base.ref, ENVIRONMENT_ORDER);
    let headTree;
    let headVersions;
    let headSecrets;
    let headLabel: string;
    if (values.head === undefined) {
      ({ tree: headTree, versions: headVersions } = renderWithVersions(loadEnvironments(readValuesTexts(root)), root));
      headSecrets = readWorkingSecrets(root);
      headLabel = 'working tree';
    } else {
      const commit = resolveCommit(root, values.head);
      headTree = readCommittedRendering(root, commit);
      headVersions = committedChartVersions(root, commit, values.head, ENVIRONMENT_ORDER);
      headSecrets = readCommittedSecrets(root, commit);
      headLabel = `${values.head}@${shortCommit(commit)}`;
    }
    const diff = { ...diffRenderedTrees(baseTree, headTree), versions: chartVersionChanges(baseVersions, headVersions, chartVersionsPath) };
    // The encrypted Secrets the sops plugin emits: named with their keys, never a value.
    const secrets = diffSecretTrees(readCommittedSecrets(root, base.commit), headSecrets);
    out(formatDiff(diff, { base: `${base.ref}@${shortCommit(base.commit)}`, head: headLabel }, values.format as DiffFormat, secrets));
    return hasChanges(diff) || secrets.length > 0 ? 1 : 0;
  },
};
