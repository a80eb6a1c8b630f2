import { UsageError } from '../../base/errors';
import { INCIDENT_STATUSES, OUTAGE_TARGETS, OUTAGE_VARIABLES, type OutageTarget, STATUSPAGE_API_URL, notifyOutage } from '../../communication/outage';
import type { CommandDefinition } from '../../tooling/cli';
import { TARGET_OPTIONS, TARGET_USAGE, oneOf, opsTarget } from './target';

const USAGE = `usage: npm run ops -- outage notify --env <environment> --message <text> [options]

Outage communication (6): posts the message, prefixed with the environment, to the team
chat's webhook, opens (or updates) an incident on the status page, and posts it to the
stakeholders' channel, in that order. Every target is tried and named with its result; one
that fails or is not configured fails the command after the others were told. The addresses
come from variables of your shell, never from git:
  ${OUTAGE_VARIABLES.chatWebhook}          the team chat (a Slack-compatible incoming webhook)
  ${OUTAGE_VARIABLES.statusPageApiKey}, ${OUTAGE_VARIABLES.statusPagePageId}
                                   Atlassian Statuspage's API key and page
  ${OUTAGE_VARIABLES.statusPageApiUrl}              its API (default ${STATUSPAGE_API_URL})
  ${OUTAGE_VARIABLES.stakeholdersWebhook}  the stakeholders' channel (Slack-compatible)
  --message <text>       what is happening, what users see, when the next update comes (required)
  --status <s>           the incident's status: ${INCIDENT_STATUSES.join(', ')} (default ${INCIDENT_STATUSES[0]})
  --incident <id>        update this status page incident (printed when it was opened) instead
                         of opening another
  --skip <target>        leave out a target (${OUTAGE_TARGETS.join(', ')}), repeatable
${TARGET_USAGE}
Exit code: 0 every target told, 1 a target failed or is not configured, 2 bad arguments.`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  message: { type: 'string' },
  status: { type: 'string' },
  incident: { type: 'string' },
  skip: { type: 'string', multiple: true },
} as const;

/** `npm run ops -- outage notify`: tell the team, the status page and the stakeholders. */
export const OUTAGE: CommandDefinition<typeof OPTIONS> = {
  name: 'ops outage',
  usage: USAGE,
  options: OPTIONS,
  positionals: true,
  async run(values, positionals, context) {
    if (positionals.length !== 1 || positionals[0] !== 'notify') throw new UsageError('the only action is notify: npm run ops -- outage notify --env <environment> --message <text>');
    if (values.message === undefined || values.message.trim() === '') throw new UsageError('--message <text> is required');
    const status = values.status === undefined ? INCIDENT_STATUSES[0] : oneOf(values.status, INCIDENT_STATUSES, '--status');
    const skipped = new Set((values.skip ?? []).map((target) => oneOf(target, OUTAGE_TARGETS, '--skip')));
    const targets = OUTAGE_TARGETS.filter((target) => !skipped.has(target));
    if (targets.length === 0) throw new UsageError('every target is skipped: nobody would be told');
    if (values.incident !== undefined && !targets.includes('status-page')) throw new UsageError('--incident goes with the status page, which --skip leaves out');
    const target = opsTarget(values, context);
    const results = await notifyOutage(
      { environment: target.environment.name, message: values.message.trim(), status, ...(values.incident === undefined ? {} : { incident: values.incident }) },
      targets,
      context.env,
    );
    for (const result of results) target.say(`${result.target}: ${result.ok ? 'told' : 'FAILED'}: ${result.detail}`);
    for (const left of OUTAGE_TARGETS.filter((t: OutageTarget) => skipped.has(t))) target.say(`${left}: skipped (--skip)`);
    const failed = results.filter((result) => !result.ok);
    const incident = results.find((result) => result.incident !== undefined)?.incident;
    if (incident !== undefined && status !== 'resolved') target.say(`next update: npm run ops -- outage notify --env ${target.environment.name} --incident ${incident} --status <status> --message <text>`);
    if (failed.length > 0) target.say(`outage notify: ${failed.length} of ${results.length} targets failed: ${failed.map((result) => result.target).join(', ')}`);
    target.result({ environment: target.environment.name, status, targets: results, skipped: [...skipped] });
    return failed.length === 0 ? 0 : 1;
  },
};
