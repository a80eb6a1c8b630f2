import { SMOKE_TEST } from '../commands/smoke';
import { runCommand } from '../tooling/cli';

runCommand(SMOKE_TEST);
