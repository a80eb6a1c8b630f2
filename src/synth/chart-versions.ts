import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../base/errors';
import { readCommittedFiles } from '../base/git';
import { compareText } from '../base/text-order';
import { RENDERED_DIR } from '../contract/layout';
import type { Environment } from '../environments';
import { CHART_VERSIONS_FILE, VALUES_DIR } from '../environments/values-file';
import { runningTagOf } from '../strategies/values-registry';

/**
 * The record of each application's chart version in an environment,
 * `src/environments/<environment>/chart-versions.json`: committed beside the values it was
 * decided from, never inside the generated dist/ (which `rm -rf dist` may remove and synth
 * replaces whole). Synth decides the versions against it and writes it before it swaps dist/
 * in, so a version is recorded before anything renders or publishes it, and a render from
 * the record and the values gives the same dist/ whatever moment a run was killed at.
 */
export { CHART_VERSIONS_FILE };

/** `src/environments/<environment>/chart-versions.json`: an environment's record, relative to the project. */
export function chartVersionsPath(environment: string): string {
  return `${VALUES_DIR}/${environment}/${CHART_VERSIONS_FILE}`;
}

/**
 * Where the record lived before it moved beside the values (`dist/<environment>/chart-versions.json`):
 * read at a base commit that predates the move, so `synth --check --base` compares across it.
 */
export function formerChartVersionsPath(environment: string): string {
  return `${RENDERED_DIR}/${environment}/${CHART_VERSIONS_FILE}`;
}

/** One application's published chart (issue 26; contract 1.1 step 3, 1.3.1, 9.2). */
export interface ChartVersion {
  /** The chart's semver version: bumped exactly when the rendered content changes. */
  readonly version: string;
  /** The image tag the application serves (Chart.yaml `appVersion`). */
  readonly appVersion: string;
  /** sha256 of the rendered file (`dist/<environment>/<application>.yaml`): the chart's content. */
  readonly digest: string;
  /** sha256 of the values it was rendered from (the environment's settings and the application's file). */
  readonly values: string;
}

export type ChartVersions = Readonly<Record<string, ChartVersion>>;

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

const chartVersionsSchema = z.record(
  z.string(),
  z.strictObject({
    version: z.string().regex(SEMVER, 'a version <major>.<minor>.<patch>'),
    appVersion: z.string().min(1),
    digest: z.string().regex(DIGEST, 'sha256:<64 hex digits>'),
    values: z.string().regex(DIGEST, 'sha256:<64 hex digits>'),
  }),
);

/** The first version of an application's chart. */
export const FIRST_CHART_VERSION = '0.1.0';

export function sha256(text: string): string {
  return `sha256:${crypto.createHash('sha256').update(text).digest('hex')}`;
}

/** JSON with every object's keys sorted: the same data, the same text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => compareText(a, b)))
      : item,
  );
}

/** What an application's chart is rendered from: the environment's own settings and the application's values. */
export function valuesDigest(environment: Environment, application: string): string {
  const { applications, ...settings } = environment;
  // The values, not where they were written: the file's line map is left out.
  const { source: _source, ...values } = applications.find((candidate) => candidate.name === application)!;
  return sha256(canonicalJson({ environment: settings, application: values }));
}

/**
 * The next version of a chart (the rule of docs/releases.md, "The release artifact"): unchanged while
 * its rendered content is; a patch when the content changed with the values (a tag, replicas,
 * any values file change); a minor when the values are the same, so the platform's code
 * changed what it renders. A first chart is FIRST_CHART_VERSION.
 */
export function nextChartVersion(previous: ChartVersion | undefined, current: Omit<ChartVersion, 'version'>): ChartVersion {
  if (previous === undefined) return { version: FIRST_CHART_VERSION, ...current };
  if (previous.digest === current.digest) return { ...previous, ...current, version: previous.version };
  const [major, minor, patch] = SEMVER.exec(previous.version)!.slice(1).map(Number) as [number, number, number];
  const version = previous.values === current.values ? `${major}.${minor + 1}.0` : `${major}.${minor}.${patch + 1}`;
  return { version, ...current };
}

