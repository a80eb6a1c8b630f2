// Compiles src/ to build/ with esbuild (no type-check: `npm run typecheck` does that).
// Synth runs compiled JavaScript because a TypeScript loader costs ~1 s per start.
// build/ is rebuilt only when the inputs' content hash changes, so repeated synths pay
// for hashing (a few ms), not for compiling.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BUILD_DIR = path.join(ROOT, 'build');
const STAMP = path.join(BUILD_DIR, '.inputs-sha256');

/** Entry points: src/main.ts (synth) and every command in src/cli/. */
function entryPoints() {
  const cliDir = path.join(ROOT, 'src', 'cli');
  const cli = fs.existsSync(cliDir)
    ? fs.readdirSync(cliDir).filter((f) => f.endsWith('.ts')).map((f) => `src/cli/${f}`)
    : [];
  return ['src/main.ts', ...cli].sort();
}

function inputsHash() {
  const hash = createHash('sha256');
  const files = fs
    .readdirSync(path.join(ROOT, 'src'), { recursive: true })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join('src', f))
    .sort();
  for (const file of [...files, 'scripts/build.mjs', 'tsconfig.json', 'package-lock.json']) {
    hash.update(file).update('\0');
    if (fs.existsSync(path.join(ROOT, file))) hash.update(fs.readFileSync(path.join(ROOT, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Build when the inputs changed since the last build; returns whether it built. */
export async function ensureBuilt({ force = false } = {}) {
  const digest = inputsHash();
  if (!force && fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === digest) return false;
  const esbuild = await import('esbuild');
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: entryPoints(),
    outbase: 'src',
    outdir: BUILD_DIR,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  fs.writeFileSync(STAMP, digest);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await ensureBuilt({ force: process.argv.includes('--force') });
}
