import * as fs from 'node:fs';
import { UsageError } from '../../base/errors';
import type { ClusterConnection } from '../../cluster/connection';
import { PORTS } from '../../contract/contract';
import { hostOf } from '../../contract/naming';
import type { Application, Environment } from '../../environments';
import { formatOutcome, runSmoke, type StepOutcome } from '../../smoke/runner';
import { optionalCredentialsFromEnv, optionalDatabaseFromEnv, parseBaseUrl, parsePort } from '../../smoke/settings';
import { SMOKE_VARIABLES } from '../../contract/naming';
import { liveWorkloadsOf } from '../../strategies/values-registry';
import type { CommandContext, CommandDefinition } from '../../tooling/cli';
import { verifySteps } from '../../verify/verify';
import { TARGET_OPTIONS, TARGET_USAGE, opsTarget } from './target';

/** The options of the HTTP and TLS half of verification. */
export const HTTP_OPTIONS = {
  'base-url': { type: 'string' },
  address: { type: 'string' },
  port: { type: 'string' },
  ca: { type: 'string' },
  'allow-untrusted': { type: 'boolean', default: false },
  'skip-http': { type: 'boolean', default: false },
  'skip-cluster': { type: 'boolean', default: false },
} as const;

export const HTTP_USAGE = `  --skip-cluster         skip the Gateway and endpoint checks (a host without access to the API)
  --skip-http            skip the health, status and TLS checks (a host that cannot reach the route)
  --base-url <url>       call the HTTP checks here (default: the application's url)
  --address <host>       connect the TLS check here (default: the application's host)
  --port <n>             TLS port (default: ${PORTS.https})
  --ca <file>            trust these PEM certificates instead of the bundled roots
  --allow-untrusted      report an untrusted chain instead of failing (ACME staging)`;

const USAGE = `usage: npm run ops -- verify --env <environment> [--app <application>] [options]

Post-deployment validation (contract 4.2, 1.3.2) of one application, every check run:
its Gateway and HTTPRoutes by their status conditions (Accepted, Programmed,
ResolvedRefs), its Service's endpoints (ready, and each a pod of the workload that
serves: the active blue-green unit, Flagger's primary), GET /health, login and GET
/api/status with the token (SMOKE_USERNAME, SMOKE_PASSWORD; without them health only,
the status call said skipped), a TLS handshake to the host on 443 with the server name
set, and the database connectivity check of \`npm run smoke\` (a SQL Server login and
SELECT 1; DATABASE_HOST, DATABASE_USER, DATABASE_PASSWORD, DATABASE_PORT, DATABASE_NAME,
DATABASE_TRUST_SERVER_CERTIFICATE; without them said skipped). \`npm run verify\` is this verb.
${TARGET_USAGE}
${HTTP_USAGE}
Exit code: 0 all checks passed, 1 a check failed, 2 bad arguments.`;

const OPTIONS = { ...TARGET_OPTIONS, ...HTTP_OPTIONS } as const;

type HttpValues = { readonly [K in keyof typeof HTTP_OPTIONS]?: (typeof HTTP_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/**
 * Verify one application (every check runs, progress through `say`); the outcomes, and
 * whether all passed. The options are read first: a usage error before any check.
 */
export async function verifyApplication(
  environment: Environment,
  application: Application,
  cluster: () => ClusterConnection,
  values: HttpValues,
  context: CommandContext,
  say: (line: string) => void,
): Promise<{ passed: boolean; steps: readonly StepOutcome[] }> {
  const http = values['skip-http'] !== true;
  const problems: string[] = [];
  const credentials = http ? optionalCredentialsFromEnv(context.env, problems) : undefined;
  const database = optionalDatabaseFromEnv(context.env, problems);
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
  if (problems.length > 0) throw new UsageError(`cannot verify ${application.name} in ${environment.name}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  const connection = values['skip-cluster'] === true ? undefined : cluster();
  say(`Verifying ${application.name} in ${environment.name} (${baseUrl})`);
  // What the settings leave out is said, not silently passed.
  if (http && credentials === undefined) say(`SKIP status: ${SMOKE_VARIABLES.username} and ${SMOKE_VARIABLES.password} are not set (health only, no authenticated status call)`);
  if (database === undefined) say(`SKIP database: ${SMOKE_VARIABLES.databaseHost}, ${SMOKE_VARIABLES.databaseUser} and ${SMOKE_VARIABLES.databasePassword} are not set (no database connectivity check)`);
  const result = await runSmoke(
    verifySteps({
      baseUrl,
      ...(credentials === undefined ? {} : { credentials }),
      ...(database === undefined ? {} : { database }),
      http,
      ...(connection === undefined
        ? {}
        : {
            cluster: {
              connection,
              namespace: application.namespace,
              // The application's Gateway and Service are named after it (src/charts/application-chart.ts, src/strategies/service-route.ts).
              gateway: application.name,
              service: application.name,
              workloads: liveWorkloadsOf(application),
            },
          }),
      tls: {
        host: hostOf(application.url),
        port: port!,
        allowUntrusted: values['allow-untrusted'] === true,
        ...(values.address === undefined ? {} : { address: values.address }),
        ...(ca === undefined ? {} : { ca }),
      },
    }),
    (outcome) => say(formatOutcome(outcome)),
    { stopAtFirstFailure: false },
  );
  const failed = result.steps.filter((step) => step.status === 'failed').map((step) => step.name);
  say(failed.length > 0 ? `Verification of ${application.name} in ${environment.name} failed: ${failed.join(', ')}` : `${application.name} in ${environment.name} verified`);
  return { passed: failed.length === 0, steps: result.steps };
}

/** `npm run ops -- verify` and `npm run verify`: post-deployment validation through the Kubernetes API. */
export function verifyCommand(name: string): CommandDefinition<typeof OPTIONS> {
  return {
    name,
    usage: name === 'verify' ? USAGE.replace('npm run ops -- verify --env', 'npm run verify -- --env') : USAGE,
    options: OPTIONS,
    async run(values, _positionals, context) {
      const target = opsTarget(values, context, true);
      const application = target.applications[0]!;
      // --skip-cluster reaches no cluster, so it needs no kubeconfig.
      const { passed, steps } = await verifyApplication(target.environment, application, () => target.cluster, values, context, target.say);
      target.result({ environment: target.environment.name, application: application.name, passed, steps });
      return passed ? 0 : 1;
    },
  };
}

export const VERIFY = verifyCommand('ops verify');
