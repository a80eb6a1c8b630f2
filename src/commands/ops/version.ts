import { workloadStates } from '../../cluster/workloads';
import { TLS_CHECK_TIMEOUT_MS, VERSION_FILE } from '../../contract/choices';
import { liveWorkloadsOf } from '../../environments/strategy-registry';
import type { CommandDefinition } from '../../tooling/cli';
import { TARGET_OPTIONS, TARGET_USAGE, opsTarget } from './target';

const USAGE = `usage: npm run ops -- version --env <environment> [--app <application>] [options]

Contract 1.3.3, "the new version is verified by listing pods and reading a version file
inside the application container": lists each application's pods by workload and reads
\`${VERSION_FILE.name}\` in the container's working directory (${VERSION_FILE.workingDir}) with an exec, then
compares it with the tag the values file declares for that workload (blue-green: each
unit's own; Flagger's primary runs the tag it last promoted, shown, not compared).
${TARGET_USAGE}
Exit code: 0 every pod runs the declared version, 1 a pod does not (or its file cannot be
read, or a workload has no pod), 2 bad arguments.`;

/** One pod's version, as read. */
interface PodVersion {
  readonly application: string;
  readonly deployment: string;
  readonly pod: string;
  /** The tag the values file declares for its workload; null where a controller decides. */
  readonly declared: string | null;
  /** The version file's content, or null when it could not be read. */
  readonly read: string | null;
  readonly problem?: string;
}

/** `npm run ops -- version`: the version each pod runs, read inside its container. */
export const VERSION: CommandDefinition<typeof TARGET_OPTIONS> = {
  name: 'ops version',
  usage: USAGE,
  options: TARGET_OPTIONS,
  async run(values, _positionals, context) {
    const target = opsTarget(values, context);
    const { cluster, say } = target;
    const pods: PodVersion[] = [];
    const problems: string[] = [];
    for (const application of target.applications) {
      for (const workload of await workloadStates(cluster, application.namespace, liveWorkloadsOf(application))) {
        if (!workload.exists || (workload.replicas > 0 && workload.pods.length === 0)) {
          problems.push(`${application.name}: Deployment ${workload.namespace}/${workload.deployment} has no pod (${workload.rollout})`);
          continue;
        }
        for (const pod of workload.pods) {
          const declared = workload.tag ?? null;
          let read: string | null = null;
          let problem: string | undefined;
          try {
            const result = await cluster.exec(application.namespace, pod.name, application.name, ['cat', VERSION_FILE.name], TLS_CHECK_TIMEOUT_MS);
            if (result.ok) read = result.stdout.trim();
            else problem = `cannot read ${VERSION_FILE.workingDir}/${VERSION_FILE.name}: ${(result.stderr || result.message).trim()}`;
          } catch (error) {
            problem = (error as Error).message;
          }
          if (problem === undefined && declared !== null && read !== declared) problem = `runs ${read}, the values file declares ${declared}`;
          pods.push({ application: application.name, deployment: workload.deployment, pod: pod.name, declared, read, ...(problem === undefined ? {} : { problem }) });
          say(`${application.name}  Deployment ${workload.deployment} (${workload.role})  Pod ${pod.name}  version ${read ?? '?'}${declared === null ? '' : `  declared ${declared}`}${problem === undefined ? '' : `  MISMATCH: ${problem}`}`);
          if (problem !== undefined) problems.push(`Pod ${application.namespace}/${pod.name}: ${problem}`);
        }
      }
    }
    say(problems.length === 0 ? `${target.environment.name}: every pod runs the version its values file declares` : `${target.environment.name}: version check failed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    target.result({ environment: target.environment.name, pods, problems });
    return problems.length === 0 ? 0 : 1;
  },
};
