import { type CommandTable } from '../tooling/cli';

/**
 * Every command of the product, by the name `npm run <name>` gives it (package.json's script
 * `"<name>": "node scripts/run.cjs <name>"`): the one list of commands, which src/main.ts
 * runs. Each definition lives in its own module here and is loaded when it runs, so a synth
 * initializes no module of the smoke test's clients or the gate's validators.
 * `npm run e2e` is not a product command: it has a bundle of its own, e2e/cli.ts.
 */
export const COMMANDS = {
  synth: { summary: 'render every environment into dist/ (or check it)', load: () => import('./synth.js').then((module) => module.SYNTH) },
  validate: { summary: 'the schema and policy gate over a rendered folder', load: () => import('./validate.js').then((module) => module.VALIDATE) },
  schemas: { summary: "write (or check) the values files' JSON Schemas", load: () => import('./schemas.js').then((module) => module.SCHEMAS) },
  diff: { summary: 'the rendered change between two commits, or a commit and the working tree', load: () => import('./diff.js').then((module) => module.DIFF) },
  release: { summary: "set an environment's image tag, re-render, print the diff", load: () => import('./release.js').then((module) => module.RELEASE) },
  upgrade: { summary: "set an environment's infrastructure release version, re-render, print the diff", load: () => import('./upgrade.js').then((module) => module.UPGRADE) },
  promote: { summary: 'copy the version one environment runs to the next', load: () => import('./promote.js').then((module) => module.PROMOTE) },
  switch: { summary: 'blue-green: move traffic to the other unit', load: () => import('./switch.js').then((module) => module.SWITCH) },
  retire: { summary: 'blue-green: remove the unit that takes no traffic', load: () => import('./retire.js').then((module) => module.RETIRE) },
  rollback: { summary: 'back to the previous version, as a reviewed change', load: () => import('./rollback.js').then((module) => module.ROLLBACK) },
  publish: { summary: "package each application's chart and push it to an OCI registry", load: () => import('./publish.js').then((module) => module.PUBLISH) },
  smoke: { summary: 'the smoke test against a running application', load: () => import('./smoke.js').then((module) => module.SMOKE_TEST) },
  verify: { summary: 'post-deployment validation of one environment', load: () => import('./verify.js').then((module) => module.VERIFY) },
  ops: { summary: 'the live operations of an environment: status, drift, sync, verify, pause, resume', load: () => import('./ops/index.js').then((module) => module.OPS) },
  secrets: { summary: 'the SOPS-encrypted Secrets and their templates', load: () => import('./secrets.js').then((module) => module.SECRETS) },
  bench: { summary: 'synth and the gate against their floors', load: () => import('./bench.js').then((module) => module.BENCH) },
} as const satisfies CommandTable;
