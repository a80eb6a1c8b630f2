import { converged } from '../src/cluster/application-state';
import { chartRevision, helmSource } from '../src/cluster/helm-source';
import type { LiveObject } from '../src/cluster/connection';
import { RELEASE_ROWS, isHelmRelease } from '../src/infrastructure/releases';
import { formatTable } from './convergence';
import type { DryRunResult } from './dry-run';
import { isRealChart } from './upstream-charts';
import { observeCluster } from './run-observe';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';
import type { StartedPlane } from './run-plane';
import type { Served } from './run-serve';
import type { InstalledArgoCd } from './run-argo-cd';
import type { StandIns } from './run-stand-ins';
import type { Convergence } from './run-converge';
import type { Operations } from './run-exec';
import type { E2eReport } from './run-types';

/** One line per release: what ran behind it. */
function formatControllers(controllers: E2eReport['controllers']): string {
  const width = Math.max(...controllers.map((c) => c.release.length));
  return ['RELEASE'.padEnd(width) + '  RUNS        ARGO CD SYNCS      VERSION', ...controllers.map((c) => `${c.release.padEnd(width)}  ${c.runs.padEnd(10)}  ${c.served.padEnd(17)}  ${c.version}`)].join('\n');
}

/** What every phase before the report ended with, and the dry-run running beside them. */
export interface Ran {
  readonly cluster: StartedPlane;
  readonly served: Served;
  readonly argoCd: InstalledArgoCd;
  readonly standIns: StandIns;
  readonly convergence: Convergence;
  readonly operations: Operations;
  readonly dryRunning: Promise<DryRunResult[]>;
}

/**
 * Await the dry-run, log the summary (the Applications, the verdict, what ran behind each
 * release, the phases, the published charts, what the cluster holds at the end) and make the report.
 */
export async function collectReport(context: RunContext, scope: RunScope, ran: Ran): Promise<E2eReport> {
  const { options, log, environment, startedAt, phases } = context;
  const { proxy } = scope;
  const { namespace, plane, client } = ran.cluster;
  const { publishing } = ran.served;
  const { argocdVersion } = ran.argoCd;
  const { realControllers, containers } = ran.standIns;
  const { expected, states, allConverged, stopped, settled, operatorFailures } = ran.convergence;
  const { exec, convergedState } = ran.operations;
  const { dryRunning } = ran;
  const observe = (synced: boolean, when: 'at the end') => observeCluster(context, scope, { client, expected, containers }, synced, when);
  if (proxy.refused.size > 0) log(`the loopback proxy refused: ${[...proxy.refused].sort().join(', ')}`);

  const dryRun = await dryRunning;

  const durationSeconds = Math.round((Date.now() - startedAt) / 1000);
  log('');
  log(formatTable(states));
  const notConverged = states.filter((s) => !converged(s));
  const execFailed = options.exec !== undefined && exec?.exitCode !== 0;
  const passed = allConverged && !execFailed && dryRun.every((r) => r.failures.length === 0);
  log('');
  log(
    passed
      ? `e2e ${environment}: every Application Synced and Healthy, every environment accepted by the API server, in ${durationSeconds} s`
      : `e2e ${environment}: FAILED after ${durationSeconds} s: ${[
          ...(stopped === undefined ? [] : [`stopped early, as no wave or retry could mend it: ${stopped}`]),
          ...(settled === undefined ? [] : [`ended early (--settle): ${settled}`]),
          ...(notConverged.length > 0 ? [`not converged: ${notConverged.map((s) => s.name).join(', ')}`] : []),
          ...operatorFailures,
          ...(execFailed && exec !== undefined ? [`--exec exited ${exec.exitCode}`] : []),
          ...dryRun.filter((r) => r.failures.length > 0).map((r) => `${r.environment}: ${r.failures.length} objects refused by the API server`),
        ].join('; ')}`,
  );
  const behindReleases = RELEASE_ROWS.map((release) => {
    const realVersion = realControllers.get(release);
    if (!isHelmRelease(release)) return { release: release.name, chart: `${release.manifests.repoURL.replace(/^https:\/\/github\.com\//, '')} manifests`, version: realVersion ?? release.manifests.version, runs: 'real', served: 'release manifests' } as const;
    const runs = realVersion !== undefined ? 'real' : isRealChart(release.chart.chart) ? 'real chart' : 'stand-in';
    return { release: release.name, chart: release.chart.chart, version: realVersion ?? release.chart.version, runs, served: isRealChart(release.chart.chart) ? 'real chart' : 'stand-in chart' } as const;
  });
  log('');
  log(formatControllers(behindReleases));
  log('');
  log(`phases (seconds from the start): ${phases.map(({ phase, seconds }) => `${phase} ${seconds}`).join(', ')}`);
  const publishedCharts =
    publishing === undefined
      ? undefined
      : await Promise.all(
          publishing.published.map(async (chart) => {
            const app = (await client.get('argoproj.io/v1alpha1', 'Application', chart.application, namespace)) as LiveObject | undefined;
            const source = app === undefined ? undefined : helmSource(app);
            return { application: chart.application, reference: chart.reference, published: chart.version, synced: source === undefined ? '' : chartRevision(app!, source) };
          }),
        );
  if (publishedCharts !== undefined) {
    log('');
    log(`published charts (application, published, synced at the end):${publishedCharts.map((c) => `\n  ${c.application}  ${c.published}  ${c.synced || '-'}  ${c.reference}`).join('')}`);
  }
  const { notifications, certificates, monitoring, migrations, smoke, gatewayProxies } = await observe(allConverged, 'at the end');
  return {
    environment,
    kubernetes: plane.version,
    argocd: argocdVersion,
    applications: states.map(({ name, sync, health, message }) => ({ name, sync, health, message })),
    controllers: behindReleases,
    dryRun,
    ...(exec === undefined ? {} : { exec }),
    ...(stopped === undefined ? {} : { stopped }),
    ...(settled === undefined ? {} : { settled }),
    ...(publishedCharts === undefined ? {} : { publishedCharts }),
    notifications,
    certificates,
    monitoring,
    migrations,
    smoke,
    gatewayProxies,
    ...(convergedState === undefined ? {} : { converged: convergedState }),
    durationSeconds,
    phases,
    passed,
  };
}
