import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, type Chart } from 'cdk8s';
import { YAMLException } from 'js-yaml';
import { ApplicationChart } from '../charts/application-chart';
import { GitopsChart, chartFootprint } from '../charts/gitops-chart';
import { PLATFORM_CHART_BUILDERS } from '../charts';
import { APPLICATIONS_STAGE, DELIVERY_STAGES, GITOPS_CHART_ID, stageWave } from '../contract/platform-charts';
import { CommittedChart } from '../strategies/committed-chart';
import { checksCommittedSteps, stepProblems } from '../strategies/registry';
import { hasCommittedHead, readCommittedFiles } from '../base/git';
import { manifestText } from '../base/manifest-files';
import { applicationChartId, chartFile, chartFileName, RENDERED_DIR, RENDER_MARKER, RENDER_MARKER_TEXT, renderStagingPrefix } from '../contract/layout';
import { assertReplaceable, createFolder, outdirLabel, outputFolder } from './output-folder';
import { type ChartVersions, chartVersionsOf, chartVersionsPath, chartVersionsText, projectChartVersions, readChartVersionsText } from './chart-versions';
import { type Environment, loadEnvironments } from '../environments';
import { ConfigError, RefusedError } from '../base/errors';
import { type Platform, loadPlatform } from '../environments/platform';
import { readValuesTexts, type ValuesTexts } from '../environments/values-file';
import { projectRoot } from '../base/project-root';
import { argoCdKustomization } from '../infrastructure/argo-cd-kustomization';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath } from '../infrastructure/releases';

/** The delivered chart ids of an environment, in delivery order (applications by name). */
export function deliveredChartIds(environment: Environment): string[] {
  return DELIVERY_STAGES.flatMap((stage) => (stage.id === APPLICATIONS_STAGE ? environment.applications.map((a) => applicationChartId(a.name)) : [stage.id]));
}

/** One delivered chart of an environment, built but not written. */
export interface DeliveredChart {
  /** Chart id: `dist/<env>/<id>.yaml` and the child Application's name. */
  readonly id: string;
  /** Its stage in DELIVERY_STAGES. */
  readonly stage: string;
  readonly chart: Chart;
}

/** The charts of one environment, built in `app` but not written. */
export interface EnvironmentCharts {
  /** The delivered charts, in delivery order. */
  readonly delivered: readonly DeliveredChart[];
  /** The GitOps wiring: AppProject, root Application, child Applications. */
  readonly gitops: GitopsChart;
  /** Each application's chart version, decided from its rendered file (./chart-versions.ts). */
  readonly versions: ChartVersions;
  /** The rendered text of each application's chart, by chart id: rendered once, for its version and its file. */
  readonly texts: ReadonlyMap<string, string>;
}

/**
 * Build every chart of one validated environment inside `app`; the applications' chart
 * versions are decided against `previous` (the versions of the folder the render replaces).
 */
export function buildEnvironment(app: App, environment: Environment, platform: Platform = loadPlatform(), previous: ChartVersions = {}): EnvironmentCharts {
  const delivered: DeliveredChart[] = DELIVERY_STAGES.flatMap(({ id: stage }): DeliveredChart[] =>
    stage === APPLICATIONS_STAGE
      ? environment.applications.map((application) => {
          const id = applicationChartId(application.name);
          return { id, stage, chart: new ApplicationChart(app, id, { environment, application }) };
        })
      : [{ id: stage, stage, chart: PLATFORM_CHART_BUILDERS[stage](app, stage, { environment, platform }) }],
  );
  const texts = new Map(
    delivered.filter((child) => child.stage === APPLICATIONS_STAGE).map((child) => [child.id, manifestText(child.chart.toJson())] as const),
  );
  // Before the GitOps wiring: an environment that follows the published charts pins each version.
  const versions = chartVersionsOf(environment, (application) => texts.get(applicationChartId(application))!, previous);
  const gitops = new GitopsChart(app, GITOPS_CHART_ID, {
    environment,
    platform,
    children: delivered.map((child) => ({ ...chartFootprint(child.id, child.chart), syncWave: stageWave(child.stage) })),
    chartVersions: Object.fromEntries(Object.entries(versions).map(([application, version]) => [applicationChartId(application), version.version])),
  });
  return { delivered, gitops, versions, texts };
}

/**
 * Write every chart of `app` to `<outdir>/<chart id>.yaml` (`chartFileName`), holding the
 * objects `chart.toJson()` resolves (cdk8s' validation and dependency order included),
 * written by `manifestText`.
 */
