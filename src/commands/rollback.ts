import { editCommand, EDIT_EXIT_CODES } from './edit-command';
import { planRollback } from '../release/release';
import { required } from '../tooling/cli';

/** `npm run rollback`. */
export const ROLLBACK = editCommand({
  name: 'rollback',
  usage: `usage: npm run rollback -- --env <environment> [--app <application>] [--tag v<major>.<minor>.<patch>]

Back to the previous version (contract 1.5) as a reviewed change: --tag, or the newest
version the application's values file ran before the current one in its git history.
Only a tag the environment ran before (served, in that history) is taken: any other is
refused, and so is a values file with changes not committed, or a shallow clone whose
history does not show the tag (git fetch --unshallow). Blue-green: while the older unit
still runs (and once served), traffic switches back to it; otherwise the previous version
is released on the inactive unit (then switch).
  --app <name>  the application (its values file's name); optional when the environment has one
${EDIT_EXIT_CODES}`,
  options: { env: { type: 'string' }, app: { type: 'string' }, tag: { type: 'string' } },
  plan: (values, environments, root) => planRollback(environments, required(values.env, '--env <environment>'), root, values.tag, values.app),
});
