import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { childEnvironment } from './processes';

/** What `--exec` ran against the converged cluster, for the report. */
export interface ExecResult {
  readonly command: string;
  /** The exit code; null when it was stopped (the timeout, a signal). */
  readonly exitCode: number | null;
  readonly seconds: number;
}

/**
 * Run `command` with bash in `cwd` against the converged cluster (`env`: KUBECONFIG, an
 * operator's kubeconfig, E2E_ADMIN_KUBECONFIG, the administrator's, E2E_CONTAINERS, the
 * folders of the pods' loopback containers, E2E_STAND_IN_UPGRADE, the stand-in upgrade of
 * e2e/stand-in-charts.ts as JSON, E2E_SOURCE and E2E_GIT_REPOSITORY, the checkout served and
 * the bare repository serving it on E2E_GIT_BRANCH, and for an environment that follows its
 * published charts E2E_CHART_REGISTRY and E2E_CHART_REGISTRY_CA, the registry as publishing
 * reaches it and its CA), streaming every line it prints; stopped (its process group) after
 * `timeoutSeconds`. Asynchronous, so the harness's controllers keep reconciling meanwhile.
 * The folder of the harness's own Node comes first on the command's PATH: a `node` there runs
 * on the project's pinned Node (package.json), whatever PATH the run was started with.
 */
export function execAgainstCluster(options: { command: string; cwd: string; env: Readonly<Record<string, string>>; timeoutSeconds: number; log: (line: string) => void }): Promise<ExecResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', options.command], {
      cwd: options.cwd,
      env: withOwnNode(childEnvironment(options.env)),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stop = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    let kill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      options.log(`exec: still running after ${options.timeoutSeconds} s: stopped`);
      stop('SIGTERM');
      kill = setTimeout(() => stop('SIGKILL'), 10_000);
    }, options.timeoutSeconds * 1000);
    for (const stream of [child.stdout, child.stderr]) readline.createInterface({ input: stream }).on('line', (line) => options.log(`exec | ${line}`));
    child.on('error', (error) => options.log(`exec: bash could not start: ${error.message}`));
    child.on('close', (code) => {
      clearTimeout(timer);
      clearTimeout(kill);
      resolve({ command: options.command, exitCode: code, seconds: Math.round((Date.now() - started) / 1000) });
    });
  });
}

/** `env` with the folder of this process's Node first on PATH. */
function withOwnNode(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, PATH: [path.dirname(process.execPath), env['PATH']].filter((part) => part !== undefined && part !== '').join(path.delimiter) };
}
