import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Document } from 'yaml';
import { RELEASE_ENVIRONMENTS } from '../contract/choices';
import { IMAGE_TAG_PATTERN } from '../contract/contract';
import { readManifestTree } from '../base/manifest-files';
import { RENDERED_DIR } from '../contract/layout';
import { chartVersionChanges, diffRenderedTrees, type RenderedDiff } from '../diff/rendered-diff';
import { type Application, ENVIRONMENT_ORDER, type Environment, environmentNamed, selectApplication } from '../environments';
import { compareTags, type EditTarget, type FieldEdit, type StepName } from '../environments/strategy-values';
import { runningTagOf, strategiesWithStep, strategyValuesOf, tagsIn } from '../environments/strategy-registry';
import { applicationValuesPath, readValuesTexts, ValuesFile } from '../environments/values-file';
import { RefusedError, UsageError } from '../base/errors';
import { prepareSynthesis } from '../synth';
import { chartVersionsPath, projectChartVersions } from '../synth/chart-versions';
import type { ProjectLock } from './edit-lock';
import { readRunHistory, type RunHistory } from './run-history';

/**
 * Changes of the running version (1.3 step 3) and the steps of a strategy (1.4: blue-green's
 * switch and retire) as commands: each is one edit of one application values file, the field
 * the application's strategy names (src/environments/strategy-<strategy>.ts), made with the yaml
 * document API (every comment and line not edited stays as written), validated and rendered
 * in this process before the file is written.
 */

/** One edit of one values file: the field its application's strategy names, in its file. */
export interface ValuesEdit extends FieldEdit {
  readonly environment: string;
  /** The application whose values file is edited (an infrastructure release for the environment's values: src/release/upgrade.ts). */
  readonly application: string;
  /** The values file, relative to the project root. */
  readonly file: string;
}

function checkTag(tag: string, option: string): void {
  if (!IMAGE_TAG_PATTERN.test(tag)) throw new UsageError(`${option} "${tag}" must look like v<major>.<minor>.<patch>`);
}

/** An application in an environment: what an edit command acts on. */
interface Target {
  readonly environment: Environment;
  readonly application: Application;
}

/** The environment `name` and its application `app` (`--app`, optional when it has one). */
function targetOf(environments: readonly Environment[], name: string, option: string, app: string | undefined): Target {
  const environment = environmentNamed(environments, name, option);
  return { environment, application: selectApplication(environment, app) };
}

function fileOf({ environment, application }: Target): string {
  return applicationValuesPath(environment.name, application.name);
}

/** `--env <env>` plus `--app <app>` when the environment has several applications: how messages name a command. */
function commandTarget({ environment, application }: Target): string {
  return `--env ${environment.name}${environment.applications.length > 1 ? ` --app ${application.name}` : ''}`;
}

/** `<environment>` or `<environment>/<application>` when there are several: how summaries name the target. */
function label({ environment, application }: Target): string {
  return environment.applications.length > 1 ? `${environment.name}/${application.name}` : environment.name;
}

/** How the strategy's summaries and hints name the target. */
function editTarget(target: Target): EditTarget {
  return { label: label(target), options: commandTarget(target) };
}

/** The strategy's field edit as an edit of the target's values file. */
function valuesEdit(target: Target, edit: FieldEdit): ValuesEdit {
  return { environment: target.environment.name, application: target.application.name, file: fileOf(target), ...edit };
}

/**
 * The edit that makes `environment` run `tag`, as its application's strategy makes it: for
 * rolling and canary `image.tag`; for blue-green the inactive unit's tag, so that the new
 * version comes up beside the active one and traffic moves only with `switch`.
 */
