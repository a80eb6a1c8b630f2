// synth's second thread (src/render/parallel.ts): loads build/render/worker.js with its code
// cache and renders the environments the main thread sends it.
'use strict';
const path = require('node:path');
const { BUILD_DIR } = require('./build.cjs');
const { compileWithCodeCache } = require('./code-cache.cjs');

const bundle = compileWithCodeCache(path.join(BUILD_DIR, 'render', 'worker.js'));
bundle.run(module).serveRenderJob(() => bundle.saveIfStale());
