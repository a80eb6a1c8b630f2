import { COMMANDS } from './commands';
import { runCommandLine } from './tooling/cli';

// The product's one entry point: `node scripts/run.cjs <command> [options]` (what
// `npm run <command>` runs) runs the command of src/commands/index.ts its first word names.
runCommandLine(COMMANDS);
