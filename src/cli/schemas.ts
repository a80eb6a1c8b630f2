import * as fs from 'node:fs';
import * as path from 'node:path';
import { valuesJsonSchemas } from '../environments/json-schema';
import { projectRoot } from '../base/project-root';
import { runCommand } from '../tooling/cli';

runCommand({
  name: 'schemas',
  usage: `usage: npm run schemas [-- --check]

Writes the JSON Schemas of the values files (src/environments/*.schema.json), generated
from the zod schemas, for editors (the yaml-language-server modeline of each values file).
  --check   write nothing; fail, naming the files, when the committed schemas differ
Exit code: 0 done or up to date, 1 a schema differs (--check), 2 bad arguments.`,
  options: { check: { type: 'boolean' } },
  run(values) {
    const root = projectRoot();
    const stale = [...valuesJsonSchemas()].filter(([file, text]) => {
      const target = path.join(root, file);
      return !fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== text;
    });
    if (values.check) {
      for (const [file] of stale) console.error(`schemas: ${file} is not what the zod schema generates; run \`npm run schemas\` and commit`);
      return stale.length > 0 ? 1 : 0;
    }
    for (const [file, text] of stale) fs.writeFileSync(path.join(root, file), text);
    console.log(`${stale.length} schema file(s) written`);
    return 0;
  },
});
