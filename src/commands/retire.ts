import { editCommand, EDIT_EXIT_CODES } from './edit-command';
import { planRetire } from '../release/release';
import { required } from '../tooling/cli';

/** `npm run retire`. */
export const RETIRE = editCommand({
  name: 'retire',
  usage: `usage: npm run retire -- --env <environment> [--app <application>]

Blue-green step 3 (contract 1.4 step 6): removes the unit that no longer takes traffic.
Refused while the Service committed in HEAD still selects it (switch, commit, then retire).
  --app <name>  the application (its values file's name); optional when the environment has one
${EDIT_EXIT_CODES}`,
  options: { env: { type: 'string' }, app: { type: 'string' } },
  plan: (values, environments) => planRetire(environments, required(values.env, '--env <environment>'), values.app),
});
