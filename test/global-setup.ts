import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureBuilt } from '../scripts/build.cjs';
import { prepareCompiledValidators } from '../src/validation/compiled-validators';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder of this test run for what tests build once and share (test/argo-cd-build.ts), removed when the run ends. */
    readonly runFolder: string;
  }
}

// Compile the CLIs once, so tests that run them as a person would (node build/...) see
// the current sources; and the gate's validators, so parallel test files only load them.
// Returns the teardown: the run's folder goes with the run, however its tests ended.
export default function setup(project: TestProject): () => void {
  ensureBuilt();
  prepareCompiledValidators(path.resolve(__dirname, '..'), (message) => console.error(`schemas: ${message}`));
  const runFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-tests-'));
  project.provide('runFolder', runFolder);
  return () => fs.rmSync(runFolder, { recursive: true, force: true });
}
