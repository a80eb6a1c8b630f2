import { VERIFY } from '../commands/verify';
import { runCommand } from '../tooling/cli';

runCommand(VERIFY);
