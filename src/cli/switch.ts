import { SWITCH } from '../commands/switch';
import { runCommand } from '../tooling/cli';

runCommand(SWITCH);
