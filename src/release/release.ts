import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { IMAGE_TAG_PATTERN } from '../constants';
import { diffRenderedTrees, type RenderedDiff } from '../diff/rendered-diff';
import { ENVIRONMENT_FILES, ENVIRONMENT_ORDER, loadEnvironments, type Environment } from '../environments';
import { runningTagOf } from '../environments/running-tag';
import { UsageError } from '../tooling/cli';
import { renderToTree } from '../tooling/render';
import { readManifestTree } from '../tooling/tree';
import { readStringProperty, setStringProperty } from './environment-source';

/**
 * "Change the running version" (1.3 step 3) as one command: which field of which
 * environment file gets the new tag, checked in memory before anything is written.
 */

/** One tag edit in one environment file. */
export interface TagChange {
  readonly environment: string;
  /** Field path inside the environment file, e.g. `['image', 'tag']`. */
  readonly path: readonly string[];
  readonly tag: string;
  /** The tag the field holds now; undefined when the field is added (a new blue-green unit). */
  readonly previous: string | undefined;
  /** True when the environment already serves or holds the tag: nothing to write. */
  readonly unchanged: boolean;
  /** One line for people: what runs where after the change. */
  readonly summary: string;
}

function environmentNamed(environments: readonly Environment[], name: string, option: string): Environment {
  const environment = environments.find((env) => env.name === name);
  if (environment === undefined) {
    throw new UsageError(`${option} "${name}" is not an environment; choose one of ${ENVIRONMENT_ORDER.join(', ')}`);
  }
  return environment;
}

/**
 * The edit that makes `environment` run `tag`: `image.tag` for rolling and canary; for
 * blue-green the inactive unit's tag (the unit is added when absent), so that the new
 * version comes up beside the active one and traffic moves only when `active` changes.
 */
export function planRelease(environments: readonly Environment[], name: string, tag: string, option = '--env'): TagChange {
  const environment = environmentNamed(environments, name, option);
  if (!IMAGE_TAG_PATTERN.test(tag)) throw new UsageError(`--tag "${tag}" must look like v<major>.<minor>.<patch>`);
  const { strategy } = environment;
  if (strategy.type !== 'blue-green') {
    return {
      environment: name,
      path: ['image', 'tag'],
      tag,
      previous: environment.image.tag,
      unchanged: environment.image.tag === tag,
      summary: `${name}: image.tag ${environment.image.tag} -> ${tag} (${strategy.type})`,
    };
  }
  const active = strategy.blueGreen.active;
  const inactive = active === 'blue' ? 'green' : 'blue';
  const previous = strategy.blueGreen.units[inactive]?.tag;
  return {
    environment: name,
    path: ['strategy', 'blueGreen', 'units', inactive, 'tag'],
    tag,
    previous,
    // The active unit already serving the tag counts too: a second copy would serve nothing.
    unchanged: previous === tag || runningTagOf(environment) === tag,
    summary:
      `${name}: unit ${inactive} ${previous === undefined ? 'added with' : `${previous} ->`} ${tag} beside ${active} ` +
      `(active, ${runningTagOf(environment)}); traffic stays on ${active} until strategy.blueGreen.active is switched`,
  };
}

/** Copy the running tag of `from` to `to`, which must be the next environment in the order. */
export function planPromotion(environments: readonly Environment[], from: string, to: string): TagChange {
  const source = environmentNamed(environments, from, '--from');
  environmentNamed(environments, to, '--to');
  const order = ENVIRONMENT_ORDER as readonly string[];
  const chain = order.join(' -> ');
  const fromIndex = order.indexOf(from);
  const toIndex = order.indexOf(to);
  if (from === to) throw new UsageError(`--from and --to are both "${from}": promotion moves a version to the next environment (${chain})`);
  if (fromIndex === order.length - 1) {
    throw new UsageError(`"${from}" is the last environment (${chain}); there is nothing to promote it to`);
  }
  if (toIndex < fromIndex) {
    throw new UsageError(
      `"${from}" -> "${to}" moves backward; promotion follows ${chain}. To run an older version in ${to}, use \`npm run release -- --env ${to} --tag <tag>\``,
    );
  }
  if (toIndex > fromIndex + 1) {
    const skipped = order.slice(fromIndex + 1, toIndex).join(', ');
    throw new UsageError(`"${from}" -> "${to}" skips ${skipped}; promotion follows ${chain}: promote to ${order[fromIndex + 1]} first`);
  }
  return planRelease(environments, to, runningTagOf(source), '--to');
}

/** A deep copy of the environment files with `change` applied, mirroring the source edit. */
export function applyToFiles(files: Readonly<Record<string, unknown>>, change: TagChange): Record<string, unknown> {
  const copy = structuredClone(files) as Record<string, any>;
  let node = copy[change.environment] as Record<string, any>;
  for (const key of change.path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, any>;
  }
  node[change.path[change.path.length - 1]!] = change.tag;
  return copy;
}

export interface ReleaseResult {
  readonly change: TagChange;
  /** False when the environment already had the tag: nothing was written. */
  readonly written: boolean;
  /** Committed dist/ before against dist/ after. */
  readonly diff: RenderedDiff;
}

/** `src/environments/<env>.ts` below a project root. */
export function environmentFile(root: string, environment: string): string {
  return path.join(root, 'src', 'environments', `${environment}.ts`);
}

/**
 * Apply a planned change to the project at `root`: edit the environment file, validate
 * every environment with the edit and render them in memory, and only then write the
 * file and re-render dist/ from the edited sources (`node scripts/run.cjs main`).
 * Anything failing before the write leaves the project untouched; a failing re-render
 * restores the file (synth itself never half-writes dist/).
 */
export function applyTagChange(root: string, change: TagChange, files: Readonly<Record<string, unknown>> = ENVIRONMENT_FILES): ReleaseResult {
  const distDir = path.join(root, 'dist');
  const before = readManifestTree(distDir);
  if (change.unchanged) return { change, written: false, diff: { environments: [] } };

  const file = environmentFile(root, change.environment);
  const relative = path.relative(root, file);
  const original = fs.readFileSync(file, 'utf8');
  const edited = setStringProperty(original, change.environment, change.path, change.tag, relative);
  if (readStringProperty(edited, change.environment, change.path) !== change.tag) {
    throw new UsageError(`${relative}: the edit of ${change.path.join('.')} did not take; edit it by hand`);
  }
  // Validation and rendering of every environment with the edit, before any write.
  renderToTree(loadEnvironments(ENVIRONMENT_ORDER, applyToFiles(files, change)));

  fs.writeFileSync(file, edited);
  const { CDK8S_OUTDIR: _ignored, ...env } = process.env;
  const synth = spawnSync(process.execPath, [path.join(root, 'scripts', 'run.cjs'), 'main', '--outdir', distDir], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  if (synth.status !== 0) {
    fs.writeFileSync(file, original);
    throw new UsageError(`re-rendering dist/ failed, so ${relative} was restored:\n${(synth.stderr || synth.stdout).trim()}`);
  }
  return { change, written: true, diff: diffRenderedTrees(before, readManifestTree(distDir)) };
}
