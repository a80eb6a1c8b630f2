import { ensureBuilt } from '../scripts/build.cjs';

// Compile the CLIs once, so tests that run them as a person would (node build/...) see
// the current sources.
export default function setup(): void {
  ensureBuilt();
}
