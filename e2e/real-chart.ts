import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { Component, Toolchain } from '../toolchain';
import type { KubeObject } from './kube-client';
import { run } from './processes';

/** A release of an upstream chart: its name and namespace, and the values the platform gives it. */
export interface ChartRelease {
  readonly name: string;
  readonly namespace: string;
  readonly values: Record<string, unknown>;
}

/**
 * What the real chart a toolchain component keeps (`charts/<chart>`, from the upstream's module
 * at the pinned release) renders for a release, `helm template` with the platform's values,
 * limited to the given templates: how the harness starts a real controller with the arguments
 * and configuration the platform's values give it. Helm's cache and configuration stay in `work`.
 */
export function renderRealChart(toolchain: Toolchain, component: Component, chart: string, release: ChartRelease, work: string, templates: readonly string[]): KubeObject[] {
  return helmTemplate(toolchain.bin('helm', 'helm'), toolchain.chart(component, chart), release, work, templates);
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