export function writeCharts(app: App, outdir: string, rendered: ReadonlyMap<string, string> = new Map()): void {
  fs.mkdirSync(outdir, { recursive: true });
  for (const chart of app.charts) {
    fs.writeFileSync(path.join(outdir, chartFileName(chart.node.id)), rendered.get(chart.node.id) ?? manifestText(chart.toJson()));
  }
}

/**
 * Render one validated environment into `outdir`, one file per chart; its applications'
 * chart versions, decided against `previous`, are returned (synth records them).
 */
export function renderEnvironment(environment: Environment, outdir: string, platform: Platform = loadPlatform(), previous: ChartVersions = {}): ChartVersions {
  const app = new App({ outdir });
  const { versions, texts } = buildEnvironment(app, environment, platform, previous);
  writeCharts(app, outdir, texts);
  writeArgoCdKustomization(environment, platform, outdir);
  return versions;
}

/**
 * Write the environment's kustomization of Argo CD (src/infrastructure/argo-cd-kustomization.ts)
 * into `<outdir>/argocd/`, the folder its `argocd` Application and the Pulumi bootstrap read.
 */
export function writeArgoCdKustomization(environment: Environment, platform: Platform, outdir: string): void {
  const folder = path.join(outdir, path.basename(releaseKustomizationPath(environment.name, INFRASTRUCTURE_RELEASES.argoCd)));
  fs.mkdirSync(folder, { recursive: true });
  for (const [file, text] of argoCdKustomization({ environment, platform })) fs.writeFileSync(path.join(folder, file), text);
}

export interface SynthesizeOptions {
  /** Where the committed manifests live; replaced as a whole, never half-written. */
  readonly outdir: string;
  /**
   * The project: its values files, its `src/` (never an output) and its git HEAD, whose
   * committed `dist/` judges blue-green steps.
   * @default projectRoot()
   */
  readonly root?: string;
  /**
   * Where the reviewed state a blue-green step is judged against comes from: `dist/` as
   * committed in HEAD of `root`, or the current contents of `outdir` (tests that walk the
   * steps in a scratch folder).
   * @default 'head' (falls back to 'outdir' when `root` is not a git work tree)
   */
  readonly committed?: 'head' | 'outdir';
  /**
   * The promotion order.
   * @default ENVIRONMENT_ORDER
   */
  readonly order?: readonly string[];
  /**
   * The values files as written (project-relative path -> text); validated before anything is rendered.
   * @default - the values files below `root`
   */
  readonly texts?: ValuesTexts;
  /**
   * Already validated environments, in order; when given, `order` and `texts` are ignored.
   * @default - validated from `order` and `texts`
   */
  readonly environments?: readonly Environment[];
  /**
   * Platform-wide settings as written; validated with the environments, before anything is rendered.
   * @default PLATFORM (src/environments/platform.ts)
   */
  readonly platform?: unknown;
}

/** The validated environments and platform settings; throws one ConfigError listing the problems of both. */
function loadInputs(options: SynthesizeOptions): { environments: readonly Environment[]; platform: Platform } {
  const problems: string[] = [];
  const collect = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  };
  const environments = options.environments ?? collect(() => loadEnvironments(options.texts ?? readValuesTexts(options.root ?? projectRoot()), options.order));
  const platform = collect(() => loadPlatform(options.platform));
  if (environments === undefined || platform === undefined) throw new ConfigError(problems);
  return { environments, platform };
}

/**
 * The steps the environments' applications take in their strategies (blue-green's three
 * changes), judged against `dist/` as committed in HEAD (what the cluster syncs, whatever the
 * working tree holds), so that two steps cannot land in one commit. A project that is not a
 * git work tree has no committed state: then the rendered folder `outdir` stands in for it.
 */
export function strategyStepProblems(environments: readonly Environment[], root: string, outdir: string, source: 'head' | 'outdir' = 'head'): string[] {
  const checked = environments.flatMap((environment) =>
    environment.applications
      .filter(checksCommittedSteps)
      .map((application) => ({ environment: environment.name, chart: applicationChartId(application.name), application })),
  );
  if (checked.length === 0) return [];
  const committed = source === 'head' && hasCommittedHead(root) ? readCommittedCharts(root, checked) : undefined;
  return checked.flatMap(({ environment, chart, application }) => {
    const file = chartFile(environment, chart);
    const text = committed ? committed.get(file) : readIfExists(path.join(outdir, file));
    const label = committed ? `${RENDERED_DIR}/${file} in HEAD` : `${path.basename(outdir)}/${file}`;
    let state: CommittedChart | undefined;
    try {
      state = text === undefined ? undefined : CommittedChart.parse(text);
    } catch (error) {
      if (!(error instanceof YAMLException)) throw error;
      const mend = committed
        ? `restore it from an earlier commit where it reads (git checkout <commit> -- ${RENDERED_DIR}/${file}) and commit that first`
        : 'restore it, or remove it to render without this check';
      return [`${label}: cannot be read as YAML (${error.reason}), so the ${application.strategy.type} step cannot be checked against it; ${mend}`];
    }
    return stepProblems(application, state, label);
  });
}

