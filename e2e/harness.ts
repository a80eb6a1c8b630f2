import { E2eError } from '../src/base/errors';
import { startRun } from './run-start';
import { openRun } from './run-scope';
import { startPlane } from './run-plane';
import { serveSources } from './run-serve';
import { bootstrapEnvironment, installArgoCd } from './run-argo-cd';
import { startDryRun } from './run-dry-run';
import { startStandIns } from './run-stand-ins';
import { converge } from './run-converge';
import { runExec } from './run-exec';
import { collectReport } from './run-report';
import type { E2eOptions, E2eReport } from './run-types';

export type { E2eOptions, E2eReport, ObservedState } from './run-types';

/**
 * Bring up a control plane and Argo CD on loopback, bootstrap `environment` the way
 * the Pulumi program does, and watch every Application converge; then server-side
 * dry-run every environment. Everything started is stopped and the run folder removed
 * (unless `keep`), also on failure.
 *
 * The run is its phases, in order (each in e2e/run-<phase>.ts): the checks before anything
 * starts, the run's folder and its end (every exit path: return, error, stop signal), the
 * control plane, the servers Argo CD reads, Argo CD, the bootstrap, the dry-run beside the
 * rest, the stand-in controllers, the convergence and the operator's sync, the `--exec`
 * command, and the report.
 */
export async function runE2e(options: E2eOptions): Promise<E2eReport> {
  const context = await startRun(options);
  const { log, environment } = context;
  const scope = openRun(context);
  try {
    const cluster = await startPlane(context, scope);
    const served = await serveSources(context, scope, cluster);
    const argoCd = await installArgoCd(context, scope, cluster, served);
    const bootstrapped = await bootstrapEnvironment(context, cluster, served, argoCd);
    const dryRunning = startDryRun(context, scope, cluster);
    const standIns = startStandIns(context, scope, cluster, served, argoCd, bootstrapped);
    const convergence = await converge(context, scope, cluster, argoCd, standIns);
    const operations = await runExec(context, scope, cluster, served, standIns, convergence);
    // Awaited here, inside the try: a failure of the report is the run's, and the cleanup follows it.
    return await collectReport(context, scope, { cluster, served, argoCd, standIns, convergence, operations, dryRunning });
  } catch (error) {
    if (error instanceof E2eError) log(`e2e ${environment}: ${error.message}`);
    if (!options.keep) log('(run with --keep to keep the logs and certificates of the run)');
    throw error;
  } finally {
    await scope.end();
  }
}
