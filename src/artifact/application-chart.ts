import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { RefusedError } from '../base/errors';
import { applicationChartId, chartFileName, RENDERED_DIR } from '../contract/layout';
import { type ChartVersion, chartVersionsPath, projectChartVersions, sha256 } from '../synth/chart-versions';

/** Where the chart keeps the rendered manifests, verbatim; its one template prints them. */
const MANIFESTS_DIR = 'manifests';

/** The chart's one template: the rendered file as it is (`.Files.Get` reads it as text, so nothing in it is a template). */
const TEMPLATE = `{{ .Files.Get "${MANIFESTS_DIR}/MANIFEST" }}\n`;

/** Annotations of Chart.yaml that tie the chart to what it was made from. */
export const CHART_ANNOTATIONS = {
  environment: 'platform-gitops/environment',
  digest: 'platform-gitops/content-digest',
} as const;

/** An application's chart for one environment: its files by path inside the chart, and its version. */
export interface ApplicationChartFiles {
  readonly name: string;
  readonly version: ChartVersion;
  readonly files: ReadonlyMap<string, string>;
}

/**
 * The application's Helm chart for an environment (issue 26, contract 1.1 step 3): Chart.yaml
 * (name the application, version and appVersion from the environment's record,
 * src/environments/<environment>/chart-versions.json) and the committed rendered file
 * `dist/<environment>/<application>.yaml`, unchanged, which its one template prints; so
 * `helm template` of the chart gives exactly the committed objects. Refused when the rendered
 * file is not the one its version was given for (dist/ is not what synth renders: run it).
 */
export function applicationChart(root: string, environment: string, application: string): ApplicationChartFiles {
  const folder = path.join(root, RENDERED_DIR, environment);
  const version = projectChartVersions(root, environment)[application];
  if (version === undefined) throw new RefusedError(`${chartVersionsPath(environment)}: ${application} has no chart version (run npm run synth)`);
  const file = chartFileName(applicationChartId(application));
  const manifests = fs.readFileSync(path.join(folder, file), 'utf8');
  if (sha256(manifests) !== version.digest) {
    throw new RefusedError(`${RENDERED_DIR}/${environment}/${file} is not the content of ${application}'s chart version ${version.version} (run npm run synth)`);
  }
  const chart = {
    apiVersion: 'v2',
    name: application,
    description: `${application} in ${environment}: the objects of ${RENDERED_DIR}/${environment}/${file}, rendered by platform-gitops`,
    type: 'application',
    version: version.version,
    appVersion: version.appVersion,
    annotations: { [CHART_ANNOTATIONS.environment]: environment, [CHART_ANNOTATIONS.digest]: version.digest },
  };
  return {
    name: application,
    version,
    files: new Map([
      ['Chart.yaml', stringify(chart)],
      [`templates/${file}`, TEMPLATE.replace('MANIFEST', file)],
      [`${MANIFESTS_DIR}/${file}`, manifests],
    ]),
  };
}

/** Write a chart's files into `dir/<name>/`; the chart's folder. */
export function writeChart(chart: ApplicationChartFiles, dir: string): string {
  const folder = path.join(dir, chart.name);
  for (const [file, text] of chart.files) {
    fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    fs.writeFileSync(path.join(folder, file), text);
  }
  return folder;
}
