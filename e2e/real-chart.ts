import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { E2eError } from '../src/base/errors';
import type { KubeObject } from './kube-client';
import { run } from './processes';

/** A release of an upstream chart: its name and namespace, and the values the platform gives it. */
export interface ChartRelease {
  readonly name: string;
  readonly namespace: string;
  readonly values: Record<string, unknown>;
}

/**
 * `helm template` of the chart in folder `chart` for a release, with its values: the objects,
 * limited to `templates` when given (their paths under `templates/`). Helm's values file,
 * cache and configuration stay in `work`.
 */
export function helmTemplate(helm: string, chart: string, release: ChartRelease, work: string, templates: readonly string[] = []): KubeObject[] {
  const valuesFile = path.join(work, `${path.basename(chart)}-values.yaml`);
  fs.writeFileSync(valuesFile, stringify(release.values));
  const rendered = run(
    helm,
    ['template', release.name, chart, '--namespace', release.namespace, '--values', valuesFile, ...templates.flatMap((file) => ['--show-only', `templates/${file}`])],
    { env: { HELM_CACHE_HOME: path.join(work, 'helm-cache'), HELM_CONFIG_HOME: path.join(work, 'helm-config') } },
  );
  return parseAllDocuments(rendered)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null && object !== undefined);
}

/** An Argo CD Application of one upstream Helm chart (`spec.source.chart`), as Argo CD reads it. */
export interface HelmApplication {
  /** The Application's name. */
  readonly application: string;
  readonly repoURL: string;
  readonly chart: string;
  readonly version: string;
  /** Helm's release: `helm.releaseName` (else the Application's name), the destination namespace, `helm.valuesObject`. */
  readonly release: ChartRelease;
}

/** The Helm release an Application of an upstream chart installs; undefined for any other Application. */
export function helmApplication(app: KubeObject): HelmApplication | undefined {
  const sources: any[] = app.spec?.sources ?? (app.spec?.source === undefined ? [] : [app.spec.source]);
  const source = sources.find((s) => typeof s?.chart === 'string');
  if (source === undefined) return undefined;
  return {
    application: app.metadata.name,
    repoURL: source.repoURL,
    chart: source.chart,
    version: source.targetRevision,
    release: { name: source.helm?.releaseName ?? app.metadata.name, namespace: app.spec.destination.namespace, values: source.helm?.valuesObject ?? {} },
  };
}

/**
 * Every object the chart in folder `chart` renders for an Application, as Argo CD's repository
 * server renders it (argo-cd v3.6.1 util/helm/cmd.go `template`: `--name-template`,
 * `--namespace`, `--kube-version`, the values, `--include-crds`; no `--skip-schema-validation`,
 * so the chart's values.schema.json judges the values). A chart that refuses the values fails
 * naming the Application, the chart and Helm's reason.
 */
export function renderApplicationChart(helm: string, chart: string, app: HelmApplication, work: string, kubeVersion: string): KubeObject[] {
  fs.mkdirSync(work, { recursive: true });
  const valuesFile = path.join(work, `${app.application}-values.yaml`);
  fs.writeFileSync(valuesFile, stringify(app.release.values));
  let rendered: string;
  try {
    rendered = run(
      helm,
      ['template', chart, '--name-template', app.release.name, '--namespace', app.release.namespace, '--kube-version', kubeVersion, '--values', valuesFile, '--include-crds'],
      { env: { HELM_CACHE_HOME: path.join(work, 'helm-cache'), HELM_CONFIG_HOME: path.join(work, 'helm-config') } },
    );
  } catch (error) {
    throw new E2eError(`Application ${app.application}: chart ${app.chart} ${app.version} refuses its values: ${(error as Error).message.replace(/^[^\n]*\n/, '')}`);
  }
  return parseAllDocuments(rendered)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null && object !== undefined);
}

