import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Rendering four environments takes a moment on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    resolveSnapshotPath: (testPath, extension) =>
      testPath.replace(/\/test\/(.*)\.test\.ts$/, `/test/snapshots/$1.test.ts${extension}`),
  },
});
