import { ENVIRONMENT_ORDER } from '../environments';
import { RELEASE_ENVIRONMENTS } from '../contract/choices';
import { RELEASE_NAMES } from '../contract/release-versions';
import { editCommand, EDIT_EXIT_CODES } from './edit-command';
import { planUpgrade } from '../release/upgrade';
import { required } from '../tooling/cli';

/** `npm run upgrade`. */
export const UPGRADE = editCommand({
  name: 'upgrade',
  usage: `usage: npm run upgrade -- --env <environment> --release <release> --version <version> [--allow-downgrade]

Sets the version of an infrastructure release in the environment's values
(infrastructure.versions in src/environments/<environment>/environment.yaml), validates
every environment, re-renders dist/ and prints the rendered diff. The version must be one
the release table knows (src/contract/release-versions.ts). A new version enters at
${RELEASE_ENVIRONMENTS.join(' or ')}; a later environment takes it only once the one before it in the
order ${ENVIRONMENT_ORDER.join(' -> ')} runs it (or by \`npm run promote -- --release <release>\`).
  --release <name>   one of ${RELEASE_NAMES.join(', ')}
  --version <v>      the chart version (argocd: the Argo CD tag), exactly as the table writes it
  --allow-downgrade  move the environment back to an older version
${EDIT_EXIT_CODES}`,
  options: { env: { type: 'string' }, release: { type: 'string' }, version: { type: 'string' }, 'allow-downgrade': { type: 'boolean' } },
  plan: (values, environments) =>
    planUpgrade(environments, required(values.env, '--env <environment>'), required(values.release, '--release <release>'), required(values.version, '--version <version>'), {
      allowDowngrade: values['allow-downgrade'] ?? false,
    }),
});
