import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, isArgumentError } from './errors';
import { checkSynthesized, synthesize } from './synth';

const USAGE = `usage: npm run synth [-- --check] [-- --outdir <dir>]

Renders every environment into <dir>/<environment>/ (default: dist, or $CDK8S_OUTDIR).
  --check   render to a temporary folder and fail, naming the files, if <dir> differs`;

function main(argv: readonly string[]): number {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      check: { type: 'boolean', default: false },
      outdir: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const outdir = path.resolve(values.outdir ?? process.env.CDK8S_OUTDIR ?? 'dist');
  if (values.check) {
    const differences = checkSynthesized({ outdir });
    if (differences.length > 0) {
      console.error(`${path.relative(process.cwd(), outdir) || outdir} is not what the code renders; run \`npm run synth\` and commit:`);
      for (const difference of differences) console.error(`  - ${difference}`);
      return 1;
    }
    console.log(`${path.relative(process.cwd(), outdir) || outdir} is up to date`);
    return 0;
  }
  synthesize({ outdir });
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError || isArgumentError(error)) {
    console.error(`synth: ${error.message}`);
    if (!(error instanceof ConfigError)) console.error(USAGE);
    console.error('dist/ was left unchanged.');
    process.exitCode = 1;
  } else {
    throw error;
  }
}
