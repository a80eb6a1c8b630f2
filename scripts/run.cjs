// `node scripts/run.cjs <entry> [args...]`: make sure build/ is current, then run
// build/<entry>.js in this same process with the remaining arguments. A build that fails
// (a syntax error in src/) prints esbuild's message, never a stack trace, and exits 1.
'use strict';
const path = require('node:path');
const { BUILD_DIR, ensureBuilt } = require('./build.cjs');

const [entry] = process.argv.splice(2, 1);
if (!entry) {
  console.error('usage: node scripts/run.cjs <entry> [args...]');
  process.exit(2);
}
try {
  ensureBuilt();
} catch (error) {
  console.error(`build: ${error && error.message ? error.message : String(error)}`);
  process.exit(1);
}
require(path.join(BUILD_DIR, `${entry}.js`));
