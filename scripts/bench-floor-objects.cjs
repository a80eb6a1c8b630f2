// The benchmark's same-objects floor: what cdk8s itself costs for synth's output. Node
// loads cdk8s and synthesizes exactly the committed objects, one chart per rendered file
// with one ApiObject per object, written as YAML by cdk8s' own App.synth: no values, no
// validation, no constructs. argv[2]: a JSON file, { "<environment>/<file>": [objects] },
// written by `npm run bench` from dist/ (so the floor pays JSON.parse, not YAML parsing);
// argv[3]: the output folder.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { ApiObject, App, Chart } = require('cdk8s');

const files = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const environments = new Map();
for (const [file, objects] of Object.entries(files)) {
  const [environment, name] = file.split('/');
  if (!environments.has(environment)) environments.set(environment, []);
  environments.get(environment).push([name.replace(/\.yaml$/, ''), objects]);
}
for (const [environment, charts] of environments) {
  const app = new App({ outdir: path.join(process.argv[3], environment), outputFileExtension: '.yaml' });
  for (const [name, objects] of charts) {
    const chart = new Chart(app, name);
    objects.forEach((object, index) => new ApiObject(chart, `o${index}`, object));
  }
  app.synth();
}
