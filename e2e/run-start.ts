import * as fs from 'node:fs';
import * as path from 'node:path';
import { ENVIRONMENT_ORDER } from '../src/environments';
import { E2eError, UsageError } from '../src/base/errors';
import { RENDERED_DIR } from '../src/contract/layout';
import { CLUSTER_COMPONENTS, ensureToolchain, type Toolchain } from '../toolchain';
import { readObjects } from './dry-run';
import { ENVOY_GATEWAY_PORTS } from './envoy-gateway';
import type { KubeObject } from './kube-client';
import { assertFixedPortsFree } from './loopback';
import type { E2eOptions, E2eReport } from './run-types';

/**
 * What every phase of a run reads: its options, its clock and the phases it has ended, and what
 * the checks before anything starts found (the rendered objects, the toolchain). Built once
 * (`startRun`); the phases only append to `phases`, through `phaseEnded`.
 */
export interface RunContext {
  readonly options: E2eOptions;
  readonly log: (line: string) => void;
  readonly environment: string;
  readonly projectRoot: string;
  readonly startedAt: number;
  readonly distDir: string;
  /** The environment's committed objects (dist/<environment>). */
  readonly rendered: readonly KubeObject[];
  readonly toolchain: Toolchain;
  /** How long the Applications may take to converge, and the dry-run beside them. */
  readonly timeoutMs: number;
  /** The report's `phases`, in the order they ended. */
  readonly phases: E2eReport['phases'];
  readonly secondsSinceStart: () => number;
  readonly phaseEnded: (phase: string, since?: number) => void;
}

/**
 * The checks before anything starts: the environment is one of the project's and rendered,
 * the toolchain is built, and no port the run must take is held by another run.
 */
export async function startRun(options: E2eOptions): Promise<RunContext> {
  const log = options.log ?? ((line: string) => console.log(line));
  const startedAt = Date.now();
  const { environment, projectRoot } = options;
  if (!(ENVIRONMENT_ORDER as readonly string[]).includes(environment)) {
    // A usage error: the command prints it with its usage (an E2eError is taken as already printed).
    throw new UsageError(`--env ${JSON.stringify(environment)} must be one of ${ENVIRONMENT_ORDER.join(', ')}`);
  }
  const distDir = path.join(projectRoot, RENDERED_DIR);
  if (!fs.existsSync(path.join(distDir, environment))) throw new E2eError(`${path.join(distDir, environment)} does not exist: run npm run synth and commit dist/`);
  const rendered = readObjects(path.join(distDir, environment)).map((entry) => entry.object);

  const phases: { phase: string; seconds: number; since?: number }[] = [];
  const secondsSinceStart = () => Math.round((Date.now() - startedAt) / 100) / 10;
  const phaseEnded = (phase: string, since?: number) => phases.push({ phase, seconds: secondsSinceStart(), ...(since === undefined ? {} : { since }) });
  const toolchain = ensureToolchain(CLUSTER_COMPONENTS, projectRoot);
  phaseEnded('toolchain checked');
  // Before anything starts: a port another run holds fails now, not once Envoy Gateway's turn comes.
  try {
    await assertFixedPortsFree(ENVOY_GATEWAY_PORTS);
  } catch (error) {
    if (error instanceof E2eError) log(`e2e ${environment}: ${error.message}`);
    throw error;
  }
  const timeoutMs = (options.timeoutSeconds ?? 600) * 1000;
  return { options, log, environment, projectRoot, startedAt, distDir, rendered, toolchain, timeoutMs, phases, secondsSinceStart, phaseEnded };
}
