import * as fs from 'node:fs';
import * as path from 'node:path';
import { valuesJsonSchemas } from '../environments/json-schema';
import { type CommandDefinition } from '../tooling/cli';

const USAGE = `usage: npm run schemas [-- --check]

Writes the JSON Schemas of the values files (src/environments/*.schema.json), generated
from the zod schemas, for editors (the yaml-language-server modeline of each values file).
  --check   write nothing; fail, naming the files, when the committed schemas differ
Exit code: 0 done or up to date, 1 a schema differs (--check), 2 bad arguments.`;

const OPTIONS = { check: { type: 'boolean' } } as const;

/** `npm run schemas`: write, or check, the values files' JSON Schemas. */
export const SCHEMAS: CommandDefinition<typeof OPTIONS> = {
  name: 'schemas',
  usage: USAGE,
  options: OPTIONS,
  run(values, _positionals, { root, out, err }) {
    const stale = [...valuesJsonSchemas()].filter(([file, text]) => {
      const target = path.join(root, file);
      return !fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== text;
    });
    if (values.check) {
      for (const [file] of stale) err(`schemas: ${file} is not what the zod schema generates; run \`npm run schemas\` and commit\n`);
      return stale.length > 0 ? 1 : 0;
    }
    for (const [file, text] of stale) fs.writeFileSync(path.join(root, file), text);
    out(`${stale.length} schema file(s) written\n`);
    return 0;
  },
};
