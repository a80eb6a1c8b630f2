import { UsageError } from '../../base/errors';
import { type Silence, type SilenceMatcher, connectAlertmanager, formatMatcher, parseDuration, parseMatcher } from '../../cluster/alertmanager';
import { BACKUP_ALERT, SILENCE_BOUNDS } from '../../contract/choices';
import { ALERTS } from '../../contract/contract';
import type { CommandDefinition } from '../../tooling/cli';
import { TARGET_OPTIONS, TARGET_USAGE, actor, opsTarget } from './target';

/** The alerts the platform renders and routes (2.4, and the backup alert). */
const PLATFORM_ALERTS = [ALERTS.deploymentFailed.name, ALERTS.highErrorRate.name, BACKUP_ALERT.name] as const;

const USAGE = `usage: npm run ops -- silence --env <environment> --alert <name> --comment <text> [options]
       npm run ops -- silence --env <environment> --list [options]
       npm run ops -- silence --env <environment> --expire <id> [options]

Silences an alert for a duration with a comment (6), through Alertmanager's API v2: a
local port forwarded to one ready Alertmanager pod of the monitoring namespace (silences
reach every replica), or the URL given. The platform's alerts: ${PLATFORM_ALERTS.join(', ')}.
  --alert <name>         the alert to silence (alertname)
  --matcher <l=v>        one more label matcher (=, !=, =~, !~ as in amtool), repeatable;
                         with --app, namespace=<the application's namespace> is added
  --duration <d>         how long, a Prometheus duration (default ${ALERTS.silenceDuration}, the contract's example),
                         at most ${SILENCE_BOUNDS.days} days
  --allow-long           a silence up to ${SILENCE_BOUNDS.allowLongDays} days (a planned maintenance)
  --comment <text>       why, and where to read more (required)
  --by <name>            who (default: $USER)
  --list                 the active and pending silences (--all: expired ones too)
  --expire <id>          end a silence now (its id, a UUID, as --list shows it)
  --alertmanager-url <u> Alertmanager's URL instead of a port-forward (default: $ALERTMANAGER_URL)
${TARGET_USAGE}
Exit code: 0 done, 1 refused (named, with why), 2 bad arguments.`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  alert: { type: 'string' },
  matcher: { type: 'string', multiple: true },
  duration: { type: 'string' },
  'allow-long': { type: 'boolean', default: false },
  comment: { type: 'string' },
  by: { type: 'string' },
  list: { type: 'boolean' },
  all: { type: 'boolean' },
  expire: { type: 'string' },
  'alertmanager-url': { type: 'string' },
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Alertmanager's silence ids are UUIDs (alertmanager v0.28 silence/silence.go, Silences.Set:
 * `uuid.NewString()`); anything else would reach its API as part of a path.
 */
const SILENCE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The silence's length in milliseconds, within SILENCE_BOUNDS; a usage error naming the bound otherwise. */
function boundedDuration(text: string, allowLong: boolean): number {
  const ms = parseDuration(text, '--duration');
  if (ms > SILENCE_BOUNDS.allowLongDays * DAY_MS) throw new UsageError(`--duration "${text}" is longer than ${SILENCE_BOUNDS.allowLongDays} days, the bound of --allow-long`);
  if (ms > SILENCE_BOUNDS.days * DAY_MS && !allowLong) {
    throw new UsageError(`--duration "${text}" is longer than ${SILENCE_BOUNDS.days} days: give --allow-long for a longer silence (at most ${SILENCE_BOUNDS.allowLongDays} days)`);
  }
  return ms;
}

function describe(silence: Silence): string {
  return `${silence.id} ${silence.status.state} ${silence.startsAt} .. ${silence.endsAt} by ${silence.createdBy}: ${silence.matchers.map(formatMatcher).join(', ')} "${silence.comment}"`;
}

/** `npm run ops -- silence`: silences through Alertmanager's API. */
export const SILENCE: CommandDefinition<typeof OPTIONS> = {
  name: 'ops silence',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    const modes = [values.alert !== undefined, values.list === true, values.expire !== undefined].filter(Boolean).length;
    if (modes !== 1) throw new UsageError('give one of --alert <name> (create), --list or --expire <id>');
    if (values.all === true && values.list !== true) throw new UsageError('--all goes with --list');
    let create: { matchers: SilenceMatcher[]; durationMs: number; comment: string } | undefined;
    if (values.alert !== undefined) {
      if (!/^[^\s"]+$/.test(values.alert)) throw new UsageError(`--alert "${values.alert}" must be an alert name`);
      if (values.comment === undefined || values.comment.trim() === '') throw new UsageError('--comment <text> is required: why the alert is silenced, and where to read more');
      const extra = (values.matcher ?? []).map((text) => parseMatcher(text, '--matcher'));
      if (extra.some((m) => m.name === 'alertname')) throw new UsageError('--matcher cannot name alertname: give it with --alert');
      create = { matchers: [{ name: 'alertname', value: values.alert, isRegex: false, isEqual: true }, ...extra], durationMs: boundedDuration(values.duration ?? ALERTS.silenceDuration, values['allow-long']), comment: values.comment };
    } else if (values.matcher !== undefined || values.duration !== undefined || values.comment !== undefined || values['allow-long']) {
      throw new UsageError('--matcher, --duration, --allow-long and --comment go with --alert');
    }
    if (values.expire !== undefined && !SILENCE_ID.test(values.expire)) throw new UsageError(`--expire "${values.expire}" must be a silence id (a UUID, as ops silence --list shows it)`);
    const target = opsTarget(values, context);
    const { say } = target;
    if (create !== undefined && values.app !== undefined && !create.matchers.some((m) => m.name === 'namespace')) {
      create.matchers.push({ name: 'namespace', value: target.applications[0]!.namespace, isRegex: false, isEqual: true });
    }
    const alertmanager = await connectAlertmanager(values['alertmanager-url'] ?? (context.env.ALERTMANAGER_URL || undefined), () => target.cluster);
    try {
      say(`Alertmanager: ${alertmanager.via}`);
      if (create !== undefined) {
        if (!(PLATFORM_ALERTS as readonly string[]).includes(values.alert!)) say(`note: ${values.alert} is not one of the platform's alerts (${PLATFORM_ALERTS.join(', ')})`);
        const startsAt = new Date();
        const id = await alertmanager.api.createSilence({ matchers: create.matchers, startsAt, endsAt: new Date(startsAt.getTime() + create.durationMs), createdBy: actor(values.by, context.env), comment: create.comment });
        const silence = await alertmanager.api.silence(id);
        say(`silenced: ${describe(silence)}`);
        say(`end it early: npm run ops -- silence --env ${target.environment.name} --expire ${id}`);
        target.result({ environment: target.environment.name, created: silence });
        return 0;
      }
      if (values.expire !== undefined) {
        await alertmanager.api.expireSilence(values.expire);
        const silence = await alertmanager.api.silence(values.expire);
        say(`expired: ${describe(silence)}`);
        target.result({ environment: target.environment.name, expired: silence });
        return 0;
      }
      const silences = (await alertmanager.api.silences()).filter((s) => values.all === true || s.status.state !== 'expired');
      if (silences.length === 0) say(values.all === true ? 'no silences' : 'no active or pending silences');
      for (const silence of silences) say(describe(silence));
      target.result({ environment: target.environment.name, silences });
      return 0;
    } finally {
      await alertmanager.close();
    }
  },
};
