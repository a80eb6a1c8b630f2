import { SMOKE } from '../constants';
import { contractSteps } from '../smoke/contract';
import { formatOutcome, runSmoke } from '../smoke/runner';
import { DEFAULT_BOOTSTRAP_SERVERS, parseBaseUrl, smokeSettingsFromEnv } from '../smoke/settings';
import { ENVIRONMENT_ORDER, loadEnvironments, selectApplication } from '../environments';
import { UsageError } from '../errors';
import { runCommand } from '../tooling/cli';

/** The url of the application `app` in environment `env`, or undefined when no environment is named. */
function applicationUrl(env: string | undefined, app: string | undefined): string | undefined {
  if (env === undefined) {
    if (app !== undefined) throw new UsageError('--app needs --env <environment>');
    return undefined;
  }
  const environment = loadEnvironments().find((candidate) => candidate.name === env);
  if (environment === undefined) throw new UsageError(`--env "${env}" is not an environment; choose one of ${ENVIRONMENT_ORDER.join(', ')}`);
  return selectApplication(environment, app).url;
}

const USAGE = `usage: npm run smoke -- --base-url <url> | --env <environment> [--app <application>]

Runs the smoke test of contract 4.1 in order, stopping at the first failure:
health, login, declarations, database, broker. --base-url, or the url of the application
--app (optional when the environment has one) in --env. Settings come from the environment:
  SMOKE_USERNAME, SMOKE_PASSWORD          login of POST /api/auth/login
  DATABASE_HOST, DATABASE_PORT (1433), DATABASE_USER, DATABASE_PASSWORD,
  DATABASE_NAME (optional), DATABASE_TRUST_SERVER_CERTIFICATE (true)
  KAFKA_BOOTSTRAP_SERVERS (${DEFAULT_BOOTSTRAP_SERVERS}),
  KAFKA_USERNAME, KAFKA_PASSWORD (optional, SCRAM-SHA-512)
Exit code: 0 all steps passed, 1 a step failed (named), 2 bad settings.`;

runCommand({
  name: 'smoke',
  usage: USAGE,
  options: {
      'base-url': { type: 'string' },
      env: { type: 'string' },
      app: { type: 'string' },
  },
  async run(values) {
    const settings = smokeSettingsFromEnv(parseBaseUrl(values['base-url'] ?? applicationUrl(values.env, values.app)), process.env);
    const result = await runSmoke(contractSteps(settings), (outcome) => console.log(formatOutcome(outcome)));
    if (!result.passed) {
      console.error(`Smoke test failed at step "${result.failed!.name}": ${result.failed!.detail}`);
      return 1;
    }
    console.log(SMOKE.passedMessage);
    return 0;
  },
});

