// Runs a bundle of build/ as a CommonJS module with V8's code cache kept beside it
// (`<bundle>.cache`), for scripts/run.cjs (the commands) and scripts/render-worker.cjs
// (synth's second thread).
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

/**
 * Compile `file` with its code cache. Compiling a 4 MB bundle costs about a tenth of a second
 * per start; with the cache V8 deserializes the compiled code instead. Node 22.1 does this by
 * itself (`module.enableCompileCache`); Node 20, which the project supports, does not, so this
 * uses `vm.Script`'s `cachedData` the same way. V8 checks a cache against the source and
 * rejects one written for another build; `saveIfStale` then writes it again, best called once
 * the work has run so that the cache holds the functions it compiled (tmp file + rename:
 * processes running side by side never read half a cache).
 */
function compileWithCodeCache(file) {
  const cacheFile = `${file}.cache`;
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, 'utf8')), { filename: file, cachedData });
  let stale = cachedData === undefined || script.cachedDataRejected === true;
  return {
    /** Run the bundle as a module whose parent is `parent`; returns its exports. */
    run(parent) {
      const entryModule = new Module(file, parent);
      entryModule.filename = file;
      entryModule.paths = Module._nodeModulePaths(path.dirname(file));
      const compiled = script.runInThisContext();
      compiled.call(entryModule.exports, entryModule.exports, Module.createRequire(file), entryModule, file, path.dirname(file));
      return entryModule.exports;
    },
    /** Write the cache when there was none or V8 rejected it. */
    saveIfStale() {
      if (!stale) return;
      stale = false;
      const temporary = `${cacheFile}.${process.pid}.${require('node:worker_threads').threadId}`;
      try {
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, cacheFile);
      } catch {
        fs.rmSync(temporary, { force: true });
      }
    },
  };
}

module.exports = { compileWithCodeCache };
