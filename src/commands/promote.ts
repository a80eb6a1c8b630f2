import { ENVIRONMENT_ORDER } from '../environments';
import { editCommand, EDIT_EXIT_CODES } from './edit-command';
import { planPromotion } from '../release/release';
import { required } from '../tooling/cli';

/** `npm run promote`. */
export const PROMOTE = editCommand({
  name: 'promote',
  usage: `usage: npm run promote -- --from <environment> --to <next environment> [--app <application>] [--allow-older]

Copies the version running in --from (blue-green: the active unit's tag) to --to, the
next environment in the order ${ENVIRONMENT_ORDER.join(' -> ')}, the way
\`npm run release\` would. Skips, backward moves and the same environment are refused, and
so is a version older than the one --to runs, unless --allow-older is given.
  --app <name>  the application (its values file's name); optional when --to has one
${EDIT_EXIT_CODES}`,
  options: { from: { type: 'string' }, to: { type: 'string' }, app: { type: 'string' }, 'allow-older': { type: 'boolean' } },
  plan: (values, environments) =>
    planPromotion(environments, required(values.from, '--from <environment>'), required(values.to, '--to <environment>'), {
      allowOlder: values['allow-older'] ?? false,
      ...(values.app === undefined ? {} : { app: values.app }),
    }),
});
