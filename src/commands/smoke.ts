import { SMOKE } from '../contract/contract';
import { contractSteps } from '../smoke/contract';
import { formatOutcome, runSmoke } from '../smoke/runner';
import { DEFAULT_BOOTSTRAP_SERVERS } from '../contract/naming';
import { parseBaseUrl, smokeSettingsFromEnv } from '../smoke/settings';
import { environmentNamed, selectApplication } from '../environments';
import { UsageError } from '../base/errors';
import { type CommandDefinition } from '../tooling/cli';

/** The url of the application `app` in environment `env`, or undefined when no environment is named. */
function applicationUrl(root: string, env: string | undefined, app: string | undefined): string | undefined {
  if (env === undefined) {
    if (app !== undefined) throw new UsageError('--app needs --env <environment>');
    return undefined;
  }
  return selectApplication(environmentNamed(root, env), app).url;
}

const USAGE = `usage: npm run smoke -- --base-url <url>
       npm run smoke -- --env <environment> [--app <application>]

Runs the smoke test of contract 4.1 in order, stopping at the first failure:
health, login, declarations, database, broker. --base-url, or the url of the application
--app (optional when the environment has one) in --env. Settings come from the environment:
  SMOKE_USERNAME, SMOKE_PASSWORD          login of POST /api/auth/login
  DATABASE_HOST, DATABASE_PORT (1433), DATABASE_USER, DATABASE_PASSWORD,
  DATABASE_NAME (optional), DATABASE_TRUST_SERVER_CERTIFICATE (true)
  KAFKA_BOOTSTRAP_SERVERS (${DEFAULT_BOOTSTRAP_SERVERS}),
  KAFKA_USERNAME, KAFKA_PASSWORD (optional, SCRAM-SHA-512)
Exit code: 0 all steps passed, 1 a step failed (named), 2 bad settings.`;

const OPTIONS = {
  'base-url': { type: 'string' },
  env: { type: 'string' },
  app: { type: 'string' },
} as const;

/** `npm run smoke`: the smoke test of contract 4.1 against a running application. */
export const SMOKE_TEST: CommandDefinition<typeof OPTIONS> = {
  name: 'smoke',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, { root, env, out, err }) {
    const settings = smokeSettingsFromEnv(parseBaseUrl(values['base-url'] ?? applicationUrl(root, values.env, values.app)), env);
    const result = await runSmoke(contractSteps(settings), (outcome) => out(`${formatOutcome(outcome)}\n`));
    if (!result.passed) {
      err(`Smoke test failed at step "${result.failed!.name}": ${result.failed!.detail}\n`);
      return 1;
    }
    out(`${SMOKE.passedMessage}\n`);
    return 0;
  },
};
