import { synthCommand } from './commands/synth';
import { runCommand } from './tooling/cli';

// The command as a person runs it: a render thread on the second core (src/render/parallel.ts).
runCommand(synthCommand({ renderThread: true }));
