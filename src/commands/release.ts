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
  --app <name>  the application (its values file's name); optional when the environment has one
${EDIT_EXIT_CODES}`,
  options: { env: { type: 'string' }, app: { type: 'string' }, tag: { type: 'string' } },
  plan: (values, environments) =>
    planRelease(environments, required(values.env, '--env <environment>'), required(values.tag, '--tag v<major>.<minor>.<patch>'), '--env', values.app),
});
