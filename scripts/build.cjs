// Compiles src/ to build/ with esbuild (no type-check: `npm run typecheck` does that).
// Synth runs compiled JavaScript because a TypeScript loader costs ~1 s per start,
// bundled with its dependencies because resolving and compiling ~300 modules costs more.
// build/ is rebuilt only when an input changed: a repeated synth pays a few milliseconds of
// stat calls (path, size, modification time); when those differ (an edit, a checkout, a
// copy) the inputs' contents decide, so touching a file does not cost a compile.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const BUILD_DIR = path.join(ROOT, 'build');
const STAMP = path.join(BUILD_DIR, '.inputs');
const fingerprint = require('../src/base/fingerprint.cjs');

/**
 * The bundles, by name (build/<name>.js), and their entry points: `main`, every command of
 * the product (src/commands/index.ts, run by src/main.ts), and `e2e`, the e2e harness's
 * command, kept out of the product's bundle: src/ never imports e2e/.
 */
const BUNDLES = { main: 'src/main.ts', e2e: 'e2e/cli.ts' };

/** The bundle that runs `command`: its own when it has one (e2e), otherwise `main`. */
function bundleOf(command) {
  return command !== 'main' && Object.hasOwn(BUNDLES, command) ? command : 'main';
}

/** `.ts` files below `dir` (relative to ROOT). A walk of its own: `readdirSync(recursive)` takes longer (Node 24.22: 1.9 ms against 1.1 ms here). */
function typeScriptBelow(dir) {
  const files = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...typeScriptBelow(file));
    else if (entry.name.endsWith('.ts')) files.push(file);
  }
  return files;
}

/** TypeScript below src/, e2e/, pulumi/ and toolchain/ (the e2e bundle, and what the commands import from them). */
function inputFiles() {
  const sources = ['src', 'e2e', 'pulumi', 'toolchain']
    .filter((dir) => fs.existsSync(path.join(ROOT, dir)))
    .flatMap(typeScriptBelow)
    .sort();
  return [...sources, 'src/base/fingerprint.cjs', 'scripts/build.cjs', 'tsconfig.json', 'package-lock.json'];
}

/** The first line of every bundle: `// build <content fingerprint>`. */
function buildIdLine(content) {
  return `// build ${content}`;
}

function readStamp() {
  try {
    return JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return {};
  }
}

/** Build when an input changed since the last build; returns whether it built. */
function ensureBuilt({ force = false } = {}) {
  const files = inputFiles();
  const stat = fingerprint.statFingerprint(files, ROOT);
  const stamp = readStamp();
  if (!force && stamp.stat === stat) return false;
  const content = fingerprint.contentFingerprint(files, ROOT);
  if (!force && stamp.content === content) {
    fs.writeFileSync(STAMP, JSON.stringify({ stat, content }));
    return false;
  }
  const esbuild = require('esbuild');
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  esbuild.buildSync({
    absWorkingDir: ROOT,
    entryPoints: Object.entries(BUNDLES).map(([name, entry]) => ({ in: entry, out: name })),
    outdir: BUILD_DIR,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // Tools that must not be bundled: the compiler API and the bundler itself. And the smoke
    // test's database and broker clients, loaded from node_modules when smoke runs: bundled,
    // they were 2.4 MB of the 5.5 MB every command reads and compiles at its start (synth
    // 50 ms slower), and mssql's license comments and one regular expression are not ASCII,
    // which made V8 hold the whole bundle as two-byte text. The Kubernetes client library
    // likewise: only `ops` and `verify` load it.
    external: ['typescript', 'esbuild', 'vitest', 'mssql', 'kafkajs', '@kubernetes/client-node'],
    // Without whitespace and comments: a third smaller, and ASCII only (esbuild escapes
    // non-ASCII in code; comments were the only non-ASCII), so V8 holds the source as a
    // one-byte string. Names are kept, so a stack trace still reads; with
    // PLATFORM_GITOPS_DEBUG=1 scripts/run.cjs maps it back to src/ through build/*.js.map.
    minifyWhitespace: true,
    // The build's identity as the bundle's first line: scripts/run.cjs keeps it with V8's
    // code cache, since V8 itself checks a cache against the source's length only.
    banner: { js: buildIdLine(content) },
    charset: 'ascii',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  fs.writeFileSync(STAMP, JSON.stringify({ stat, content }));
  return true;
}

module.exports = { ROOT, BUILD_DIR, BUNDLES, bundleOf, ensureBuilt };

if (require.main === module) ensureBuilt({ force: process.argv.includes('--force') });
