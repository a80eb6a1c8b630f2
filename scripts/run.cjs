// `node scripts/run.cjs <command> [args...]` (what `npm run <command>` runs): make sure
// build/ is current, then run the bundle of the command (scripts/build.cjs: build/e2e.js for
// e2e, build/main.js for every other) in this same process; the bundle runs the command its
// first argument names. A build that fails (a syntax error in src/) prints esbuild's
// message, never a stack trace, and exits 1.
'use strict';
// First, before loading anything that may need a newer Node: refuse an unsupported one.
const { unsupportedNode } = require('./runtime.cjs');
const unsupported = unsupportedNode(process.versions.node, process.execPath);
if (unsupported !== undefined) {
  console.error(unsupported);
  process.exit(1);
}
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');
const { BUILD_DIR, bundleOf, ensureBuilt } = require('./build.cjs');

/**
 * Run a bundle as a CommonJS module with V8's code cache kept beside it, one per command
 * (`build/<bundle>.js.<command>.cache`: a cache holds the functions the run that wrote it
 * compiled, and each command runs other functions of the same bundle). Compiling a 4 MB
 * bundle costs about a tenth of a second per start; with the cache V8 deserializes the
 * compiled code instead. Node's own compile cache (`module.enableCompileCache`, 22.1 and
 * later) was measured against this on Node 24 and is slower for this program: it stores the
 * code V8 compiled when the bundle was loaded (0.95 MB for build/main.js), not the functions
 * a command compiled lazily while it ran (2.8 MB for synth), so a synth compiles those again
 * on every start: 0.65 s of CPU against 0.55 s (docs/performance.md).
 *
 * V8 checks a cache against the length of the source only, so a cache written for another
 * build of the same length would run that build's code. A run writes its cache when it
 * ends, possibly after another command rebuilt build/ meanwhile; so the cache file starts
 * with the line that identifies the build it was compiled from (the bundle's first line,
 * `// build <fingerprint>`, scripts/build.cjs), and one of another build counts as absent.
 *
 * An absent or rejected cache is written again once the command has run, so that it holds
 * the functions the command compiled (tmp file + rename: commands running side by side never
 * read half a cache). A run that stopped early (`--help`, a refusal, an error: exit 1)
 * compiled only part of them, so its cache is marked partial (`<cache>.partial`) and
 * written again after the next run that completes: otherwise every later run would compile
 * the rest again (a synth 20 ms slower). A command line that could not be read (exit 2)
 * writes none.
 */
function runWithCodeCache(file, cacheFile, args) {
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
      // A command line that could not be read (exit 2: an unknown command or option)
      // compiled next to nothing: no cache, the next run writes one.
      if (code === 2) return;
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

const command = process.argv[2];
try {
  ensureBuilt();
} catch (error) {
  console.error(`build: ${error && error.message ? error.message : String(error)}`);
  process.exit(1);
}
// A missing or unknown command goes to the main bundle too, which lists the commands.
const file = path.join(BUILD_DIR, `${bundleOf(command ?? '')}.js`);
if (process.env.PLATFORM_GITOPS_DEBUG) {
  // A bug's stack trace in src/ terms: node maps build/<bundle>.js.map for modules it loads
  // itself (not for vm.Script), so the debug run skips the code cache.
  process.setSourceMapsEnabled(true);
  require(file);
} else {
  const cacheFile = command !== undefined && /^[a-z][a-z0-9-]*$/.test(command) ? `${file}.${command}.cache` : undefined;
  if (cacheFile === undefined) require(file);
  else runWithCodeCache(file, cacheFile, process.argv.slice(3));
}
