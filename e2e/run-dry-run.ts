import * as path from 'node:path';
import { ENVIRONMENT_ORDER } from '../src/environments';
import { E2eError } from '../src/base/errors';
import { startApiServer } from './control-plane';
import { type DryRunResult, dryRunEnvironment, installCrds, readCrds } from './dry-run';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';
import type { StartedPlane } from './run-plane';

/**
 * Start the server-side dry-run of every environment, beside the convergence; the promise
 * ends with its results (each environment failed with why when its own cluster failed).
 */
export function startDryRun(context: RunContext, scope: RunScope, cluster: StartedPlane): Promise<DryRunResult[]> {
  const { options, log, projectRoot, startedAt, distDir, toolchain, timeoutMs, secondsSinceStart, phaseEnded } = context;
  const { dir, supervisor } = scope;
  const { plane } = cluster;
  // The server-side dry-run of every environment, beside the convergence: an empty cluster
  // of its own (the converged environment's objects would turn the dry-run of another
  // environment into updates of immutable fields), its API server at the lowest priority,
  // so it takes the cores the waves leave idle and delays none of them. Awaited for the report.
  const dryRunning = (async (): Promise<DryRunResult[]> => {
    if (!(options.dryRun ?? true)) return [];
    const since = secondsSinceStart();
    // Each wait within what is left of the run's bound (a minute at least); none after the run ended.
    const remainingMs = () => Math.max(startedAt + timeoutMs - Date.now(), 60_000);
    const stillRunning = () => {
      if (scope.ending()) throw new E2eError('the run ended before the dry-run did');
    };
    try {
      const empty = await startApiServer({
        toolchain,
        supervisor,
        dir,
        pki: plane.pki,
        etcd: plane.etcd,
        name: 'kube-apiserver-dry-run',
        etcdPrefix: '/dry-run',
        niceness: 19,
        // At the lowest priority it starts when the waves leave it a core.
        readyTimeoutMs: remainingMs(),
        check: stillRunning,
      });
      await installCrds(empty.client, readCrds(path.join(projectRoot, 'schemas', 'crds')), remainingMs(), log, stillRunning);
      const results: DryRunResult[] = [];
      for (const env of ENVIRONMENT_ORDER) {
        stillRunning();
        const result = await dryRunEnvironment(empty.client, env, distDir);
        results.push(result);
        log(`server-side dry-run ${env}: ${result.objects} objects and ${result.pods} Pods from their templates, ${result.failures.length} refused`);
        for (const failure of result.failures) log(`  ${env}: ${failure}`);
      }
      phaseEnded('dry-run', since);
      return results;
    } catch (error) {
      if (scope.ending()) throw error;
      // The dry-run's own cluster failed (not an object refused): every environment fails with why.
      const why = `not dry-run: ${error instanceof Error ? error.message : String(error)}`;
      log(`server-side dry-run: ${why}`);
      phaseEnded('dry-run', since);
      return ENVIRONMENT_ORDER.map((environment) => ({ environment, objects: 0, pods: 0, failures: [why] }));
    }
  })();
  // A run that ends by an error before awaiting it reports that error, not this one; its
  // cleanup waits for it to stop.
  scope.dryRunRunning(dryRunning.catch(() => undefined));
  return dryRunning;
}
