import * as path from 'node:path';
import { writeKubeconfig } from './control-plane';
import { type ExecResult, execAgainstCluster } from './exec';
import { standInUpgrade } from './stand-in-charts';
import { observeCluster } from './run-observe';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';
import type { StartedPlane } from './run-plane';
import type { Served } from './run-serve';
import { OPERATORS_GROUP } from './run-argo-cd';
import type { StandIns } from './run-stand-ins';
import type { Convergence } from './run-converge';
import type { ObservedState } from './run-types';

/** The `--exec` command's run: absent when none was given or the Applications did not converge. */
export interface Operations {
  readonly exec: ExecResult | undefined;
  /** What the cluster held once every Application had converged, before the command changed anything. */
  readonly convergedState: ObservedState | undefined;
}

/**
 * Once every Application converged, run the `--exec` command as a member of the operators'
 * group (the bootstrap's roles of `npm run ops` alone), after observing the converged cluster.
 */
export async function runExec(context: RunContext, scope: RunScope, cluster: StartedPlane, served: Served, standIns: StandIns, convergence: Convergence): Promise<Operations> {
  const { options, log, projectRoot, phaseEnded } = context;
  const { dir } = scope;
  const { platform, namespace, pki, plane, client } = cluster;
  const { source, git, publishing } = served;
  const { containers } = standIns;
  const { expected, allConverged } = convergence;
  const observe = (synced: boolean, when: 'at convergence, before --exec') => observeCluster(context, scope, { client, expected, containers }, synced, when);
  let exec: ExecResult | undefined;
  let convergedState: ObservedState | undefined;
  if (allConverged && options.exec !== undefined) {
    convergedState = await observe(true, 'at convergence, before --exec');
    log(`exec (as a member of ${OPERATORS_GROUP}): ${options.exec}`);
    // The command runs as an operator with the bootstrap's roles of `npm run ops` alone; what
    // a test does behind Argo CD's back goes through the administrator's kubeconfig.
    const operator = pki.leaf('operator', plane.pki.ca, `/O=${OPERATORS_GROUP}/CN=e2e-operator`, 'client');
    const operatorKubeconfig = path.join(dir, 'kubeconfig-operator');
    writeKubeconfig(operatorKubeconfig, plane.server, plane.pki, namespace, operator);
    exec = await execAgainstCluster({
      command: options.exec,
      cwd: projectRoot,
      env: {
        KUBECONFIG: operatorKubeconfig,
        E2E_ADMIN_KUBECONFIG: plane.kubeconfig,
        E2E_CONTAINERS: containers.root,
        E2E_STAND_IN_UPGRADE: JSON.stringify({ ...standInUpgrade(), applicationNamespace: namespace }),
        // The checkout served and the bare repository the git server serves (a push there is
        // what Argo CD syncs next), and the chart registry as publishing reaches it.
        E2E_SOURCE: source,
        E2E_GIT_REPOSITORY: git.bareRepository,
        E2E_GIT_BRANCH: platform.repository.targetRevision,
        ...(publishing === undefined ? {} : { E2E_CHART_REGISTRY: publishing.loopback, E2E_CHART_REGISTRY_CA: plane.pki.ca.cert }),
      },
      timeoutSeconds: options.execTimeoutSeconds ?? 1800,
      log,
    });
    log(`exec: exit ${exec.exitCode} after ${exec.seconds} s`);
    phaseEnded('exec');
  }
  return { exec, convergedState };
}