/**
 * `dist/<environment>/<chart>.yaml` of each (environment, chart) as committed in HEAD of the
 * project at `root`: what the cluster syncs, whatever the working tree holds. Keyed by
 * `<environment>/<chart>.yaml`; undefined where HEAD has no such file.
 */
function readCommittedCharts(root: string, charts: readonly { environment: string; chart: string }[]): Map<string, string | undefined> {
  const files = charts.map(({ environment, chart }) => chartFile(environment, chart));
  // `./`: relative to the project, which may be a folder of its repository.
  const committed = readCommittedFiles(root, files.map((file) => `HEAD:./${RENDERED_DIR}/${file}`));
  return new Map(files.map((file) => [file, committed.get(`HEAD:./${RENDERED_DIR}/${file}`)]));
}

function readIfExists(file: string): string | undefined {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}

/**
 * Render every environment into a temporary folder beside `outdir`, then swap it in.
 * Validation and rendering happen before the swap, so any error leaves `outdir` as it was;
 * `outdir` must be a folder synth may replace (./output-folder.ts, `assertReplaceable`).
 */
export function synthesize(options: SynthesizeOptions): void {
  prepareSynthesis(options).swapIn();
}

/** A render waiting beside its output folder: swap it in, or discard it. */
export interface PreparedSynthesis {
  /**
   * Write the chart version records that changed (a render of the project's own dist/), then
   * replace the output folder with the render (one rename; the previous folder is removed after).
   */
  swapIn(): void;
  /** Remove the render; the output folder and the records stay as they were. */
  discard(): void;
}

/**
 * Whether `outdir` is the project's own dist/ (through a link too): the one render whose
 * chart versions are recorded. A render elsewhere (a scratch folder, a test's) decides the
 * same versions from the record and leaves it alone.
 */
export function isProjectOutput(root: string, outdir: string): boolean {
  return outputFolder(outdir) === outputFolder(path.join(root, RENDERED_DIR));
}

/**
 * Validate and render every environment into a temporary folder beside `outdir`, without
 * touching `outdir`: an edit writes its values file between this and the swap, so that the
 * values file is written first (src/release/edit-lock.ts says why).
 */
export function prepareSynthesis(options: SynthesizeOptions): PreparedSynthesis {
  const root = options.root ?? projectRoot();
  assertReplaceable(options.outdir, root);
  const { environments, platform } = loadInputs(options);
  const problems = strategyStepProblems(environments, root, options.outdir, options.committed);
  if (problems.length > 0) throw new ConfigError(problems);
  // Through a link to a folder, the folder is replaced and the link kept.
  const outdir = outputFolder(options.outdir);
  const { staging, versions } = renderToTemporary(environments, platform, outdir, root);
  const records = isProjectOutput(root, options.outdir) ? changedRecords(root, versions) : [];
  return {
    swapIn: () => {
      // The records first: a version is recorded before dist/ shows it (and before anything
      // publishes it); killed in between, the next synth renders the same dist/ from them.
      const written: ChangedRecord[] = [];
      try {
        for (const record of records) {
          writeRecord(root, record.file, record.text);
          written.push(record);
        }
        replaceDirectory(staging, outdir);
      } catch (error) {
        for (const record of written.reverse()) restoreRecord(root, record);
        fs.rmSync(staging, { recursive: true, force: true });
        throw error;
      }
    },
    discard: () => fs.rmSync(staging, { recursive: true, force: true }),
  };
}

/** A record synth writes: its project-relative file, its new text, and its text before (undefined: none). */
interface ChangedRecord {
  readonly file: string;
  readonly text: string;
  readonly previous: string | undefined;
}

/** Each environment's record whose text the render changes, in environment order. */
function changedRecords(root: string, versions: ReadonlyMap<string, ChartVersions>): ChangedRecord[] {
  return [...versions].flatMap(([environment, decided]) => {
    const previous = readChartVersionsText(root, environment);
    const text = chartVersionsText(decided);
    return text === previous ? [] : [{ file: chartVersionsPath(environment), text, previous }];
  });
}

