import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { loadEnvironments } from '../environments';
import { ConfigError, isArgumentError } from '../errors';
import { runGate } from '../validation/gate';
import { RULES } from '../validation/policy';
import { formatJson, formatText } from '../validation/report';

const FORMATS = ['text', 'json'] as const;

const USAGE = `usage: npm run validate [-- --dir <dir>] [-- --format text|json] [-- --rules]

Validates every object under <dir>/<environment>/ (default: dist) against the Kubernetes 1.28
and CRD schemas in schemas/, then applies the policy rules. Prints one line per finding,
the exemptions in force and a summary; exits 1 on any finding.
  --dir      folder with one sub-folder per environment (default: dist)
  --format   text (default) or json
  --rules    list the rules and their reasons, then exit`;

function main(argv: readonly string[]): number {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      dir: { type: 'string', default: 'dist' },
      format: { type: 'string', default: 'text' },
      rules: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.rules) {
    for (const rule of RULES) console.log(`${rule.name}: ${rule.reason}`);
    return 0;
  }
  const format = values.format as (typeof FORMATS)[number];
  if (!FORMATS.includes(format)) {
    console.error(`validate: --format ${JSON.stringify(values.format)} must be one of ${FORMATS.join(', ')}`);
    console.error(USAGE);
    return 2;
  }
  const result = runGate({ dir: path.resolve(values.dir), environments: loadEnvironments() });
  console.log(format === 'json' ? formatJson(result) : formatText(result).join('\n'));
  return result.findings.length > 0 ? 1 : 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError || isArgumentError(error) || (error instanceof Error && 'code' in error && error.code === 'ENOENT')) {
    console.error(`validate: ${error.message}`);
    if (isArgumentError(error)) console.error(USAGE);
    process.exitCode = 2;
  } else {
    throw error;
  }
}
