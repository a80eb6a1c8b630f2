// `node scripts/run.mjs <entry> [args...]`: make sure build/ is current, then run
// build/<entry>.js in this same process with the remaining arguments.
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { BUILD_DIR, ensureBuilt } from './build.mjs';

const [entry] = process.argv.splice(2, 1);
if (!entry) {
  console.error('usage: node scripts/run.mjs <entry> [args...]');
  process.exit(2);
}
await ensureBuilt();
createRequire(import.meta.url)(path.join(BUILD_DIR, `${entry}.js`));
