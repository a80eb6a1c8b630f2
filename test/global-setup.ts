import * as path from 'node:path';
import { ensureBuilt } from '../scripts/build.cjs';
import { prepareCompiledValidators } from '../src/validation/compiled-validators';

// Compile the CLIs once, so tests that run them as a person would (node build/...) see
// the current sources; and the gate's validators, so parallel test files only load them.
export default function setup(): void {
  ensureBuilt();
  prepareCompiledValidators(path.resolve(__dirname, '..'), (message) => console.error(`schemas: ${message}`));
}
