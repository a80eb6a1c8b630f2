import { VALIDATE } from '../commands/validate';
import { runCommand } from '../tooling/cli';

runCommand(VALIDATE);