/**
 * Write a record whole: a file at the project root (on the record's filesystem, whatever
 * dist/ links to), named like dist/'s staging folder so that an interrupted run's leftover
 * is git-ignored and removed with it (src/release/edit-lock.ts), flushed, renamed into place.
 */
function writeRecord(root: string, file: string, text: string): void {
  const temporary = path.join(root, `${renderStagingPrefix(RENDERED_DIR)}${process.pid}-${path.basename(path.dirname(file))}-${path.basename(file)}`);
  try {
    const descriptor = fs.openSync(temporary, 'w');
    try {
      fs.writeSync(descriptor, text);
      fs.fsyncSync(descriptor);
    } finally {
      fs.closeSync(descriptor);
    }
    fs.renameSync(temporary, path.join(root, file));
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Put a record back as it was before this run wrote it (removed when there was none). */
function restoreRecord(root: string, record: ChangedRecord): void {
  if (record.previous === undefined) fs.rmSync(path.join(root, record.file), { force: true });
  else writeRecord(root, record.file, record.previous);
}

/**
 * The files of `outdir` that differ from a fresh render: changed, added or removed; for the
 * project's own dist/, the chart version records too (project-relative: `src/environments/<env>/chart-versions.json`).
 */
export function checkSynthesized(options: SynthesizeOptions): string[] {
  // Only a folder synth could have rendered is compared: never the project, src/ or a folder above them.
  const root = options.root ?? projectRoot();
  assertReplaceable(options.outdir, root);
  const { environments, platform } = loadInputs(options);
  const { staging, versions } = renderToTemporary(environments, platform, options.outdir, root);
  try {
    const records = isProjectOutput(root, options.outdir)
      ? changedRecords(root, versions).map((record) => `${record.file} (${record.previous === undefined ? 'missing' : 'changed'})`)
      : [];
    return [...compareTrees(staging, options.outdir), ...records].sort();
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Render every environment beside `outdir`, and return each environment's chart versions.
 * They are decided against the project's record (`projectChartVersions`), whatever folder is
 * rendered, so a render elsewhere (a link, cdk8s' output, a check) gives the same versions as
 * one into dist/.
 */
function renderToTemporary(environments: readonly Environment[], platform: Platform, outdir: string, root: string): { staging: string; versions: Map<string, ChartVersions> } {
  const parent = path.dirname(path.resolve(outdir));
  createFolder(parent, outdirLabel(outdir));
  // Beside outdir, so the final rename stays on one filesystem.
  const staging = temporaryFolderIn(parent, renderStagingPrefix(path.basename(outdir)), outdir);
  try {
    const versions = new Map<string, ChartVersions>();
    for (const environment of environments) {
      const previous = projectChartVersions(root, environment.name);
      versions.set(environment.name, renderEnvironment(environment, path.join(staging, environment.name), platform, previous));
    }
    fs.writeFileSync(path.join(staging, RENDER_MARKER), RENDER_MARKER_TEXT);
    return { staging, versions };
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

function temporaryFolderIn(parent: string, prefix: string, outdir: string): string {
  try {
    return fs.mkdtempSync(path.join(parent, prefix));
  } catch (error) {
    throw new RefusedError(`${outdirLabel(outdir)}: cannot create the folder synth renders into beside it, in ${parent} (${(error as Error).message})`);
  }
}

function replaceDirectory(source: string, target: string): void {
  const previous = `${source}-previous`;
  const hadTarget = fs.existsSync(target);
  if (hadTarget) fs.renameSync(target, previous);
  try {
    fs.renameSync(source, target);
  } catch (error) {
    if (hadTarget) fs.renameSync(previous, target);
    fs.rmSync(source, { recursive: true, force: true });
    throw error;
  }
  if (hadTarget) fs.rmSync(previous, { recursive: true, force: true });
}

function listFiles(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** Relative paths that differ between two trees, sorted. */
export function compareTrees(expected: string, actual: string): string[] {
  const expectedFiles = listFiles(expected);
  const actualFiles = new Set(listFiles(actual));
  const differences: string[] = [];
  for (const file of expectedFiles) {
    if (!actualFiles.has(file)) differences.push(`${file} (missing)`);
    else if (!fs.readFileSync(path.join(expected, file)).equals(fs.readFileSync(path.join(actual, file)))) {
      differences.push(`${file} (changed)`);
    }
    actualFiles.delete(file);
  }
  for (const file of actualFiles) differences.push(`${file} (not rendered by the code)`);
  return differences.sort();
}
