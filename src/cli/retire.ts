import { RETIRE } from '../commands/retire';
import { runCommand } from '../tooling/cli';

runCommand(RETIRE);