export function planRelease(environments: readonly Environment[], name: string, tag: string, option = '--env', app?: string, options: { readonly allowOlder?: boolean } = {}): ValuesEdit {
  const target = targetOf(environments, name, option, app);
  const order = ENVIRONMENT_ORDER as readonly string[];
  if (!(RELEASE_ENVIRONMENTS as readonly string[]).includes(name)) {
    const previous = order[order.indexOf(name) - 1]!;
    throw new RefusedError(
      `${name} receives a version by promotion (${order.join(' -> ')}): npm run promote -- --from ${previous} --to ${name}; release sets a tag in ${RELEASE_ENVIRONMENTS.join(' and ')} only`,
    );
  }
  checkTag(tag, '--tag');
  const running = runningTagOf(target.application);
  if (!options.allowOlder && compareTags(tag, running) < 0) {
    throw new RefusedError(
      `${tag} is older than the ${running} ${label(target)} runs; pass --allow-older to move it back, or use \`npm run rollback -- ${commandTarget(target)}\``,
    );
  }
  return releaseEdit(target, tag);
}

function releaseEdit(target: Target, tag: string): ValuesEdit {
  checkTag(tag, '--tag');
  return valuesEdit(target, strategyValuesOf(target.application).release(target.application, tag, editTarget(target)));
}

/** `npm run <step>`: the step of the application's strategy, refused when its strategy has none. */
function stepEdit(target: Target, step: Exclude<StepName, 'rollback'>): ValuesEdit {
  const { strategy } = target.application;
  const plan = strategyValuesOf(target.application).steps[step];
  if (plan === undefined) {
    throw new RefusedError(`${label(target)} uses the ${strategy.type} strategy; \`npm run ${step}\` is a step of ${strategiesWithStep(step).join(', ')} only`);
  }
  return valuesEdit(target, plan(target.application, editTarget(target)));
}

export interface PromotionOptions {
  /**
   * Allow moving `to` to a version older than the one it runs.
   * @default false
   */
  readonly allowOlder?: boolean;
  /**
   * The application to promote (`--app`).
   * @default - the environment's only application
   */
  readonly app?: string;
}

/**
 * The order's rules of a promotion from `from` to `to` (the next environment, never the same,
 * a skip or backward); the `from` environment when they hold.
 */
export function checkPromotionOrder(environments: readonly Environment[], from: string, to: string): Environment {
  const sourceEnvironment = environmentNamed(environments, from, '--from');
  environmentNamed(environments, to, '--to');
  const order = ENVIRONMENT_ORDER as readonly string[];
  const chain = order.join(' -> ');
  const fromIndex = order.indexOf(from);
  const toIndex = order.indexOf(to);
  if (from === to) throw new RefusedError(`--from and --to are both "${from}": promotion moves a version to the next environment (${chain})`);
  if (fromIndex === order.length - 1) {
    throw new RefusedError(`"${from}" is the last environment (${chain}); there is nothing to promote it to`);
  }
  if (toIndex < fromIndex) {
    throw new RefusedError(
      `"${from}" -> "${to}" moves backward; promotion follows ${chain}. To run an older version in ${to}, use \`npm run rollback -- --env ${to}\``,
    );
  }
  if (toIndex > fromIndex + 1) {
    const skipped = order.slice(fromIndex + 1, toIndex).join(', ');
    throw new RefusedError(`"${from}" -> "${to}" skips ${skipped}; promotion follows ${chain}: promote to ${order[fromIndex + 1]} first`);
  }
  return sourceEnvironment;
}

/**
 * Copy the running tag of an application in `from` to the same application in `to`, which
 * must be the next environment in the order.
 */
export function planPromotion(environments: readonly Environment[], from: string, to: string, options: PromotionOptions = {}): ValuesEdit {
  const sourceEnvironment = checkPromotionOrder(environments, from, to);
  const target = targetOf(environments, to, '--to', options.app);
  const source = sourceEnvironment.applications.find((app) => app.name === target.application.name);
  if (source === undefined) {
    throw new RefusedError(
      `${from} has no application ${target.application.name} (it has ${sourceEnvironment.applications.map((app) => app.name).join(', ')}); add src/environments/${from}/${target.application.name}.yaml first`,
    );
  }
  const tag = runningTagOf(source);
  const running = runningTagOf(target.application);
  if (!options.allowOlder && compareTags(tag, running) < 0) {
    throw new RefusedError(
      `${from} runs ${tag}, older than the ${running} ${label(target)} runs; promotion moves ${to} forward only. ` +
        `Pass --allow-older to move ${to} back to ${tag}, or use \`npm run rollback -- ${commandTarget(target)}\``,
    );
  }
  return releaseEdit(target, tag);
}

