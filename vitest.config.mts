import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that bound their tier's wall time, in the order they start: npm run test:e2e runs
 * two files at once and test:integration one per worker, and a long file started last ends last alone.
 * The e2e files measured two at a time in a warm fresh clone's npm test (2026-11-29): converge
 * 799 s (one convergence, then the live operations on it), published-charts 421 s,
 * broken-controllers 402 s, broken-sources 274 s (its three runs one after the other then; side
 * by side since, 132 s) and broken-admission 244 s (two runs then; one since its two refusals
 * share a run, 133 s). The order is not by length alone: in this one the lanes hold converge
 * then broken-admission, and broken-controllers, broken-sources then published-charts (vitest
 * gives each next file to the worker that frees first), then the short files. Started second,
 * published-charts ran beside converge and the README flows, and all three took a fifth longer
 * or more (converge 971 s, published-charts 586 s, readme-flows 938 s; the whole run 2,249 CPU-s
 * against 2,057 in this order before the two changes above). readme-flows
 * (the unit suite five times, one worker) is listed so that it starts first: unlisted, it
 * started about 30 s into the integration tier, after files ten times as short. Files not
 * listed keep vitest's order (longest recorded run first, else largest file), after these.
 */
const LONGEST_FIRST = [
  'e2e/converge',
  'e2e/broken-controllers',
  'e2e/broken-sources',
  'e2e/published-charts',
  'e2e/broken-admission',
  'integration/readme-flows',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((name) => file.moduleId.endsWith(`/test/${name}.test.ts`));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Test files share one module graph per worker: every file would otherwise re-import
    // cdk8s-plus and the generated CRD classes. No test changes process.cwd, process.env or
    // module state another file reads (test/support.ts runs commands with an explicit root;
    // its parses of the committed dist/ and values files are kept per worker, checked against
    // each file's text, and every caller gets its own copy).
    // The e2e suite (`npm run test:e2e`) keeps forked, isolated workers, one at a time as
    // before: its harness owns child processes, signal handlers and a cluster each.
    pool: 'threads',
    isolate: false,
    // Half again as many workers as cores (vitest's default leaves one idle): much of a
    // test's time is a child process, file I/O or a fake API server's timers, not this
    // process's CPU (the ops pause tests alone wait 22 s), and a waiting worker left a core
    // idle. npm run test:unit here (2026-11-28): 35 s wall with 2 workers, 28 s with 3 and
    // with 4. The e2e sets its own (--maxWorkers=2).
    maxWorkers: Math.ceil(availableParallelism() * 1.5),
    // Transformed TypeScript is kept between runs (vitest 5's default `fsModuleCache`, keyed by
    // each file's content and the config; gone with a reinstall): about 2 s less per run of
    // test:unit here.
    sequence: { sequencer: LongestFirst },
    // Rendering four environments takes a moment on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    resolveSnapshotPath: (testPath, extension) =>
      testPath.replace(/\/test\/(.*)\.test\.ts$/, `/test/snapshots/$1.test.ts${extension}`),
  },
});
