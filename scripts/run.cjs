// `node scripts/run.cjs <entry> [args...]`: make sure build/ is current, then run
// build/<entry>.js in this same process with the remaining arguments, with V8's code cache
// (scripts/code-cache.cjs). A build that fails (a syntax error in src/) prints esbuild's
// message, never a stack trace, and exits 1.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { BUILD_DIR, ensureBuilt } = require('./build.cjs');
const { compileWithCodeCache } = require('./code-cache.cjs');

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
const file = path.join(BUILD_DIR, `${entry}.js`);
if (!fs.existsSync(file)) {
  console.error(`run: no command ${entry} (build/${entry}.js): the entries are src/main.ts and src/cli/*.ts`);
  process.exit(2);
}
const bundle = compileWithCodeCache(file);
process.once('exit', () => bundle.saveIfStale());
bundle.run(module);
