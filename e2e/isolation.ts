import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';

/**
 * Set (to `1`) in the environment of a command `isolated` runs: `npm run e2e` started inside
 * namespaces of its own (by itself, or by a test's `runE2eOn`) runs there without isolating
 * itself again. Set it yourself to run `npm run e2e` in the caller's namespaces.
 */
export const ISOLATED_VARIABLE = 'PLATFORM_GITOPS_E2E_ISOLATED';

/**
 * A command line that runs `argv` in namespaces of its own: a network namespace with its
 * loopback up, and a PID namespace whose first process `argv` is. When that process ends,
 * however it ends (a SIGKILL included), the kernel kills every process left in the namespace;
 * and `--kill-child` kills it when unshare itself is killed. Its own loopback gives a run ports
 * of its own: Envoy Gateway's control plane listens on fixed ports (`ENVOY_GATEWAY_PORTS`,
 * e2e/envoy-gateway.ts), which two runs on one loopback would both take.
 */
export function isolated(argv: readonly string[]): string[] {
  return ['unshare', '--net', '--pid', '--fork', '--kill-child', '--mount-proc', '--', 'sh', '-c', `ip link set lo up && ${ISOLATED_VARIABLE}=1 && export ${ISOLATED_VARIABLE} && exec "$@"`, 'e2e', ...argv];
}

/**
 * Why this process cannot run a command `isolated`, or undefined when it can: namespaces need
 * root (as the harness does: the git server's account, the private mounts), util-linux's
 * `unshare` and `setpriv`, and iproute2's `ip`; a process already isolated is not again.
 */
export function whyNotIsolated(env: NodeJS.ProcessEnv = process.env, uid: number | undefined = process.getuid?.()): string | undefined {
  if (env[ISOLATED_VARIABLE] !== undefined && env[ISOLATED_VARIABLE] !== '') return `${ISOLATED_VARIABLE} is set`;
  if (uid !== 0) return 'not root';
  for (const tool of ['unshare', 'setpriv', 'ip']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0) return `no ${tool} on PATH`;
  }
  return undefined;
}

/** `isolated(argv)` as a child that dies with its parent (unshare given the parent-death signal SIGKILL). */
export function isolatedChild(argv: readonly string[]): string[] {
  return ['setpriv', '--pdeathsig', 'KILL', '--', ...isolated(argv)];
}

/** The signals passed on to an isolated run: it stops as the harness stops on them. */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Run `argv` isolated, its output this process's, and resolve to its exit code (128 + the
 * signal's number when a signal ended it). Its unshare is the leader of a process group of its
 * own and dies with this process (`setpriv --pdeathsig KILL`: a SIGKILL of this one included),
 * and with it, by `--kill-child`, everything in the namespace. SIGINT, SIGTERM and SIGHUP here
 * are passed to that group, where the run stops itself cleanly (unshare ignores them); a
 * second one kills the group.
 */
export function runIsolated(argv: readonly string[], cwd: string, started: (pid: number) => void = () => {}): Promise<number> {
  const [command, ...args] = isolatedChild(argv);
  const child = spawn(command!, args, { cwd, stdio: 'inherit', detached: true });
  if (child.pid !== undefined) started(child.pid);
  let signalled = false;
  const forward = (signal: NodeJS.Signals): void => {
    try {
      // A second signal ends the run at once: unshare killed, and by it the namespace.
      if (child.pid !== undefined) process.kill(-child.pid, signalled ? 'SIGKILL' : signal);
    } catch {
      // already gone
    }
    signalled = true;
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  return new Promise<number>((resolve, reject) => {
    child.on('error', (error) => reject(new Error(`setpriv could not start: ${error.message}`)));
    child.on('close', (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward);
      resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
    });
  });
}

