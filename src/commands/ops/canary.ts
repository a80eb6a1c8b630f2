import { RefusedError, UsageError } from '../../base/errors';
import { type CanaryReport, type Gate, connectLoadTester, describeCanary } from '../../cluster/canary';
import { waitFor } from '../../cluster/wait';
import { WAITS_SECONDS } from '../../contract/contract';
import { type CommandDefinition, seconds } from '../../tooling/cli';
import { TARGET_OPTIONS, TARGET_USAGE, type OpsTarget, opsTarget } from './target';

const USAGE = `usage: npm run ops -- canary --env <environment> [--app <application>] [--promote | --rollback | --close] [--watch] [options]

The canary procedure (1.4 steps 2-4) for an application with the canary strategy:
describes the Canary (phase, weight, failed checks, the analysis and each metric's
threshold with the last event that names it, Flagger's events) and the load tester's two
manual gates; then, when asked:
  --promote      opens the promotion gate: Flagger promotes at its next check (the metrics
                 satisfy the thresholds)
  --rollback     opens the rollback gate: Flagger rolls back at its next check
  --close        closes both gates again, for the next release
  --watch        follows the Canary until its analysis is over (Succeeded or Failed), within
                 --timeout
The gates are reached on a local port forwarded to the load tester's pod (or --load-tester-url).
${TARGET_USAGE}
  --timeout <s>          the bound of --watch (default ${WAITS_SECONDS.rolloutStatus})
  --load-tester-url <u>  the load tester's URL instead of a port-forward
Exit code: 0 the Canary is not Failed (and, with --watch, Succeeded), 1 Failed, not over in
time or refused, 2 bad arguments.`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  promote: { type: 'boolean', default: false },
  rollback: { type: 'boolean', default: false },
  close: { type: 'boolean', default: false },
  watch: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  'load-tester-url': { type: 'string' },
} as const;

function say(target: OpsTarget, report: CanaryReport, gates: Readonly<Record<Gate, boolean>>): void {
  const { analysis } = report;
  target.say(`Canary ${report.namespace}/${report.name}: ${report.phase}, weight ${report.canaryWeight}%, failed checks ${report.failedChecks}/${analysis.threshold}, iterations ${report.iterations}`);
  if (report.message !== '') target.say(`  ${report.message}`);
  target.say(`  analysis: every ${analysis.interval}, ${analysis.stepWeight}% steps up to ${analysis.maxWeight}%, rolled back after ${analysis.threshold} failed checks`);
  for (const metric of report.metrics) target.say(`  metric ${metric.name}: ${metric.threshold} over ${metric.interval}; last: ${metric.lastSeen ?? 'no event names it yet'}`);
  target.say(`  gates: promotion ${gates.promotion ? 'OPEN' : 'closed'}, rollback ${gates.rollback ? 'OPEN' : 'closed'}`);
  for (const event of report.events.slice(-10)) target.say(`  event ${event}`);
}

/** `npm run ops -- canary`: watch, describe, promote or roll back a canary release. */
export const CANARY: CommandDefinition<typeof OPTIONS> = {
  name: 'ops canary',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    const actions = [values.promote, values.rollback, values.close].filter(Boolean).length;
    if (actions > 1) throw new UsageError('give one of --promote, --rollback and --close');
    const timeout = seconds(values.timeout, '--timeout', WAITS_SECONDS.rolloutStatus);
    const url = values['load-tester-url'];
    if (url !== undefined && !URL.canParse(url)) throw new UsageError(`--load-tester-url "${url}" must be an http:// or https:// URL`);
    if (url !== undefined && !['http:', 'https:'].includes(new URL(url).protocol)) throw new UsageError(`--load-tester-url "${url}" must be an http:// or https:// URL`);
    const target = opsTarget(values, context, true);
    const application = target.applications[0]!;
    if (application.strategy.type !== 'canary') throw new RefusedError(`${target.environment.name}: ${application.name} uses the ${application.strategy.type} strategy, not canary`);
    const canary = { name: application.name, namespace: application.namespace };
    const loadTester = await connectLoadTester(values['load-tester-url'], () => target.cluster);
    try {
      target.say(`load tester: ${loadTester.via}`);
      const readGates = async (): Promise<Record<Gate, boolean>> => ({
        promotion: await loadTester.gates.isOpen('promotion', canary),
        rollback: await loadTester.gates.isOpen('rollback', canary),
      });
      if (values.promote) await loadTester.gates.set('promotion', true, canary);
      if (values.rollback) await loadTester.gates.set('rollback', true, canary);
      if (values.close) for (const gate of ['promotion', 'rollback'] as const) await loadTester.gates.set(gate, false, canary);
      if (values.promote || values.rollback || values.close) {
        target.say(values.promote ? 'promotion gate opened: Flagger promotes at its next check' : values.rollback ? 'rollback gate opened: Flagger rolls back at its next check' : 'both gates closed');
      }
      let report = await describeCanary(target.cluster, canary.namespace, canary.name);
      if (values.watch) {
        const watched = await waitFor({
          what: `analysis of Canary ${canary.namespace}/${canary.name}`,
          timeoutSeconds: timeout,
          progress: target.say,
          check: async () => {
            report = await describeCanary(target.cluster, canary.namespace, canary.name);
            const state = `${report.phase}, weight ${report.canaryWeight}%, failed checks ${report.failedChecks}`;
            return { done: report.phase === 'Succeeded', state, ...(report.phase === 'Failed' ? { failed: `Failed: ${report.message}` } : {}) };
          },
        });
        if (!watched.ok) target.say(`FAIL: Canary ${canary.namespace}/${canary.name}: ${watched.reason}`);
      }
      const gates = await readGates();
      say(target, report, gates);
      target.result({ environment: target.environment.name, application: application.name, canary: report, gates });
      return report.phase === 'Failed' || (values.watch && report.phase !== 'Succeeded') ? 1 : 0;
    } finally {
      await loadTester.close();
    }
  },
};
