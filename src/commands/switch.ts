import { editCommand, EDIT_EXIT_CODES } from './edit-command';
import { planSwitch } from '../release/release';
import { required } from '../tooling/cli';

/** `npm run switch`. */
export const SWITCH = editCommand({
  name: 'switch',
  usage: `usage: npm run switch -- --env <environment> [--app <application>]

Blue-green step 2 (contract 1.4 steps 4-5): moves strategy.blueGreen.active to the other
unit, so the Service selects it. Refused unless that unit runs in the dist/ committed in
HEAD (release it, commit, let it become healthy, then switch).
  --app <name>  the application (its values file's name); optional when the environment has one
${EDIT_EXIT_CODES}`,
  options: { env: { type: 'string' }, app: { type: 'string' } },
  plan: (values, environments) => planSwitch(environments, required(values.env, '--env <environment>'), values.app),
});