/** `npm run switch` (blue-green step 2, 1.4 steps 4-5): the Service selects the other unit, which must be running. */
export function planSwitch(environments: readonly Environment[], name: string, app?: string): ValuesEdit {
  return stepEdit(targetOf(environments, name, '--env', app), 'switch');
}

/** `npm run retire` (blue-green step 3, 1.4 step 6): remove the unit that no longer takes traffic. */
export function planRetire(environments: readonly Environment[], name: string, app?: string): ValuesEdit {
  return stepEdit(targetOf(environments, name, '--env', app), 'retire');
}

/** The tags `after` deploys or serves that `before` did not: what a rollback brings (back) into the environment. */
function broughtTags(before: ValuesFile, after: ValuesFile): string[] {
  const then = tagsIn(before.data());
  const now = tagsIn(after.data());
  if (now === undefined) return [];
  return [...new Set([...now.deployed.filter((tag) => !then?.deployed.includes(tag)), ...(now.running === then?.running ? [] : [now.running])])];
}

/** How a refusal names the rule, and where the history was read. */
function ranRule(target: Target, history: RunHistory): string {
  const listed = history.ran.length === 0 ? 'none' : history.ran.join(', ');
  return `rollback goes only to a tag ${target.environment.name} ran before (the tags that served in the git history of ${history.file}: ${listed})`;
}

/** Refused unless the history can say what ran: a git work tree with commits, and the values file as committed. */
function assertHistoryReadable(target: Target, history: RunHistory): void {
  if (!history.committed) {
    throw new RefusedError(`${label(target)}: rollback goes only to a tag ${target.environment.name} ran before, read from the git history of ${history.file}, and this project is not a git work tree with commits`);
  }
  if (history.uncommitted) {
    throw new RefusedError(
      `${history.file} has changes that are not committed; rollback reads what ${target.environment.name} ran from the file's committed history and writes the file whole: ` +
        `commit the changes (reviewed) or discard them (git checkout -- ${history.file}) first`,
    );
  }
}

/** Refused unless `tag` served in the history; a shallow clone's cut history is said to be one. */
function assertRan(target: Target, history: RunHistory, tag: string): void {
  if (history.ran.includes(tag)) return;
  if (history.shallow) {
    throw new RefusedError(
      `${label(target)}: ${tag} is not in the history of ${history.file} this shallow clone holds, so whether ${target.environment.name} ran it cannot be told; ` +
        `${ranRule(target, history)}: fetch the whole history (git fetch --unshallow) and run it again`,
    );
  }
  const why = history.neverServed.includes(tag) ? `${tag} never served in ${target.environment.name} (it ran only on a unit beside the one that served)` : `${tag} never ran in ${target.environment.name}`;
  throw new RefusedError(`${label(target)}: ${why}; ${ranRule(target, history)}. A new version is a release or a promotion (npm run release, npm run promote)`);
}

/**
 * Back to a version the environment ran (1.5, as a reviewed change): `tag`, or the newest
 * running tag of the file's committed history that is not the one running now, released as
 * the strategy releases. A strategy may first step back otherwise: blue-green, while the older
 * unit still runs beside the active one, switches the traffic back to it. Whatever the edit
 * brings into the environment (a unit's tag, the tag that serves) must have served there
 * before, by the values file's committed history (./run-history.ts); the file must be as
 * committed, and a shallow clone that cannot show the tag is refused.
 */
