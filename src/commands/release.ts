import { editCommand, EDIT_EXIT_CODES } from './edit-command';
import { planRelease } from '../release/release';
import { required } from '../tooling/cli';

/** `npm run release`. */
export const RELEASE = editCommand({
  name: 'release',
  usage: `usage: npm run release -- --env <environment> [--app <application>] --tag v<major>.<minor>.<patch>

Sets the image tag of the environment's application in its values file
(src/environments/<environment>/<application>.yaml; blue-green: the inactive unit, added
when absent), validates every environment, re-renders dist/ and prints the rendered diff.
A new version enters at local or testing; staging and production receive it by
\`npm run promote\`. A tag older than the one the environment runs is refused unless
--allow-older is given (or use \`npm run rollback\`).
  --app <name>   the application (its values file's name); optional when the environment has one
  --allow-older  move the environment back to an older tag
${EDIT_EXIT_CODES}`,
  options: { env: { type: 'string' }, app: { type: 'string' }, tag: { type: 'string' }, 'allow-older': { type: 'boolean' } },
  plan: (values, environments) =>
    planRelease(environments, required(values.env, '--env <environment>'), required(values.tag, '--tag v<major>.<minor>.<patch>'), '--env', values.app, {
      allowOlder: values['allow-older'] ?? false,
    }),
});
