/** What one look at the cluster found while waiting. */
export interface WaitState {
  /** The awaited state holds. */
  readonly done: boolean;
  /** The state as one line, printed when it changes (`2/3 pods ready`). */
  readonly state: string;
  /**
   * Why waiting longer cannot help (a sync that ended Failed): the wait stops at once.
   * @default - keep waiting
   */
  readonly failed?: string;
}

/** A bounded wait, as every live operation waits. */
export interface WaitOptions {
  /** What is awaited, for the progress lines and the failure (`rollout of Deployment webapp/webapp`). */
  readonly what: string;
  /** The bound: a constant of the contract (WAITS_SECONDS), or a shorter one given on the command line. */
  readonly timeoutSeconds: number;
  /** One look at the cluster. */
  readonly check: () => Promise<WaitState>;
  /** Where progress goes: one line whenever the state changes, and every `heartbeatSeconds` while it does not. */
  readonly progress: (line: string) => void;
  /**
   * Seconds between two looks.
   * @default 2
   */
  readonly intervalSeconds?: number;
  /**
   * Seconds without a change after which the state is printed again.
   * @default 30
   */
  readonly heartbeatSeconds?: number;
}

/** How a wait ended. */
export interface WaitResult {
  readonly ok: boolean;
  /** The last state seen. */
  readonly state: string;
  /** Why it did not hold: the failure, or the timeout with the last state. */
  readonly reason?: string;
  readonly seconds: number;
}

/**
 * Look until the state holds, fails for good, or the bound passes; print the state as it
 * changes (`[12 s] rollout of Deployment webapp/webapp: 1/2 updated`). Never throws for
 * a state that does not hold: the caller decides what a timeout means.
 */
export async function waitFor(options: WaitOptions): Promise<WaitResult> {
  const started = Date.now();
  const interval = (options.intervalSeconds ?? 2) * 1000;
  const heartbeat = (options.heartbeatSeconds ?? 30) * 1000;
  const elapsed = () => Math.round((Date.now() - started) / 1000);
  let last = '';
  let printedAt = 0;
  for (;;) {
    const look = await options.check();
    if (look.state !== last || Date.now() - printedAt >= heartbeat) {
      options.progress(`[${elapsed()} s] ${options.what}: ${look.state}`);
      last = look.state;
      printedAt = Date.now();
    }
    if (look.done) return { ok: true, state: look.state, seconds: elapsed() };
    if (look.failed !== undefined) return { ok: false, state: look.state, reason: look.failed, seconds: elapsed() };
    if (Date.now() - started + interval > options.timeoutSeconds * 1000) {
      return { ok: false, state: look.state, reason: `not done within ${options.timeoutSeconds} s (${look.state})`, seconds: elapsed() };
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
