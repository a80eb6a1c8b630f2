import type { ApplicationState } from '../src/cluster/application-state';
import { syncAsOperator } from './argocd';
import { watchConvergence } from './convergence';
import type { KubeObject } from './kube-client';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';
import type { StartedPlane } from './run-plane';
import type { InstalledArgoCd } from './run-argo-cd';
import type { StandIns } from './run-stand-ins';

/** Applications the environment renders (name to sync wave), besides the root. */
function expectedApplications(objects: readonly KubeObject[], rootName: string): Map<string, number> {
  const expected = new Map<string, number>([[rootName, 0]]);
  for (const object of objects) {
    if (object.kind === 'Application') {
      expected.set(object.metadata.name, Number(object.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0));
    }
  }
  return expected;
}

/** How the convergence ended. */
export interface Convergence {
  /** The Applications the environment renders (name to sync wave), the root included. */
  readonly expected: ReadonlyMap<string, number>;
  readonly states: readonly ApplicationState[];
  /** Every Application converged, and the operator's syncs succeeded. */
  readonly allConverged: boolean;
  readonly stopped: string | undefined;
  readonly settled: string | undefined;
  /** The operator's syncs that did not succeed. */
  readonly operatorFailures: readonly string[];
}

/**
 * Watch every Application converge by itself but what only an operator syncs (Argo CD's own
 * release); then be that operator: sync each such Application, and watch every Application
 * end Synced and Healthy.
 */
export async function converge(context: RunContext, scope: RunScope, cluster: StartedPlane, argoCd: InstalledArgoCd, standIns: StandIns): Promise<Convergence> {
  const { options, log, rendered, startedAt, timeoutMs, phaseEnded } = context;
  const { supervisor } = scope;
  const { namespace, client } = cluster;
  const { manifests } = argoCd;
  const { controllers } = standIns;
  const expected = expectedApplications(rendered, manifests.rootApplication.metadata.name);
  const watch = (beforeOperatorSync: boolean, remainingMs: number, onConverged?: (state: ApplicationState) => void) =>
    watchConvergence({
      client,
      namespace,
      expected,
      timeoutMs: remainingMs,
      log,
      between: async () => {
        supervisor.assertRunning();
        controllers.assertStarted();
        controllers.assertNoRefusal();
      },
      waitingPods: () => controllers.waitingPods,
      startedAt,
      beforeOperatorSync,
      ...(onConverged === undefined ? {} : { onConverged }),
      ...(options.settleSeconds === undefined ? {} : { settleSeconds: options.settleSeconds }),
    });
  // Everything converges by itself but what only an operator syncs (Argo CD's own release);
  // then the harness is that operator: it syncs each such Application, and every
  // Application must end Synced and Healthy.
  const first = await watch(true, timeoutMs, (state) => phaseEnded(`${state.name} (wave ${state.wave}) ${state.operatorSynced === true ? 'Healthy' : 'Synced and Healthy'}`));
  let { states, converged: allConverged } = first;
  let stopped = first.stopped;
  let settled = first.settled;
  const operatorSynced = states.filter((state) => state.operatorSynced === true).map((state) => state.name);
  const operatorFailures: string[] = [];
  if (allConverged && operatorSynced.length > 0) {
    // Synced or not (the bootstrap's release may already match git), the operator's sync must run and succeed.
    for (const name of operatorSynced) {
      log(`operator: argocd app sync ${name} (the change to it reviewed)`);
      const result = await syncAsOperator(client, namespace, name, Math.max(startedAt + timeoutMs - Date.now(), 60_000));
      log(`operator: sync of ${name} ${result.phase}${result.message ? `: ${result.message}` : ''}`);
      if (result.phase !== 'Succeeded') {
        allConverged = false;
        operatorFailures.push(`the operator's sync of ${name} ${result.phase}`);
      }
    }
    if (allConverged) ({ states, converged: allConverged, stopped, settled } = await watch(false, Math.max(startedAt + timeoutMs - Date.now(), 60_000)));
    phaseEnded("operator's sync");
  }
  return { expected, states, allConverged, stopped, settled, operatorFailures };
}
