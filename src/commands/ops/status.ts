import { type ApplicationState, applicationState, converged, formatApplicationTable, lastOperation, syncedRevision } from '../../cluster/application-state';
import { listApplications, waveOf } from '../../cluster/argo-cd';
import { pauseRecord } from '../../cluster/argo-cd-pause';
import { type WorkloadState, workloadStates } from '../../cluster/workloads';
import { liveWorkloadsOf } from '../../environments/strategy-registry';
import type { CommandDefinition } from '../../tooling/cli';
import { TARGET_OPTIONS, TARGET_USAGE, opsTarget } from './target';

const USAGE = `usage: npm run ops -- status --env <environment> [--app <application>] [options]

Every Argo CD Application of the environment (sync, health, revision, last operation, a
pause and who made it), then each application's workloads by its strategy (the rolling
Deployment; the blue and green units and the active one; Flagger's primary and the
canary), their rollout and their pods' readiness.
${TARGET_USAGE}
Exit code: 0 every Application Synced and Healthy and every workload rolled out, 1 not
(each named with why), 2 bad arguments.`;

/** `npm run ops -- status`: contract 1.3.2, "list applications, read the state", and the pods. */
export const STATUS: CommandDefinition<typeof TARGET_OPTIONS> = {
  name: 'ops status',
  usage: USAGE,
  options: TARGET_OPTIONS,
  async run(values, _positionals, context) {
    const target = opsTarget(values, context);
    const { cluster, controllerNamespace, say } = target;
    say(`${target.environment.name} on ${cluster.server} (context ${cluster.context})`);
    const apps = await listApplications(cluster, controllerNamespace);
    const states: ApplicationState[] = apps.map((app) => applicationState(app, app.metadata.name, waveOf(app)));
    const paused = apps.map((app) => {
      const record = pauseRecord(app);
      return record === undefined ? '-' : `paused by ${record.by}: ${record.reason}`;
    });
    say('');
    say(
      apps.length === 0
        ? `no Application in ${controllerNamespace}: the environment is not bootstrapped on this cluster`
        : formatApplicationTable(states, [
            { header: 'REVISION', cells: apps.map(syncedRevision) },
            { header: 'LAST SYNC', cells: apps.map(lastOperation) },
            { header: 'AUTOMATED', cells: paused },
          ]),
    );
    const workloads: { application: string; strategy: string; workloads: WorkloadState[] }[] = [];
    for (const application of target.applications) {
      const states = await workloadStates(cluster, application.namespace, liveWorkloadsOf(application));
      workloads.push({ application: application.name, strategy: application.strategy.type, workloads: states });
      say('');
      say(`${application.name} (${application.strategy.type}) in namespace ${application.namespace}:`);
      for (const w of states) {
        const tag = w.tag === undefined ? (w.liveTag ?? '-') : `${w.liveTag ?? '-'}${w.liveTag === w.tag ? '' : ` (values: ${w.tag})`}`;
        say(`  Deployment ${w.deployment}  ${w.role}${w.serves ? ', serves' : ''}  ${w.rollout}  tag ${tag}`);
        for (const pod of w.pods) say(`    Pod ${pod.name}  ${pod.phase}  ${pod.ready ? 'ready' : `not ready: ${pod.reason}`}`);
      }
    }
    const problems = [
      ...(apps.length === 0 ? [`no Application in ${controllerNamespace}`] : []),
      ...states.filter((state) => !converged(state)).map((state) => `Application ${state.name} ${state.sync}/${state.health}${state.message ? `: ${state.message}` : ''}`),
      ...workloads.flatMap((entry) => entry.workloads.filter((w) => !w.rolledOut).map((w) => `Deployment ${w.namespace}/${w.deployment} (${entry.application}, ${w.role}): ${w.rollout}`)),
    ];
    say('');
    say(problems.length === 0 ? `${target.environment.name}: every Application Synced and Healthy, every workload rolled out` : `${target.environment.name}: not converged:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    target.result({
      environment: target.environment.name,
      context: cluster.context,
      applications: states.map((state, i) => ({ ...state, revision: syncedRevision(apps[i]!), lastSync: lastOperation(apps[i]!), paused: pauseRecord(apps[i]!) ?? null })),
      workloads,
      problems,
    });
    return problems.length === 0 ? 0 : 1;
  },
};
