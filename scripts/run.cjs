// `node scripts/run.cjs <entry> [args...]`: make sure build/ is current, then run
// build/<entry>.js in this same process with the remaining arguments. A build that fails
// (a syntax error in src/) prints esbuild's message, never a stack trace, and exits 1.
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');
const { BUILD_DIR, ensureBuilt } = require('./build.cjs');

/**
 * Run a bundle as a CommonJS module with V8's code cache kept beside it
 * (`build/<entry>.js.cache`). Compiling a 4 MB bundle costs about a tenth of a second per
 * start; with the cache V8 deserializes the compiled code instead. Node 22.1 does this by
 * itself (`module.enableCompileCache`); Node 20, which the project supports, does not, so
 * this uses `vm.Script`'s `cachedData` the same way.
 *
 * V8 checks a cache against the length of the source only, so a cache written for another
 * build of the same length would run that build's code. A run writes its cache when it
 * ends, possibly after another command rebuilt build/ meanwhile; so the cache file starts
 * with the line that identifies the build it was compiled from (the bundle's first line,
 * `// build <fingerprint>`, scripts/build.cjs), and one of another build counts as absent.
 *
 * An absent or rejected cache is written again once the command has run, so that it holds
 * the functions the command compiled (tmp file + rename: commands running side by side never
 * read half a cache). A run that stopped early (`--help`, a refusal, an error: any exit code
 * but 0) compiled only part of them, so its cache is marked partial (`<cache>.partial`) and
 * written again after the next run that completes: otherwise every later run would compile
 * the rest again (a synth 20 ms slower).
 */
function runWithCodeCache(file, args) {
  const cacheFile = `${file}.cache`;
  const partialMark = `${cacheFile}.partial`;
  const source = fs.readFileSync(file, 'utf8');
  const buildId = source.slice(0, source.indexOf('\n') + 1);
  // The id, padded to 8 bytes: V8 copies cached data that does not start 8-byte aligned.
  const header = Buffer.alloc(Math.ceil(buildId.length / 8) * 8);
  header.write(buildId, 'latin1');
  let cachedData;
  try {
    const cache = fs.readFileSync(cacheFile);
    if (buildId !== '' && cache.subarray(0, header.length).equals(header)) cachedData = cache.subarray(header.length);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  const stale = cachedData === undefined || script.cachedDataRejected;
  const partial = !stale && fs.existsSync(partialMark);
  if (stale || partial) {
    process.once('exit', (code) => {
      const complete = code === 0 && !args.includes('--help') && !args.includes('-h');
      if (partial && !complete) return;
      const temporary = `${cacheFile}.${process.pid}`;
      try {
        fs.writeFileSync(temporary, Buffer.concat([header, script.createCachedData()]));
        fs.renameSync(temporary, cacheFile);
        if (complete) fs.rmSync(partialMark, { force: true });
        else fs.writeFileSync(partialMark, '');
      } catch {
        fs.rmSync(temporary, { force: true });
      }
    });
  }
  const entryModule = new Module(file, module);
  entryModule.filename = file;
  entryModule.paths = Module._nodeModulePaths(path.dirname(file));
  const compiled = script.runInThisContext();
  compiled.call(entryModule.exports, entryModule.exports, Module.createRequire(file), entryModule, file, path.dirname(file));
}

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
if (process.env.PLATFORM_GITOPS_DEBUG) {
  // A bug's stack trace in src/ terms: node maps build/<entry>.js.map for modules it loads
  // itself (not for vm.Script), so the debug run skips the code cache.
  process.setSourceMapsEnabled(true);
  require(file);
} else {
  runWithCodeCache(file, process.argv.slice(2));
}
