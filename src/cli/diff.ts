import { DIFF } from '../commands/diff';
import { runCommand } from '../tooling/cli';

runCommand(DIFF);
