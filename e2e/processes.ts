import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';

/** One long-running process of the e2e cluster. */
export interface ProcessSpec {
  /** Short name, used for the log file and in messages (`kube-apiserver`). */
  readonly name: string;
  /** Executable path. */
  readonly command: string;
  readonly args: readonly string[];
  /**
   * Extra environment variables; the harness's own environment is passed on without
   * proxy variables, so nothing leaves loopback by accident.
   * @default {}
   */
  readonly env?: Readonly<Record<string, string>>;
  /** @default the run folder */
  readonly cwd?: string;
  /**
   * Its scheduling priority (`nice`, 0 to 19): work that may wait runs on the cores the
   * rest leaves idle.
   * @default 0
   */
  readonly niceness?: number;
}

const PROXY_VARIABLES = ['http_proxy', 'https_proxy', 'all_proxy', 'no_proxy'];

/**
 * Go's garbage-collection target (`GOGC`, 100 by default) for the programs the harness starts:
 * the API server, etcd, Argo CD and the controllers. A run is bound by CPU on two cores, and at
 * the default about a third of the API server's CPU went to the collector (docs/performance.md).
 * At 400 each heap grows to five times its live data before a collection: warm local runs took
 * 13-21 % less CPU (the API server 22 % less, Argo CD's controller 27 %), and peaked at about
 * 7 GiB instead of 3 GiB; npm run test:e2e runs two at once on a 24 GiB machine. It paces the
 * collector and changes nothing the programs decide.
 */
export const E2E_GOGC = '400';

/** The environment a child process starts with: ours minus proxies, plus `extra`; `E2E_GOGC` unless ours sets GOGC. */
export function childEnvironment(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { GOGC: E2E_GOGC };
  for (const [key, value] of Object.entries(process.env)) {
    if (!PROXY_VARIABLES.includes(key.toLowerCase())) env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Starts the cluster's processes, each in its own process group with its output in
 * `<logs>/<name>.log`, and stops every one of them (group and children) on `stopAll`,
 * on exit and on SIGINT/SIGTERM: a run never leaves a process behind.
 */
export class Supervisor {
  private readonly children: { spec: ProcessSpec; child: ChildProcess; exited: boolean; code: number | null }[] = [];
  private stopping = false;
  private readonly onExit = (): void => this.killAll('SIGKILL');

  constructor(
    /** Folder for the processes' logs. */
    public readonly logDir: string,
    /** Default working folder. */
    private readonly cwd: string,
  ) {
    fs.mkdirSync(logDir, { recursive: true });
    process.on('exit', this.onExit);
  }

  /** Start a process; a process that exits before `stopAll` is reported by `assertRunning`. */
  start(spec: ProcessSpec): ChildProcess {
    // A process started once the stop began would outlive the run: the dry-run's API server
    // starts beside the run, and may come to start after a failure began the stop.
    if (this.stopping) throw new E2eError(`${spec.name} not started: the run is stopping`);
    const log = fs.openSync(this.logPath(spec.name), 'a');
    // Through nice(1), so every thread of the process starts at that priority (a priority set
    // after the start misses the threads a Go runtime has already made).
    const [command, args] = spec.niceness === undefined ? [spec.command, spec.args] : ['nice', ['-n', String(spec.niceness), spec.command, ...spec.args]];
    const child = spawn(command, [...args], {
      cwd: spec.cwd ?? this.cwd,
      env: childEnvironment(spec.env),
      stdio: ['ignore', log, log],
      detached: true,
    });
    fs.closeSync(log);
    const entry = { spec, child, exited: false, code: null as number | null };
    child.on('exit', (code) => {
      entry.exited = true;
      entry.code = code;
    });
    child.on('error', () => {
      entry.exited = true;
    });
    this.children.push(entry);
    return child;
  }

  logPath(name: string): string {
    return path.join(this.logDir, `${name}.log`);
  }

  /** The last lines of a process's log, for error messages. */
  tail(name: string, lines = 15): string {
    try {
      return fs.readFileSync(this.logPath(name), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Throws naming the first process that exited while it should be running. */
  assertRunning(): void {
    if (this.stopping) return;
    const dead = this.children.find((c) => c.exited);
    if (dead) {
      throw new E2eError(
        `${dead.spec.name} exited (code ${dead.code}) while the cluster was running; last lines of ${this.logPath(dead.spec.name)}:\n${this.tail(dead.spec.name)}`,
      );
    }
  }

  /** Stop every process: SIGTERM to each group, then SIGKILL after `graceMs`. */
  async stopAll(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    this.killAll('SIGTERM');
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && this.children.some((c) => !c.exited)) {
      await sleep(100);
    }
    this.killAll('SIGKILL');
    process.off('exit', this.onExit);
  }

  private killAll(signal: NodeJS.Signals): void {
    for (const { child, exited } of [...this.children].reverse()) {
      if (exited || child.pid === undefined) continue;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Poll `probe` until it returns a value other than undefined, at most `timeoutMs`;
 * `check` runs between attempts (e.g. that the processes are still alive).
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined> | T | undefined,
  check: () => void = () => {},
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    check();
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new E2eError(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${reason}`);
    }
    await sleep(intervalMs);
  }
}

/** Run a short command to completion; throws with its output when it fails. */
export function run(command: string, args: readonly string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): string {
  const result = spawnSync(command, [...args], {
    cwd: options.cwd,
    env: childEnvironment(options.env),
    input: options.input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw new E2eError(`${command} could not start: ${result.error.message}`);
  if (result.status !== 0) {
    throw new E2eError(`${path.basename(command)} ${args.join(' ')} failed (exit ${result.status}):\n${(result.stderr || result.stdout).trim()}`);
  }
  return result.stdout;
}
