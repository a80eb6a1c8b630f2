import * as path from 'node:path';
import { INFRASTRUCTURE_RELEASES, type InfrastructureRelease, releaseNamespace } from '../src/infrastructure/releases';
import { startCertManager } from './cert-manager';
import { type StartedEnvoyGateway, startEnvoyGateway, StuckGateways } from './envoy-gateway';
import { startFlagger } from './flagger';
import { LiveContainers } from './live-containers';
import { NetworkPolicyJudge } from './network-policy';
import { sleep } from './processes';
import { startPrometheusOperator } from './prometheus-operator';
import { StandInControllers } from './stand-in-controllers';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';
import { STAND_IN_KINDS, type StartedPlane } from './run-plane';
import type { Served } from './run-serve';
import type { Bootstrapped, InstalledArgoCd } from './run-argo-cd';

/** The least time between two passes of the stand-in controllers (a burst of changes is one pass). */
const MIN_PASS_GAP_MS = 200;

/** What runs behind the releases: the real controllers started as Argo CD creates their Deployments, the stand-ins, the live containers. */
export interface StandIns {
  /** The releases whose real controller runs here, with the version it runs. */
  readonly realControllers: ReadonlyMap<InfrastructureRelease, string>;
  readonly controllers: StandInControllers;
  readonly containers: LiveContainers;
}

/**
 * Start the loop of the stand-in controllers, the live containers and the stuck Gateways'
 * watch (each pass also applies the bootstrap's later bindings once their namespace exists);
 * it runs until the run ends.
 */
export function startStandIns(context: RunContext, scope: RunScope, cluster: StartedPlane, served: Served, argoCd: InstalledArgoCd, bootstrapped: Bootstrapped): StandIns {
  const { log, toolchain } = context;
  const { dir, supervisor } = scope;
  const { platform, plane, client } = cluster;
  const { environmentValues } = served;
  const { argocdVersion } = argoCd;
  const { laterAccess } = bootstrapped;
  const { envoyGateway, certManager, flagger, kubePrometheusStack } = INFRASTRUCTURE_RELEASES;
  /** The releases whose real controller runs here, with the version it runs: Argo CD (above), cert-manager, Envoy Gateway, Flagger and prometheus-operator (started once Argo CD creates their release's controller Deployment). */
  const realControllers = new Map<InfrastructureRelease, string>([
    [INFRASTRUCTURE_RELEASES.argoCd, argocdVersion],
    [certManager, toolchain.versions['cert-manager']],
    [envoyGateway, toolchain.versions['envoy-gateway']],
    [flagger, toolchain.versions.flagger],
    [kubePrometheusStack, toolchain.versions['prometheus-operator']],
  ]);
  const releaseValues = { environment: environmentValues, platform };
  let envoyGatewayPlane: StartedEnvoyGateway | undefined;
  const controllers = new StandInControllers(client, {
    [certManager.chart.chart]: (deployment) => startCertManager({ toolchain, supervisor, client, dir, kubeconfig: plane.kubeconfig, egress: scope.egress, deployment, log }),
    [envoyGateway.chart.chart]: async (deployment) => {
      envoyGatewayPlane = await startEnvoyGateway({ toolchain, supervisor, client, dir, kubeconfig: plane.kubeconfig, egress: scope.egress, deployment, log });
    },
    [kubePrometheusStack.chart.chart]: () => startPrometheusOperator({ toolchain, supervisor, dir, kubeconfig: plane.kubeconfig, log }),
    [flagger.chart.chart]: (deployment) => startFlagger({ toolchain, supervisor, dir, kubeconfig: plane.kubeconfig, deployment, log }),
  });
  const liveContainers = new LiveContainers(
    client,
    path.join(dir, 'containers'),
    environmentValues.applications.map((application) => ({ namespace: application.namespace, container: application.name, name: application.name, database: application.database.name })),
    environmentValues.database.namespace,
    environmentValues.broker.namespace,
    log,
    new NetworkPolicyJudge(toolchain.bin('network-policy', 'network-policy-verdict'), client),
  );
  scope.containersStarted(liveContainers);
  const containers = liveContainers;
  const stuckGateways = new StuckGateways(client, releaseNamespace(envoyGateway, releaseValues), log);
  const controllersDone = (async () => {
    while (!scope.stopControllers()) {
      // A change during the pass (its own writes too) starts the next one; none, a second.
      const change = client.changed(1_000, STAND_IN_KINDS);
      try {
        for (const object of [...laterAccess]) {
          if ((await client.get('v1', 'Namespace', object.metadata.namespace!)) === undefined) continue;
          await client.apply(object);
          laterAccess.splice(laterAccess.indexOf(object), 1);
        }
        await controllers.reconcile();
        await containers.reconcile();
        await stuckGateways.poll();
        await envoyGatewayPlane?.certgenAgain();
      } catch (error) {
        log(`stand-in controllers: ${error instanceof Error ? error.message : String(error)}`);
      }
      await Promise.all([change, sleep(MIN_PASS_GAP_MS)]);
    }
  })();
  scope.controllersRunning(controllersDone);
  return { realControllers, controllers, containers };
}
