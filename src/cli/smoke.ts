import { SMOKE } from '../constants';
import { contractSteps } from '../smoke/contract';
import { formatOutcome, runSmoke } from '../smoke/runner';
import { DEFAULT_BOOTSTRAP_SERVERS, parseBaseUrl, smokeSettingsFromEnv } from '../smoke/settings';
import { runCommand } from '../tooling/cli';

const USAGE = `usage: npm run smoke -- --base-url <url>

Runs the smoke test of contract 4.1 in order, stopping at the first failure:
health, login, declarations, database, broker. Settings come from the environment:
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
  },
  async run(values) {
    const settings = smokeSettingsFromEnv(parseBaseUrl(values['base-url']), process.env);
    const result = await runSmoke(contractSteps(settings), (outcome) => console.log(formatOutcome(outcome)));
    if (!result.passed) {
      console.error(`Smoke test failed at step "${result.failed!.name}": ${result.failed!.detail}`);
      return 1;
    }
    console.log(SMOKE.passedMessage);
    return 0;
  },
});

