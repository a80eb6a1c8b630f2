import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';

/**
 * Synth's second thread: on a machine with two or more cores, one thread renders half of the
 * environments while the main thread renders the other half (each environment into its own
 * folder, so the output is the same whatever finishes first). The thread is started before
 * the values files are read, so that it loads its bundle (build/render/worker.js, through
 * scripts/render-worker.cjs with its code cache) while the main thread validates. The main
 * thread then waits for it synchronously (`Atomics.wait` on a shared buffer), which keeps
 * `synthesize` a plain function. Only the built commands use it (src/main.ts); tests and
 * other callers render in their own thread.
 */

/** One environment to render into `outdir`. */
export interface RenderJob {
  readonly environment: Environment;
  readonly outdir: string;
}

/** What the main thread posts to the render thread. */
export interface RenderMessage {
  readonly jobs: readonly RenderJob[];
  readonly platform: Platform;
}

/** The shared buffer: [state, message length] as Int32, then the failure message as UTF-8. */
export const RENDER_STATE = { pending: 0, done: 1, failed: 2 } as const;
const HEADER_BYTES = 8;
const MESSAGE_BYTES = 64 * 1024;

/** The longest the main thread waits for the render thread; rendering takes well under a second. */
const WAIT_MILLISECONDS = 60_000;

/** Mark the render thread's job finished (`message` undefined) or failed, and wake the main thread. */
export function reportRenderResult(signal: SharedArrayBuffer, message?: string): void {
  const state = new Int32Array(signal, 0, 2);
  if (message !== undefined) {
    const bytes = Buffer.from(message, 'utf8').subarray(0, MESSAGE_BYTES);
    new Uint8Array(signal, HEADER_BYTES).set(bytes);
    Atomics.store(state, 1, bytes.length);
  }
  Atomics.store(state, 0, message === undefined ? RENDER_STATE.done : RENDER_STATE.failed);
  Atomics.notify(state, 0);
}

export class RenderThread {
  /**
   * Start the thread, or undefined where it would not help: one core, or no built worker
   * (a caller running the TypeScript sources).
   */
  public static start(root: string): RenderThread | undefined {
    const bootstrap = path.join(root, 'scripts', 'render-worker.cjs');
    if (os.availableParallelism() < 2 || !fs.existsSync(path.join(root, 'build', 'render', 'worker.js'))) return undefined;
    return new RenderThread(bootstrap);
  }

  private readonly signal = new SharedArrayBuffer(HEADER_BYTES + MESSAGE_BYTES);
  private readonly worker: Worker;
  private used = false;

  private constructor(bootstrap: string) {
    this.worker = new Worker(bootstrap, { workerData: { signal: this.signal } });
    // Never keeps the process alive: the main thread waits for it explicitly.
    this.worker.unref();
  }

  /**
   * Post `jobs` to the thread and return the wait for them: a function that blocks until the
   * thread has written them and throws its error if it failed. One batch per thread.
   */
  public render(jobs: readonly RenderJob[], platform: Platform): () => void {
    if (this.used) throw new Error('a render thread takes one batch of environments');
    this.used = true;
    const message: RenderMessage = { jobs, platform };
    this.worker.postMessage(message);
    return () => this.wait();
  }

  private wait(): void {
    const state = new Int32Array(this.signal, 0, 2);
    if (Atomics.wait(state, 0, RENDER_STATE.pending, WAIT_MILLISECONDS) === 'timed-out') {
      throw new Error(`the render thread (scripts/render-worker.cjs) did not finish within ${WAIT_MILLISECONDS / 1000} s`);
    }
    if (Atomics.load(state, 0) === RENDER_STATE.failed) {
      throw new Error(Buffer.from(new Uint8Array(this.signal, HEADER_BYTES, Atomics.load(state, 1))).toString('utf8'));
    }
  }
}
