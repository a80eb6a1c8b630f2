import * as fs from 'node:fs';
import { PORTS } from '../contract/contract';
import { ENVIRONMENT_ORDER, environmentNamed, selectApplication } from '../environments';
import { hostOf } from '../contract/naming';
import { formatOutcome, runSmoke } from '../smoke/runner';
import { credentialsFromEnv, parseBaseUrl, parsePort } from '../smoke/settings';
import { UsageError } from '../base/errors';
import { type CommandDefinition } from '../tooling/cli';
import { verifySteps } from '../verify/verify';

const USAGE = `usage: npm run verify -- --env <environment> [--app <application>] [options]

Post-deployment validation (contract 4.2) of one environment: the application's Gateway
and HTTPRoutes with their status conditions (kubectl: Gateway Accepted and Programmed,
each route Accepted and ResolvedRefs on it), GET /health, login and GET /api/status with
the token (SMOKE_USERNAME, SMOKE_PASSWORD), and a TLS handshake to the environment's host
on 443 with the server name set, printing the certificate's subject and expiry. Every
check runs; any failure gives exit code 1.
  --env <name>           one of ${ENVIRONMENT_ORDER.join(', ')}
  --app <name>           the application to verify; optional when the environment has one
  --context <name>       kube context of the environment's cluster (default: kubectl's current;
                         the binary is $KUBECTL, default kubectl)
  --skip-cluster         skip the Gateway check (a host without access to the cluster's API)
  --base-url <url>       call the HTTP checks here (default: the environment's url)
  --address <host>       connect the TLS check here (default: the environment's host)
  --port <n>             TLS port (default: ${PORTS.https})
  --ca <file>            trust these PEM certificates instead of the bundled roots
  --allow-untrusted      report an untrusted chain instead of failing (ACME staging)
Exit code: 0 all checks passed, 1 a check failed, 2 bad arguments.`;

const OPTIONS = {
  env: { type: 'string' },
  app: { type: 'string' },
  'base-url': { type: 'string' },
  address: { type: 'string' },
  port: { type: 'string' },
  ca: { type: 'string' },
  'allow-untrusted': { type: 'boolean', default: false },
  context: { type: 'string' },
  'skip-cluster': { type: 'boolean', default: false },
} as const;

/** `npm run verify`: post-deployment validation of one environment (contract 4.2). */
export const VERIFY: CommandDefinition<typeof OPTIONS> = {
  name: 'verify',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, { root, env, out, err }) {
    if (values.env === undefined) throw new UsageError('--env <environment> is required');
    const environment = environmentNamed(root, values.env);
    const application = selectApplication(environment, values.app);
    const problems: string[] = [];
    const { username, password } = credentialsFromEnv(env, problems);
    const port = values.port === undefined ? PORTS.https : parsePort(values.port, '--port', problems);
    let ca: string | undefined;
    if (values.ca !== undefined) {
      try {
        ca = fs.readFileSync(values.ca, 'utf8');
      } catch (error) {
        problems.push(`--ca "${values.ca}" cannot be read: ${(error as Error).message}`);
      }
    }
    const baseUrl = parseBaseUrl(values['base-url'] ?? application.url);
    if (problems.length > 0) throw new UsageError(`cannot verify ${environment.name}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);

    out(`Verifying ${application.name} in ${environment.name} (${baseUrl})\n`);
    const result = await runSmoke(
      verifySteps({
        baseUrl,
        username,
        password,
        ...(values['skip-cluster']
          ? {}
          : {
              gateway: {
                namespace: application.namespace,
                // The application's Gateway is named after it (src/charts/application-chart.ts).
                name: application.name,
                kubectl: { kubectl: env.KUBECTL || 'kubectl', env, ...(values.context === undefined ? {} : { context: values.context }) },
              },
            }),
        tls: {
          host: hostOf(application.url),
          port: port!,
          allowUntrusted: values['allow-untrusted'],
          ...(values.address === undefined ? {} : { address: values.address }),
          ...(ca === undefined ? {} : { ca }),
        },
      }),
      (outcome) => out(`${formatOutcome(outcome)}\n`),
      { stopAtFirstFailure: false },
    );
    const failed = result.steps.filter((step) => step.status === 'failed').map((step) => step.name);
    if (failed.length > 0) {
      err(`Verification of ${environment.name} failed: ${failed.join(', ')}\n`);
      return 1;
    }
    out(`${environment.name} verified\n`);
    return 0;
  },
};
