// The gate's floor: node starting, reading and parsing the YAML files the gate reads
// (every .yaml below the folder given, into plain objects, with the parser and schema the
// gate reads them with: js-yaml, YAML 1.2's core schema; src/validation/manifests.ts).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { CORE_SCHEMA, loadAll } = require('js-yaml');

const dir = process.argv[2];
let objects = 0;
for (const file of fs.readdirSync(dir, { recursive: true }).filter((name) => name.endsWith('.yaml')).sort()) {
  loadAll(fs.readFileSync(path.join(dir, file), 'utf8'), (value) => {
    if (value != null) objects += 1;
  }, { schema: CORE_SCHEMA });
}
console.log(`${objects} objects`);
