import { SECRETS } from '../commands/secrets';
import { runCommand } from '../tooling/cli';

runCommand(SECRETS);
