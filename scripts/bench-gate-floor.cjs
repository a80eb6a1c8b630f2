// The gate's floor: node starting, reading and parsing the YAML files the gate reads
// (every .yaml below the folder given, as the yaml library's documents, as plain objects).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { parseAllDocuments } = require('yaml');

const dir = process.argv[2];
let objects = 0;
for (const file of fs.readdirSync(dir, { recursive: true }).filter((name) => name.endsWith('.yaml')).sort()) {
  for (const document of parseAllDocuments(fs.readFileSync(path.join(dir, file), 'utf8'))) {
    if (document.toJS() != null) objects += 1;
  }
}
console.log(`${objects} objects`);
