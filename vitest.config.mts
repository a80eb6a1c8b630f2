import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Test files share one module graph per worker: every file would otherwise re-import
    // cdk8s-plus and the generated CRD classes. No test changes process.cwd, process.env or
    // module state another file reads (test/support.ts runs commands with an explicit root).
    pool: 'threads',
    isolate: false,
    // Rendering four environments takes a moment on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    resolveSnapshotPath: (testPath, extension) =>
      testPath.replace(/\/test\/(.*)\.test\.ts$/, `/test/snapshots/$1.test.ts${extension}`),
  },
});
