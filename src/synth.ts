import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, YamlOutputType } from 'cdk8s';
import { ApplicationChart } from './charts/application-chart';
import { type Environment, loadEnvironments } from './environments';

/** Rendered manifests end in `.yaml`; one file per chart, named after the chart. */
export const MANIFEST_EXTENSION = '.yaml';

/** Render one validated environment into `outdir`, one file per chart. */
export function renderEnvironment(environment: Environment, outdir: string): void {
  const app = new App({ outdir, outputFileExtension: MANIFEST_EXTENSION, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new ApplicationChart(app, 'application', { environment });
  app.synth();
}

export interface SynthesizeOptions {
  /** Where the committed manifests live; replaced as a whole, never half-written. */
  readonly outdir: string;
  /**
   * The promotion order.
   * @default ENVIRONMENT_ORDER
   */
  readonly order?: readonly string[];
  /**
   * The environment files as written, by name; validated before anything is rendered.
   * @default ENVIRONMENT_FILES
   */
  readonly files?: Readonly<Record<string, unknown>>;
  /**
   * Already validated environments, in order; when given, `order` and `files` are ignored.
   * @default - validated from `order` and `files`
   */
  readonly environments?: readonly Environment[];
}

/**
 * Render every environment into a temporary folder beside `outdir`, then swap it in.
 * Validation and rendering happen before the swap, so any error leaves `outdir` as it was.
 */
export function synthesize(options: SynthesizeOptions): void {
  const staging = renderToTemporary(options);
  replaceDirectory(staging, options.outdir);
}

/** The files of `outdir` that differ from a fresh render: changed, added or removed. */
export function checkSynthesized(options: SynthesizeOptions): string[] {
  const staging = renderToTemporary(options);
  try {
    return compareTrees(staging, options.outdir);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function renderToTemporary(options: SynthesizeOptions): string {
  const environments = options.environments ?? loadEnvironments(options.order, options.files);
  const parent = path.dirname(path.resolve(options.outdir));
  fs.mkdirSync(parent, { recursive: true });
  // Beside outdir, so the final rename stays on one filesystem.
  const staging = fs.mkdtempSync(path.join(parent, `.${path.basename(options.outdir)}-render-`));
  try {
    for (const environment of environments) renderEnvironment(environment, path.join(staging, environment.name));
    return staging;
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
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
