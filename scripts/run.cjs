// `node scripts/run.cjs <entry> [args...]`: make sure build/ is current, then run
// build/<entry>.js in this same process with the remaining arguments.
'use strict';
const path = require('node:path');
const { BUILD_DIR, ensureBuilt } = require('./build.cjs');

const [entry] = process.argv.splice(2, 1);
if (!entry) {
  console.error('usage: node scripts/run.cjs <entry> [args...]');
  process.exit(2);
}
ensureBuilt();
require(path.join(BUILD_DIR, `${entry}.js`));