export function planRollback(environments: readonly Environment[], name: string, root: string, tag?: string, app?: string): ValuesEdit {
  const target = targetOf(environments, name, '--env', app);
  if (tag !== undefined) checkTag(tag, '--tag');
  const history = readRunHistory(root, fileOf(target));
  assertHistoryReadable(target, history);
  // The tag asked for, whether or not the file already has it (nothing to write is no licence).
  if (tag !== undefined) assertRan(target, history, tag);
  const running = runningTagOf(target.application);
  const back = tag === undefined ? strategyValuesOf(target.application).steps.rollback?.(target.application, editTarget(target)) : undefined;
  let edit: ValuesEdit;
  if (back !== undefined) edit = valuesEdit(target, back);
  else {
    const previous = tag ?? history.ran.find((candidate) => candidate !== running);
    if (previous === undefined) {
      const cut = history.shallow ? ` (this is a shallow clone: fetch the whole history, git fetch --unshallow, and run it again)` : '';
      throw new RefusedError(`${label(target)}: the committed history of ${fileOf(target)} names no version before ${running}${cut}; ${ranRule(target, history)}`);
    }
    edit = releaseEdit(target, previous);
  }
  // What the edit brings in: the tag a unit gets, the tag that serves after a switch back.
  if (!edit.unchanged) {
    const current = new ValuesFile(edit.file, fs.readFileSync(path.join(root, edit.file), 'utf8'));
    for (const brought of broughtTags(current, new ValuesFile(edit.file, editedText(current, edit)))) assertRan(target, history, brought);
  }
  return edit;
}

export interface ReleaseResult {
  readonly edit: ValuesEdit;
  /** False when the file already said it: nothing was written. */
  readonly written: boolean;
  /** dist/ before against dist/ after, and the chart versions the edit moved in its environment's record. */
  readonly diff: RenderedDiff;
}

/** The text of `file` with `edit` applied through the document API. */
export function editedText(file: ValuesFile, edit: ValuesEdit): string {
  return file.edited((document: Document.Parsed) => {
    if (edit.value === undefined) document.deleteIn(edit.path);
    else document.setIn(edit.path, edit.value);
  });
}

/**
 * Apply a planned edit to the project at `root`, holding its lock: edit the values file in
 * memory, validate every environment with it, judge the blue-green step against HEAD and
 * render dist/ beside the old one; then write the values file whole, and then the chart
 * version record and dist/ (src/synth/index.ts, `swapIn`).
 * A failure before the values file is written leaves the project untouched; a failed swap
 * writes the original values file back. A run killed between the two writes leaves the new
 * values file, which the next command renders dist/ from (src/release/edit-lock.ts).
 */
export function applyEdit(root: string, edit: ValuesEdit, lock: ProjectLock): ReleaseResult {
  const distDir = path.join(root, RENDERED_DIR);
  if (edit.unchanged) return { edit, written: false, diff: { environments: [] } };
  const texts = readValuesTexts(root);
  const original = texts.get(edit.file);
  if (original === undefined) throw new RefusedError(`${edit.file} does not exist`);
  const text = editedText(new ValuesFile(edit.file, original), edit);
  const before = readManifestTree(distDir, '.yaml', true);
  const versionsBefore = projectChartVersions(root, edit.environment);
  const prepared = prepareSynthesis({ outdir: distDir, root, texts: new Map([...texts, [edit.file, text]]) });
  try {
    lock.intend(edit.file, text);
    lock.writeWhole(edit.file, text);
  } catch (error) {
    prepared.discard();
    throw error;
  }
  try {
    prepared.swapIn();
  } catch (error) {
    prepared.discard();
    lock.writeWhole(edit.file, original);
    throw error;
  }
  return {
    edit,
    written: true,
    diff: {
      ...diffRenderedTrees(before, readManifestTree(distDir, '.yaml', true)),
      versions: chartVersionChanges(new Map([[edit.environment, versionsBefore]]), new Map([[edit.environment, projectChartVersions(root, edit.environment)]]), chartVersionsPath),
    },
  };
}
