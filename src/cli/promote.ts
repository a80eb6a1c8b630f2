import { parseArgs } from 'node:util';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../environments';
import { applyTagChange, planPromotion } from '../release/release';
import { describeResult } from '../release/report';
import { projectRoot, runCommand, UsageError } from '../tooling/cli';

const USAGE = `usage: npm run promote -- --from <environment> --to <next environment>

Copies the version running in --from (blue-green: the active unit's tag) to --to, the
next environment in the order ${ENVIRONMENT_ORDER.join(' -> ')}, the way
\`npm run release\` would. Skips, backward moves and the same environment are refused.`;

function main(argv: readonly string[]): number {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.from === undefined) throw new UsageError('--from <environment> is required');
  if (values.to === undefined) throw new UsageError('--to <environment> is required');
  const change = planPromotion(loadEnvironments(), values.from, values.to);
  process.stdout.write(describeResult(applyTagChange(projectRoot(), change)));
  return 0;
}

runCommand('promote', USAGE, main);
