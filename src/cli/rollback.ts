import { ROLLBACK } from '../commands/rollback';
import { runCommand } from '../tooling/cli';

runCommand(ROLLBACK);
