import { RELEASE } from '../commands/release';
import { runCommand } from '../tooling/cli';

runCommand(RELEASE);
