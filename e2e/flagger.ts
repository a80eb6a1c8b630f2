import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';
import type { Toolchain } from '../toolchain';
import { freePort } from './loopback';
import type { Supervisor } from './processes';
import type { KubeObject } from './kube-client';

/**
 * Flagger's real controller (fluxcd/flagger, the release the platform installs, built by
 * toolchain/build.sh) on loopback against the e2e API
 * server: it initializes each Canary by its own rules (the `-primary` Deployment copied from
 * the target, the apex, primary and canary Services, the HTTPRoute with its weights through
 * the gatewayapi:v1 router), which kwok runs and Envoy Gateway's real control plane accepts or
 * refuses, and runs the analysis of each new revision, rolling it back when its checks fail.
 *
 * Started with the arguments of the controller Deployment Argo CD created from the real chart
 * (from the same module, rendered with the platform's values, src/infrastructure/releases.ts),
 * changed only where a loopback process differs from its pod: `-kubeconfig` names the run's kubeconfig instead of the in-cluster account, and
 * `-port` (its HTTP server for metrics and probes, 8080 in the pod) is a free loopback port.
 * The metrics server the values name is the cluster's Prometheus Service, which has no
 * address off the cluster network: every metric check fails, as it would with a Prometheus
 * that has no data, and an analysis rolls back.
 */

export interface FlaggerOptions {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  /** The run folder. */
  readonly dir: string;
  readonly kubeconfig: string;
  /** The controller Deployment Argo CD created from the chart. */
  readonly deployment: KubeObject;
  readonly log: (line: string) => void;
}

/**
 * The controller container's arguments in the Deployment the chart rendered: its `command`
 * after the program (`./flagger`, the image's binary; the chart sets no `args`).
 */
export function flaggerArgsOf(deployment: KubeObject): string[] {
  const container = (deployment.spec?.template?.spec?.containers ?? []).find((c: { name: string }) => c.name === 'flagger');
  const command: unknown = container?.command;
  if (!Array.isArray(command) || command[0] !== './flagger' || container.args !== undefined) {
    throw new E2eError(`Deployment ${deployment.metadata.namespace}/${deployment.metadata.name} has no flagger container whose command is ./flagger and its flags`);
  }
  return command.slice(1) as string[];
}

/** The rendered arguments for a loopback process: `-kubeconfig` and `-port` set, none of the chart's dropped. */
export function loopbackFlaggerArgs(args: readonly string[], kubeconfig: string, port: number): string[] {
  const named = (flag: string) => (arg: string) => arg === `-${flag}` || arg.startsWith(`-${flag}=`);
  for (const flag of ['kubeconfig', 'port']) {
    if (args.some(named(flag))) throw new E2eError(`Flagger's chart now renders -${flag}, which the e2e sets for its loopback process: read the chart again`);
  }
  return [...args, `-kubeconfig=${kubeconfig}`, `-port=${port}`];
}

/** Start the controller once its release is installed (its CRDs are then served). */
export async function startFlagger(options: FlaggerOptions): Promise<void> {
  const { toolchain, supervisor, dir, kubeconfig, deployment, log } = options;
  const work = path.join(dir, 'flagger');
  fs.mkdirSync(work, { recursive: true });
  const args = loopbackFlaggerArgs(flaggerArgsOf(deployment), kubeconfig, await freePort());
  supervisor.start({ name: 'flagger', command: toolchain.bin('flagger', 'flagger'), args, cwd: work });
  log(`Flagger ${toolchain.versions.flagger} controller started (the arguments of the Deployment Argo CD created from its chart: ${args.filter((arg) => !arg.startsWith('-kubeconfig=')).join(' ')})`);
}
