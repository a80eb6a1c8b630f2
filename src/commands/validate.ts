import * as fs from 'node:fs';
import * as path from 'node:path';
import { RENDERED_DIR } from '../contract/layout';
import { loadEnvironments } from '../environments';
import { readValuesTexts } from '../environments/values-file';
import { UsageError } from '../base/errors';
import { type CommandDefinition } from '../tooling/cli';
import { runGate } from '../validation/gate';
import { RULES } from '../validation/policy';
import { formatJson, formatText } from '../validation/report';
import { KUBERNETES_VERSIONS } from '../validation/schemas';

const FORMATS = ['text', 'json'] as const;

const USAGE = `usage: npm run validate [-- [--dir <dir>] [--format text|json] [--rules]]

Validates every object under <dir>/<environment>/ (default: dist) against the Kubernetes
schemas of both ends of the supported range (${KUBERNETES_VERSIONS.join(' and ')}; unknown fields
refused) and the CRD schemas in schemas/, then applies the policy rules. Prints one line per finding,
the exemptions in force and a summary. Exit code: 0 no finding, 1 a finding or no
object found at all, 2 bad arguments.
  --dir      folder with one sub-folder per environment (default: dist)
  --format   text (default) or json
  --rules    list the rules and their reasons, then exit`;

const OPTIONS = {
  dir: { type: 'string' },
  format: { type: 'string', default: 'text' },
  rules: { type: 'boolean', default: false },
} as const;

/** `npm run validate`: the gate over a rendered folder. */
export const VALIDATE: CommandDefinition<typeof OPTIONS> = {
  name: 'validate',
  usage: USAGE,
  options: OPTIONS,
  run(values, _positionals, { root, out, err }) {
    if (values.rules) {
      for (const rule of RULES) out(`${rule.name}: ${rule.reason}\n`);
      return 0;
    }
    const format = values.format as (typeof FORMATS)[number];
    if (!FORMATS.includes(format)) {
      throw new UsageError(`--format ${JSON.stringify(values.format)} must be one of ${FORMATS.join(', ')}`);
    }
    // dist/ of the project root by default; an explicit --dir resolves against the current folder.
    const dir = values.dir === undefined ? path.join(root, RENDERED_DIR) : path.resolve(values.dir);
    if (!fs.existsSync(dir)) throw new UsageError(`--dir ${JSON.stringify(values.dir ?? RENDERED_DIR)} does not exist`);
    const result = runGate({ dir, environments: loadEnvironments(readValuesTexts(root)) });
    out(`${format === 'json' ? formatJson(result) : formatText(result).join('\n')}\n`);
    if (result.objects === 0) {
      err(`validate: no object found under ${values.dir ?? RENDERED_DIR}/<environment>/*.yaml; nothing was checked\n`);
      return 1;
    }
    return result.findings.length > 0 ? 1 : 0;
  },
};
