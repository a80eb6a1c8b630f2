import { parentPort, workerData } from 'node:worker_threads';
import { renderEnvironment } from '../synth';
import { type RenderMessage, reportRenderResult } from './parallel';

/**
 * The render thread's side (src/render/parallel.ts): render the environments of the one
 * message the main thread posts, then report through the shared buffer. `afterRender` runs
 * before the report (the bootstrap saves the bundle's code cache there, when it had none).
 */
export function serveRenderJob(afterRender: () => void): void {
  const { signal } = workerData as { signal: SharedArrayBuffer };
  parentPort!.once('message', ({ jobs, platform }: RenderMessage) => {
    try {
      for (const job of jobs) renderEnvironment(job.environment, job.outdir, platform);
      afterRender();
      reportRenderResult(signal);
    } catch (error) {
      reportRenderResult(signal, error instanceof Error ? error.message : String(error));
    }
  });
}
