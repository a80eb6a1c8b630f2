import { listApplications, readApplication, refreshApplications } from '../../cluster/argo-cd';
import { type ResourceDrift, applicationDrift } from '../../cluster/drift';
import { WAITS_SECONDS } from '../../contract/contract';
import { applicationChartId } from '../../contract/layout';
import type { CommandDefinition } from '../../tooling/cli';
import { TARGET_OPTIONS, TARGET_USAGE, opsTarget } from './target';

const USAGE = `usage: npm run ops -- drift --env <environment> [--app <application>] [options]

Desired (git) against live, from Argo CD's comparison: asks Argo CD to compare again (a
refresh), then lists every resource it reports OutOfSync, with the fields where the live
object differs from the object rendered in dist/ at the revision Argo CD compared (read
from this checkout's git history; a Secret's values are never shown).
${TARGET_USAGE}
  --no-refresh           read Argo CD's last comparison without asking for a new one
Exit code: 0 nothing drifts, 1 something does (or the refresh did not complete), 2 bad arguments.`;

const OPTIONS = { ...TARGET_OPTIONS, 'no-refresh': { type: 'boolean', default: false } } as const;

/** `npm run ops -- drift`: contract 1.3.2, "compute the drift". */
export const DRIFT: CommandDefinition<typeof OPTIONS> = {
  name: 'ops drift',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    const target = opsTarget(values, context);
    const { cluster, controllerNamespace: namespace, say } = target;
    const names = values.app === undefined ? (await listApplications(cluster, namespace)).map((app) => app.metadata.name) : [applicationChartId(target.applications[0]!.name)];
    if (names.length === 0) {
      say(`drift: no Application in ${namespace} on ${cluster.server}: the environment is not bootstrapped on this cluster`);
      target.result({ environment: target.environment.name, drifted: null, error: 'no Application' });
      return 1;
    }
    if (!values['no-refresh']) {
      const refreshed = await refreshApplications(cluster, namespace, names, WAITS_SECONDS.controllerSync, say);
      if (!refreshed.ok) {
        say(`drift: Argo CD did not compare again: ${refreshed.reason}`);
        target.result({ environment: target.environment.name, drifted: null, error: refreshed.reason });
        return 1;
      }
    }
    const report: { application: string; sync: string; resources: ResourceDrift[] }[] = [];
    for (const name of names) {
      const app = await readApplication(cluster, namespace, name);
      const sync = String(app['status']?.sync?.status ?? 'Unknown');
      const resources = sync === 'Synced' ? [] : await applicationDrift(cluster, context.root, app);
      report.push({ application: name, sync, resources });
      if (sync === 'Synced') continue;
      say('');
      say(`Application ${name}: ${sync}`);
      for (const resource of resources) {
        say(`  ${resource.resource}: ${resource.status}`);
        for (const d of resource.differences) say(`    ${d.path}: git ${d.desired}, live ${d.live}`);
        if (resource.note !== undefined) say(`    (${resource.note})`);
      }
    }
    const drifted = report.filter((entry) => entry.sync !== 'Synced');
    say('');
    say(drifted.length === 0 ? `${target.environment.name}: no drift (${names.length} Applications Synced)` : `${target.environment.name}: drift in ${drifted.map((entry) => entry.application).join(', ')}`);
    target.result({ environment: target.environment.name, drifted: drifted.map((entry) => entry.application), applications: report });
    return drifted.length === 0 ? 0 : 1;
  },
};
