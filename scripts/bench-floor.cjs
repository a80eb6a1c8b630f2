// The benchmark's floor: node loading cdk8s-plus-28 and synthesizing one Deployment.
'use strict';
const { App, Chart } = require('cdk8s');
const kplus = require('cdk8s-plus-28');

const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'floor');
new kplus.Deployment(chart, 'deployment', { containers: [{ image: 'registry.example.com/platform/webapp:v1.0.0' }] });
app.synth();
