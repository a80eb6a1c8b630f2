import { PROMOTE } from '../commands/promote';
import { runCommand } from '../tooling/cli';

runCommand(PROMOTE);
