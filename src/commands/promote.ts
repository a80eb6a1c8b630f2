import { ENVIRONMENT_ORDER } from '../environments';
import { editCommand, EDIT_EXIT_CODES } from './edit-command';
import { planPromotion } from '../release/release';
import { planVersionPromotion } from '../release/upgrade';
import { required } from '../tooling/cli';
import { UsageError } from '../base/errors';

/** `npm run promote`. */
export const PROMOTE = editCommand({
  name: 'promote',
  usage: `usage: npm run promote -- --from <environment> --to <next environment> [--app <application> | --release <release>] [--allow-older]

Copies the version running in --from (blue-green: the active unit's tag) to --to, the
next environment in the order ${ENVIRONMENT_ORDER.join(' -> ')}, the way
\`npm run release\` would. Skips, backward moves and the same environment are refused, and
so is a version older than the one --to runs, unless --allow-older is given.
  --app <name>      the application (its values file's name); optional when --to has one
  --release <name>  carry an infrastructure release's version instead (infrastructure.versions
                    of the environments' values), as a tag is carried
${EDIT_EXIT_CODES}`,
  options: { from: { type: 'string' }, to: { type: 'string' }, app: { type: 'string' }, release: { type: 'string' }, 'allow-older': { type: 'boolean' } },
  plan: (values, environments) => {
    const from = required(values.from, '--from <environment>');
    const to = required(values.to, '--to <environment>');
    const allowOlder = values['allow-older'] ?? false;
    if (values.release === undefined) return planPromotion(environments, from, to, { allowOlder, ...(values.app === undefined ? {} : { app: values.app }) });
    if (values.app !== undefined) throw new UsageError('--app and --release are mutually exclusive: --app carries an application\'s tag, --release an infrastructure release\'s version');
    return planVersionPromotion(environments, from, to, values.release, { allowOlder });
  },
});
