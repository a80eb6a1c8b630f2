import { RefusedError, UsageError } from '../../base/errors';
import { waitForRollout, workloadStates } from '../../cluster/workloads';
import { TLS_CHECK_TIMEOUT_MS } from '../../contract/choices';
import { PORTS, SMOKE, WAITS_SECONDS } from '../../contract/contract';
import { checkHealth } from '../../smoke/http';
import { liveWorkloadsOf } from '../../environments/strategy-registry';
import { type CommandDefinition, seconds } from '../../tooling/cli';
import { checkEndpoints } from '../../verify/endpoints';
import { oneOf, TARGET_OPTIONS, TARGET_USAGE, opsTarget } from './target';

const STEPS = ['ready', 'health', 'endpoints'] as const;

const USAGE = `usage: npm run ops -- bluegreen --env <environment> --step ${STEPS.join('|')} [--app <application>] [options]

The live gates of a blue-green release (1.4, runbook "Blue-green release"), for an
application with the blue-green strategy:
  ready      before \`npm run switch\`: waits for the new unit's pods (the unit beside the
             active one) to roll out, within the rollout timeout (${WAITS_SECONDS.rolloutStatus} s)
  health     before \`npm run switch\`: forwards local port ${PORTS.application} to port ${PORTS.application} of one of the new
             unit's pods and calls ${SMOKE.paths.health}
  endpoints  after the switch is synced: the Service's endpoints are the active unit's pods,
             and only theirs
${TARGET_USAGE}
  --step <step>          ${STEPS.join(', ')} (required)
  --local-port <n>       the local port of the health step's forward (default ${PORTS.application}, the
                         contract's; 0 takes a free one)
  --timeout <s>          bound of the ready step (default ${WAITS_SECONDS.rolloutStatus})
Exit code: 0 the gate holds, 1 it does not (named, with why), 2 bad arguments.`;

const OPTIONS = { ...TARGET_OPTIONS, step: { type: 'string' }, 'local-port': { type: 'string' }, timeout: { type: 'string' } } as const;

/** `npm run ops -- bluegreen`: the checks between the blue-green steps. */
export const BLUEGREEN: CommandDefinition<typeof OPTIONS> = {
  name: 'ops bluegreen',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    const step = oneOf(values.step, STEPS, '--step');
    const timeout = seconds(values.timeout, '--timeout', WAITS_SECONDS.rolloutStatus);
    const localPort = values['local-port'] === undefined ? PORTS.application : Number(values['local-port']);
    if (!Number.isInteger(localPort) || localPort < 0 || localPort > 65535) throw new UsageError(`--local-port "${values['local-port']}" must be a port number from 0 to 65535`);
    const target = opsTarget(values, context, true);
    const application = target.applications[0]!;
    if (application.strategy.type !== 'blue-green') {
      throw new RefusedError(`${target.environment.name}: ${application.name} uses the ${application.strategy.type} strategy, not blue-green`);
    }
    const workloads = liveWorkloadsOf(application);
    const { cluster, say } = target;
    const finish = (ok: boolean, detail: string) => {
      say(`bluegreen ${step}: ${ok ? 'PASS' : 'FAIL'}: ${detail}`);
      target.result({ environment: target.environment.name, application: application.name, step, passed: ok, detail });
      return ok ? 0 : 1;
    };
    if (step === 'endpoints') {
      try {
        return finish(true, await checkEndpoints(cluster, application.namespace, application.name, workloads));
      } catch (error) {
        return finish(false, (error as Error).message);
      }
    }
    const fresh = workloads.find((w) => !w.serves);
    if (fresh === undefined) {
      throw new RefusedError(`${target.environment.name}: only ${workloads[0]!.role} (active) runs for ${application.name}: release the new version beside it first (npm run release)`);
    }
    if (step === 'ready') {
      const rollout = await waitForRollout(cluster, application.namespace, [fresh], timeout, say);
      return finish(rollout.ok, rollout.ok ? `Deployment ${fresh.deployment} (${fresh.role}, ${fresh.tag}): ${rollout.state}` : rollout.reason!);
    }
    const [state] = await workloadStates(cluster, application.namespace, [fresh]);
    const pod = state?.pods.find((p) => p.ready);
    if (pod === undefined) return finish(false, `no ready pod of Deployment ${fresh.deployment} (${fresh.role}): run --step ready first`);
    const forward = await cluster.portForward(application.namespace, pod.name, PORTS.application, localPort);
    try {
      say(`forwarding 127.0.0.1:${forward.localPort} -> Pod ${application.namespace}/${pod.name}:${PORTS.application}`);
      const signal = AbortSignal.timeout(TLS_CHECK_TIMEOUT_MS);
      const answer = await checkHealth(`http://127.0.0.1:${forward.localPort}`, signal);
      return finish(true, `GET ${SMOKE.paths.health} on ${fresh.role}'s Pod ${pod.name}: ${answer}`);
    } catch (error) {
      return finish(false, `GET ${SMOKE.paths.health} on ${fresh.role}'s Pod ${pod.name}: ${(error as Error).message}`);
    } finally {
      await forward.close();
    }
  },
};
