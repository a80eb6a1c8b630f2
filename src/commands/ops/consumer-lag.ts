import { UsageError } from '../../base/errors';
import { type PartitionLag, readConsumerLag } from '../../cluster/consumer-lag';
import { SMOKE } from '../../contract/contract';
import { DEFAULT_BOOTSTRAP_SERVERS, SMOKE_VARIABLES } from '../../contract/naming';
import type { CommandContext } from '../../tooling/cli';
import type { OpsTarget } from './target';

/** How `ops check --component broker --lag` is described in its usage. */
export const LAG_USAGE = `  --lag                  broker: instead of the checks, every consumer group's lag per topic and
                         partition, read through the broker (kafkajs admin, as
                         kafka-consumer-groups.sh --describe --all-groups) within ${SMOKE.stepTimeoutMs.broker / 1000} s, at
                         ${SMOKE_VARIABLES.bootstrapServers} (default ${DEFAULT_BOOTSTRAP_SERVERS}), with
                         ${SMOKE_VARIABLES.brokerUsername}/${SMOKE_VARIABLES.brokerPassword} (SCRAM-SHA-512) when set`;

/** One line per partition, the Kafka tool's columns. */
export function lagLine(lag: PartitionLag): string {
  return `${lag.group}  ${lag.topic}  ${lag.partition}  committed ${lag.committed ?? '-'}  end ${lag.end}  lag ${lag.lag ?? '-'}`;
}

/** `ops check --component broker --lag`: 0 when the lag could be read (whatever it is), 1 when the broker could not be. */
export async function showConsumerLag(target: OpsTarget, context: CommandContext): Promise<number> {
  const servers = (context.env[SMOKE_VARIABLES.bootstrapServers] || DEFAULT_BOOTSTRAP_SERVERS).split(',').map((server) => server.trim());
  const username = context.env[SMOKE_VARIABLES.brokerUsername] ?? '';
  const password = context.env[SMOKE_VARIABLES.brokerPassword] ?? '';
  if ((username === '') !== (password === '')) throw new UsageError(`${SMOKE_VARIABLES.brokerUsername} and ${SMOKE_VARIABLES.brokerPassword} must be set together (SCRAM-SHA-512) or not at all`);
  const environment = target.environment.name;
  target.say(`consumer lag in ${environment} through ${servers.join(',')}`);
  let lags: PartitionLag[];
  try {
    lags = await readConsumerLag({ bootstrapServers: servers, ...(username === '' ? {} : { sasl: { username, password } }) }, SMOKE.stepTimeoutMs.broker);
  } catch (error) {
    target.say(`FAIL consumer lag: ${(error as Error).message}`);
    target.result({ environment, component: 'broker', lag: null, passed: false, detail: (error as Error).message });
    return 1;
  }
  if (lags.length === 0) target.say('no consumer group has committed an offset');
  for (const lag of lags) target.say(lagLine(lag));
  target.result({ environment, component: 'broker', lag: lags, passed: true });
  return 0;
}
