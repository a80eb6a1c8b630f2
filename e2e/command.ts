import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';
import { type CommandDefinition, required, seconds } from '../src/tooling/cli';
import { ENVIRONMENT_ORDER } from '../src/contract/contract';
import { runE2e } from './harness';
import { ISOLATED_VARIABLE, runIsolated, whyNotIsolated } from './isolation';
import { CLUSTER_COMPONENTS, ensureToolchain } from '../toolchain';

const USAGE = `usage: npm run e2e -- --env <environment> [--report <file.json>] [--timeout <seconds>] [--settle <seconds>] [--no-dry-run] [--keep] [--age-key <file>] [--exec <command>] [--exec-timeout <seconds>]

Builds (once, cached in ~/.cache/platform-gitops) and starts a Kubernetes control plane,
kwok and Argo CD on loopback, serves this checkout's committed dist/ and secrets/ over
SSH, bootstraps the environment as the Pulumi program does, and watches every
Application sync, wave by wave, until all are Synced and Healthy; then server-side
dry-runs every environment's objects. docs/e2e.md says what is real and what stands in.
  --env         ${ENVIRONMENT_ORDER.join(', ')}
  --report      write the result as JSON to this file
  --timeout     seconds the Applications may take to converge (default 600)
  --settle      end the run, not converged, once every Application that has not
                converged has kept the same state this many seconds (30 at least)
                and every other one has converged (default: wait to the timeout);
                a run that finds an error no retry mends then stops only once the
                others have converged, stopped or kept their state as long
  --no-dry-run  skip the server-side dry-run of every environment
  --keep        keep the run folder (logs, kubeconfig, certificates)
  --age-key     age key file for SOPS (default ~/.config/platform-gitops/age/<env>.key)
  --exec        once every Application has converged, run this bash command in the
                checkout as an operator of npm run ops (KUBECONFIG: a member of the group
                the bootstrap grants its roles; E2E_ADMIN_KUBECONFIG: the administrator),
                its output streamed; the run fails when it fails
  --exec-timeout  seconds the command may run (default 1800)
Run as root, it runs in network and PID namespaces of its own (ports of its own, nothing
left running after it; ${ISOLATED_VARIABLE}=1 runs it in the caller's).
Exit code: 0 converged and accepted, 1 not, 2 usage error.`;

const OPTIONS = {
  env: { type: 'string' },
  report: { type: 'string' },
  timeout: { type: 'string', default: '600' },
  settle: { type: 'string' },
  'no-dry-run': { type: 'boolean', default: false },
  keep: { type: 'boolean', default: false },
  'age-key': { type: 'string' },
  exec: { type: 'string' },
  'exec-timeout': { type: 'string', default: '1800' },
} as const;

/**
 * `npm run e2e`: the committed platform converging on a real control plane and Argo CD
 * (docs/e2e.md). Its own bundle (e2e/cli.ts): the product's commands never
 * load the harness.
 */
export const E2E: CommandDefinition<typeof OPTIONS> = {
  name: 'e2e',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, { root, out }) {
    const environment = required(values.env, '--env');
    const timeoutSeconds = seconds(values.timeout, '--timeout', 600);
    const settleSeconds = seconds(values.settle, '--settle');
    const execTimeoutSeconds = seconds(values['exec-timeout'], '--exec-timeout', 1800);
    if (whyNotIsolated() === undefined) {
      // The run in network and PID namespaces of its own (e2e/isolation.ts): ports of its own
      // beside another run, and nothing it started outlives it. The toolchain is built here,
      // where the network is.
      try {
        ensureToolchain(CLUSTER_COMPONENTS, root);
      } catch (error) {
        if (!(error instanceof E2eError)) throw error;
        out(`e2e ${environment}: ${error.message}\n`);
        return 1;
      }
      return runIsolated([process.execPath, path.join(root, 'scripts', 'run.cjs'), 'e2e', ...commandLine(values)], process.cwd());
    }
    try {
      const report = await runE2e({
        environment,
        projectRoot: root,
        timeoutSeconds,
        ...(settleSeconds === undefined ? {} : { settleSeconds }),
        dryRun: !values['no-dry-run'],
        keep: values.keep === true,
        ...(values.exec !== undefined ? { exec: values.exec, execTimeoutSeconds } : {}),
        log: (line) => out(`${line}\n`),
        ...(values['age-key'] !== undefined ? { ageKeyFile: path.resolve(values['age-key']) } : {}),
      });
      if (values.report !== undefined) fs.writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
      return report.passed ? 0 : 1;
    } catch (error) {
      if (error instanceof E2eError) return 1; // the harness has printed what failed
      throw error;
    }
  },
};

/** The options again, as the isolated run reads them (paths made absolute). */
export function commandLine(values: { [K in keyof typeof OPTIONS]?: string | boolean }): string[] {
  const args: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === false) continue;
    const resolved = name === 'report' || name === 'age-key' ? path.resolve(String(value)) : value;
    args.push(...(resolved === true ? [`--${name}`] : [`--${name}`, String(resolved)]));
  }
  return args;
}
