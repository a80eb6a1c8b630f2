import { locateToolchain } from '../../toolchain';
import { loadEnvironments } from '../../src/environments';
import { INFRASTRUCTURE_RELEASES } from '../../src/infrastructure/releases';
import { CANARY } from '../../src/contract/contract';
import { ROOT } from '../support';
import { afterEach, describe, expect, it } from 'vitest';
import { brokenCopy, removeCopies, RUN_TIMEOUT_MS, runScenarios, type ScenarioStep } from './cases';
import { followPublishedCharts, makeCanary, quickenCanaryAnalysis } from './e2e-copy';

afterEach(removeCopies);

describe('e2e: the published charts from a real OCI registry, and a canary on Flagger', () => {
  // The release artifact (issue 26): local following its published charts from a real OCI
  // registry (distribution), which the run publishes to as CI does, with webapp a canary.
  // 1.4 on Flagger's real controller (e2e/flagger.ts): the canary initialized by Flagger itself
  // and its HTTPRoute accepted by Envoy Gateway's; a release (published) that Flagger analyses
  // and, with no metrics to read, rolls back at the contract's threshold. Then a second release,
  // which Argo CD follows to its chart, and the package rollback.
  it(
    'converges local from its published charts with webapp a canary that Flagger initializes and rolls back, moves an application to its next release\'s chart, and rolls the package back',
    async () => {
      const copy = brokenCopy();
      // Flagger checks once per analysis interval, so the rollback at the threshold takes
      // several: 10 s here, the shortest Flagger runs (v1.44.0 pkg/apis/flagger/v1beta1
      // canary.go GetAnalysisInterval), instead of the contract's 30 s (a deviation of the
      // e2e, docs/e2e.md). The threshold, the weights and the metrics are the contract's.
      quickenCanaryAnalysis(copy, '10s');
      makeCanary(copy, 'local', 'webapp');
      followPublishedCharts(copy, 'local', 'oci://ghcr.io/example/platform-gitops-charts');
      type Versions = Record<string, { version: string; appVersion: string }>;
      type Canary = { tag: string; next: string; events: string[]; rolledBack: { phase: string } | null; steps: ScenarioStep[] };
      type Registry = { before: Versions; after: Versions; steps: ScenarioStep[] };
      const { status, report, output, results } = await runScenarios<{ 'canary-scenario.mjs': Canary; 'registry-scenario.mjs': Registry }>(copy, {
        'canary-scenario.mjs': 'CANARY_SCENARIO_RESULTS',
        'registry-scenario.mjs': 'REGISTRY_SCENARIO_RESULTS',
      });
      const canary = results['canary-scenario.mjs'];
      const { before, after, steps } = results['registry-scenario.mjs'];
      const { flagger } = INFRASTRUCTURE_RELEASES;
      expect(report.controllers.find((c) => c.release === flagger.name)).toEqual({ release: flagger.name, chart: flagger.chart.chart, version: locateToolchain(ROOT).versions.flagger, runs: 'real', served: 'real chart' });
      // fluxcd/flagger pkg/controller/scheduler.go (the platform's release): the analysis, then the rollback at the threshold.
      const events = canary.events.join('\n');
      expect(events).toContain('New revision detected! Scaling up webapp.webapp');
      expect(events).toContain(`Rolling back webapp.webapp failed checks threshold reached ${CANARY.analysis.threshold}`);
      expect(events).toContain('Canary failed! Scaling down webapp.webapp');
      expect(canary.rolledBack).toMatchObject({ phase: 'Failed' });
      // Every Application converged, the applications' from the registry at the versions published.
      expect(report.applications.filter((a) => a.sync !== 'Synced' || a.health !== 'Healthy'), output.slice(-4000)).toEqual([]);
      const applications = loadEnvironments().find((env) => env.name === 'local')!.applications.map((application) => application.name);
      expect(report.publishedCharts?.map((chart) => chart.application).sort()).toEqual([...applications].sort());
      for (const chart of report.publishedCharts!) {
        expect(chart.reference).toBe(`oci://ghcr.io/example/platform-gitops-charts/local/${chart.application}`);
        // webapp's canary release was published after the run's own publishing; the others never moved.
        if (chart.application !== 'webapp') expect(chart.published).toBe(before[chart.application]!.version);
        // The released application was rolled back to the version before its second release.
        expect(chart.synced, chart.application).toBe(before[chart.application]!.version);
      }
      expect(before['webapp']!.appVersion).toBe(canary.next);
      // The release of billing bumped the chart's patch (the values changed), and Argo CD followed it before the rollback.
      const released = steps.find((step) => step.name.startsWith('Argo CD moves'))!;
      expect(released.name).toBe(`Argo CD moves billing to ${after['billing']!.version}`);
      expect(steps.find((step) => step.name.startsWith('rollback'))!.output).toContain(`back on chart version ${before['billing']!.version} (from ${after['billing']!.version})`);
      // 1.6 names where the deployment came from: the chart in the registry, at its version (each
      // application's first deployment; webapp's canary release never became Healthy).
      for (const chart of report.publishedCharts!) {
        expect(report.notifications, output.slice(-3000)).toContainEqual(`${chart.application} (ghcr.io/example/platform-gitops-charts/local/${chart.application}): deployed, sync succeeded at revision ${chart.published}`);
      }
      expect(report.passed).toBe(true);
      expect(status).toBe(0);
    },
    RUN_TIMEOUT_MS,
  );
});
