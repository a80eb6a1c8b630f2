import * as fs from 'node:fs';
import * as path from 'node:path';
import { CDK8S_CLI_OUTPUT } from '../contract/layout';
import { resolveOutdir } from '../synth/output-folder';
import { RENDERED_DIR } from '../contract/layout';
import { withProjectLock } from '../release/edit-lock';
import { checkSynthesized, synthesize } from '../synth';
import { type CommandDefinition } from '../tooling/cli';
import { UsageError } from '../base/errors';
import { resolveCommit } from '../base/git';
import { chartVersionsPath, committedChartVersions, formerChartVersionsPath, projectChartVersions, versionIncrementProblems } from '../synth/chart-versions';
import { loadEnvironments } from '../environments';
import { readValuesTexts } from '../environments/values-file';

const USAGE = `usage: npm run synth [-- [--check [--base <git-ref>]] [--outdir <dir>]]

Renders every environment into <dir>/<environment>/ (default: dist, or $CDK8S_OUTDIR;
an empty value counts as unset). <dir> is replaced as a whole, so it must be a folder
synth created (it holds .platform-gitops-render), an empty folder or a new one; never the
project, a folder above it or src/.
  --check   render to a temporary folder and fail, naming the files, if <dir> differs
  --base    with --check: also fail when an application's chart version (its record,
            ${chartVersionsPath('<environment>')}) is lower than the commit's, or
            the same with other content (chart-testing's version-increment rule; CI gives the
            target branch; a commit from before the record moved is read at ${formerChartVersionsPath('<environment>')})
Exit code: 0 done, 1 refused (invalid values, a skipped blue-green step, a folder synth
must not replace) or <dir> differs (--check), 2 bad arguments.`;

/**
 * The output folder. \`npx cdk8s synth\` deletes its \`output\` (cdk8s.yaml) before it runs
 * the program, so that is a scratch folder: asked for it, synth renders \`dist/\` through the
 * same atomic path and leaves the scratch folder empty for the CLI.
 */
function outdirOf(root: string, option: string | undefined): string {
  const outdir = resolveOutdir(root, option);
  if (option === undefined && outdir === path.join(root, CDK8S_CLI_OUTPUT)) {
    fs.mkdirSync(outdir, { recursive: true });
    return resolveOutdir(root, undefined, '');
  }
  return outdir;
}

/**
 * Each environment's record against the one committed at `base` (the version-increment
 * rule): the record where it lives now, or, in a commit from before it moved beside the
 * values, where it lived then (dist/<environment>/chart-versions.json).
 */
function baseVersionProblems(root: string, base: string): string[] {
  const environments = loadEnvironments(readValuesTexts(root)).map((environment) => environment.name);
  const committed = committedChartVersions(root, resolveCommit(root, base), base, environments);
  return [...committed].flatMap(([environment, then]) => versionIncrementProblems(chartVersionsPath(environment), then, projectChartVersions(root, environment), base));
}

const OPTIONS = { check: { type: 'boolean' }, outdir: { type: 'string' }, base: { type: 'string' } } as const;

/** `npm run synth` (and `npx cdk8s synth`): render every environment, or check the rendered folder. */
export const SYNTH: CommandDefinition<typeof OPTIONS> = {
  name: 'synth',
  usage: USAGE,
  options: OPTIONS,
  afterError: 'The output folder was left unchanged.',
  run(values, _positionals, { root, out, err }) {
    const outdir = outdirOf(root, values.outdir);
    const shown = path.relative(process.cwd(), outdir) || outdir;
    if (values.base !== undefined && !values.check) throw new UsageError('--base goes with --check');
    if (values.check) {
      const differences = checkSynthesized({ outdir, root });
      if (values.base !== undefined) {
        const problems = baseVersionProblems(root, values.base);
        if (problems.length > 0) {
          err(`chart versions that did not move with their content (against ${values.base}):\n`);
          for (const problem of problems) err(`  - ${problem}\n`);
          return 1;
        }
      }
      if (differences.length > 0) {
        err(`${shown} is not what the code renders; run \`npm run synth\` and commit:\n`);
        for (const difference of differences) err(`  - ${difference}\n`);
        return 1;
      }
      out(`${shown} is up to date\n`);
      return 0;
    }
    // The project's own dist/ is written under its lock, as an edit writes it (src/release/edit-lock.ts).
    if (path.resolve(outdir) !== path.join(root, RENDERED_DIR)) synthesize({ outdir, root });
    else withProjectLock(root, 'synth', (line) => err(`synth: ${line}\n`), () => synthesize({ outdir, root }));
    return 0;
  },
};
