import { parseArgs } from 'node:util';
import { loadEnvironments } from '../environments';
import { applyTagChange, planRelease } from '../release/release';
import { describeResult } from '../release/report';
import { projectRoot, runCommand, UsageError } from '../tooling/cli';

const USAGE = `usage: npm run release -- --env <environment> --tag v<major>.<minor>.<patch>

Sets the image tag of one environment in src/environments/<environment>.ts (blue-green:
the inactive unit, added when absent), validates every environment, re-renders dist/
and prints the rendered diff. Nothing is written when any check fails.`;

function main(argv: readonly string[]): number {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      env: { type: 'string' },
      tag: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.env === undefined) throw new UsageError('--env <environment> is required');
  if (values.tag === undefined) throw new UsageError('--tag v<major>.<minor>.<patch> is required');
  const change = planRelease(loadEnvironments(), values.env, values.tag);
  process.stdout.write(describeResult(applyTagChange(projectRoot(), change)));
  return 0;
}

runCommand('release', USAGE, main);