/** The versions file's text: applications in name order, one key per line. */
export function chartVersionsText(versions: ChartVersions): string {
  const ordered = Object.fromEntries(Object.entries(versions).sort(([a], [b]) => compareText(a, b)));
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** Versions from a record's text; refused, naming `where` and the field, when it is not one. */
export function parseChartVersions(text: string, where: string): ChartVersions {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${where}: not JSON (${(error as Error).message}); restore it from git (git checkout -- ${where}), then npm run synth`]);
  }
  const parsed = chartVersionsSchema.safeParse(data);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${where}: ${issue.path.join('.') || '(file)'}: ${issue.message}`));
  }
  return parsed.data;
}

/** The text of an environment's record in the project at `root`; undefined when it has none yet. */
export function readChartVersionsText(root: string, environment: string): string | undefined {
  const file = path.join(root, chartVersionsPath(environment));
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}

/**
 * Each environment's record as committed in `commit` (a full id; `ref` names it in messages):
 * where it lives now, or, in a commit from before it moved beside the values, where it lived
 * then (formerChartVersionsPath). An environment without either has none: left out.
 */
export function committedChartVersions(root: string, commit: string, ref: string, environments: readonly string[]): Map<string, ChartVersions> {
  // `./`: relative to the project, which may be a folder of its repository.
  const object = (file: string) => `${commit}:./${file}`;
  const committed = readCommittedFiles(root, environments.flatMap((environment) => [object(chartVersionsPath(environment)), object(formerChartVersionsPath(environment))]));
  const versions = new Map<string, ChartVersions>();
  for (const environment of environments) {
    for (const file of [chartVersionsPath(environment), formerChartVersionsPath(environment)]) {
      const text = committed.get(object(file));
      if (text === undefined) continue;
      versions.set(environment, parseChartVersions(text, `${file} at ${ref}`));
      break;
    }
  }
  return versions;
}

/**
 * The versions an environment's render is decided against: the project's record (what was
 * versioned), whatever folder is rendered; none when the environment has no record yet.
 */
export function projectChartVersions(root: string, environment: string): ChartVersions {
  const text = readChartVersionsText(root, environment);
  return text === undefined ? {} : parseChartVersions(text, chartVersionsPath(environment));
}

/**
 * Each application's chart version in a fresh render: decided from its rendered file's text
 * (`rendered`) against the versions of the folder the render replaces (`before`).
 */
export function chartVersionsOf(environment: Environment, rendered: (application: string) => string, before: ChartVersions): ChartVersions {
  const versions: Record<string, ChartVersion> = {};
  for (const application of environment.applications) {
    versions[application.name] = nextChartVersion(before[application.name], {
      appVersion: runningTagOf(application),
      digest: sha256(rendered(application.name)),
      values: valuesDigest(environment, application.name),
    });
  }
  return versions;
}

/** Whether `a` is a higher version than `b` (both `<major>.<minor>.<patch>`). */
function higher(a: string, b: string): boolean {
  const [x, y] = [a, b].map((version) => SEMVER.exec(version)!.slice(1).map(Number)) as [number[], number[]];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! > y[i]!;
  return false;
}

/**
 * The version-increment rule chart-testing's `ct lint` applies to a pull request (a chart
 * whose content changed since the target branch must carry a higher version), made whole
 * over the versions of one environment at the base (`before`) and now (`after`): a version
 * never goes down (whatever the content: a record removed or set back starts over below
 * what was published), and a version that stays names the same content.
 */
export function versionIncrementProblems(file: string, before: ChartVersions, after: ChartVersions, base: string): string[] {
  return Object.entries(after).flatMap(([application, now]) => {
    const then = before[application];
    if (then === undefined) return [];
    if (higher(then.version, now.version)) {
      return [`${file}: ${application}: version ${now.version} is lower than ${then.version} at ${base}: a chart version never goes down (restore ${file} from ${base}, then npm run synth)`];
    }
    if (now.version === then.version && now.digest !== then.digest) {
      return [
        `${file}: ${application}: version ${now.version} names other content than at ${base} (its chart's rendered content changed): a chart version names one content for good (run npm run synth: it bumps the version)`,
      ];
    }
    return [];
  });
}
