import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The e2e's whole-cluster files, longest first: npm run test:e2e runs two files at once, and
 * the longest started last would end last alone. Measured here two at a time in a fresh
 * clone's npm test (2026-11-28): live-operations 601 s, broken-sources 384, broken-admission
 * 371, published-charts 346 and converge 221; broken-controllers took 770 s then, and about
 * half of that alone once its two runs ended with their verdicts (405 s against 770 alone).
 * Files not listed keep vitest's order (longest recorded run first, else largest file), after these.
 */
const E2E_LONGEST_FIRST = ['live-operations', 'broken-controllers', 'broken-sources', 'broken-admission', 'published-charts', 'converge'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = E2E_LONGEST_FIRST.findIndex((name) => file.moduleId.endsWith(`/test/e2e/${name}.test.ts`));
      return index === -1 ? E2E_LONGEST_FIRST.length : index;
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
    // module state another file reads (test/support.ts runs commands with an explicit root).
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
    // Transformed TypeScript kept between runs in node_modules/.experimental-vitest-cache
    // (keyed by each file's content and the config; gone with a reinstall): about 2 s less
    // per run of test:unit here. Vitest 5 turns it on by default.
    experimental: { fsModuleCache: true },
    sequence: { sequencer: LongestFirst },
    // Rendering four environments takes a moment on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    resolveSnapshotPath: (testPath, extension) =>
      testPath.replace(/\/test\/(.*)\.test\.ts$/, `/test/snapshots/$1.test.ts${extension}`),
  },
});
