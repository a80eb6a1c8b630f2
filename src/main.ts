import { SYNTH } from './commands/synth';
import { runCommand } from './tooling/cli';

runCommand(SYNTH);
