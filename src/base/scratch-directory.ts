import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The signals that end a command run from a terminal or by a supervisor. */
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Run `work` with a new private folder of the system's temporary directory (`prefix` then
 * random), removed when it returns or throws, and when the process is interrupted or
 * terminated meanwhile: while the folder exists a listener holds those signals (Node otherwise
 * ends at once, skipping `finally`), removes the folder, and ends the process with the signal
 * as it would have. A signal that arrives while `work` runs synchronously is handled when it
 * returns (a child process of the same terminal gets the interrupt itself).
 */
export function withScratchDirectory<T>(prefix: string, work: (folder: string) => T): T {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const remove = () => fs.rmSync(folder, { recursive: true, force: true });
  const listeners = ENDING_SIGNALS.map((signal) => {
    const listener = () => {
      remove();
      for (const [other, each] of listeners) process.removeListener(other, each);
      // With no listener left the signal's default action ends the process, as without this one.
      process.kill(process.pid, signal);
    };
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  try {
    return work(folder);
  } finally {
    remove();
    // A signal received while `work` ran is delivered before this turn of the event loop ends: its listener must still be there.
    setImmediate(() => {
      for (const [signal, listener] of listeners) process.removeListener(signal, listener);
    });
  }
}
