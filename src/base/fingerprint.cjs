// Fingerprints of a set of files, for the caches that must notice a change: the build of
// the commands (scripts/build.cjs), the gate's compiled validators and the kubeconform
// schemas. CommonJS so that scripts/build.cjs, which runs before anything is compiled,
// requires the same code the TypeScript modules import.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/** Cheap: paths, sizes and modification times of `files` (relative to `root`). */
function statFingerprint(files, root) {
  const hash = crypto.createHash('sha256');
  for (const file of files) {
    const stat = fs.statSync(path.join(root, file), { throwIfNoEntry: false });
    hash.update(`${file}\0${stat ? `${stat.size}:${stat.mtimeMs}` : 'absent'}\0`);
  }
  return hash.digest('hex');
}

/** Exact: paths and contents of `files` (relative to `root`). */
function contentFingerprint(files, root) {
  const hash = crypto.createHash('sha256');
  for (const file of files) {
    const full = path.join(root, file);
    hash.update(`${file}\0`);
    hash.update(fs.existsSync(full) ? fs.readFileSync(full) : 'absent');
    hash.update('\0');
  }
  return hash.digest('hex');
}

module.exports = { statFingerprint, contentFingerprint };
