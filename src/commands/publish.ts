import * as fs from 'node:fs';
import * as path from 'node:path';
import { RefusedError, UsageError } from '../base/errors';
import { printable, redactCredentials } from '../base/printable';
import { withScratchDirectory } from '../base/scratch-directory';
import { git, hasCommittedHead } from '../base/git';
import { applicationChart } from '../artifact/application-chart';
import { chartReference, helmBinary, isLoopbackHost, loginForRun, parseRegistry, publishChart, type PublishSettings } from '../artifact/publish';
import { environmentNamed, selectApplication } from '../environments';
import { followedRegistry } from '../charts/gitops-applications';
import { RENDERED_DIR } from '../contract/layout';
import { chartVersionsPath } from '../synth/chart-versions';
import { type CommandDefinition, required } from '../tooling/cli';

const USAGE = `usage: npm run publish -- --env <environment> [--registry oci://<host>/<path>] [--app <application>] [--plain-http] [--ca-file <pem>]

Packages each application's chart of the environment (or the one --app names) with Helm
and pushes it to <registry>/<environment>/<application>: Chart.yaml with the version and
appVersion of its record, ${chartVersionsPath('<environment>')}, and the committed
${RENDERED_DIR}/<environment>/<application>.yaml, which its one template prints as it is. A version
already published with the same files is left as it is; one published with other files is
refused (a version names one content), and so is a dist/<environment> or a record with
changes that are not committed. The registry's credentials: REGISTRY_USERNAME and
REGISTRY_PASSWORD (a login for this run only), else Helm's registry login, else Docker's
config file. Helm is the toolchain's (built once by toolchain/build.sh helm).
  --registry     where to push; by default the registry the environment follows
                 (applicationSource.registry of its environment.yaml)
  --plain-http   talk HTTP, not HTTPS: only to a registry on a loopback address
  --ca-file      check the registry's certificate against this CA bundle (a private CA)
Exit code: 0 every chart published or already there, 1 refused (named), 2 bad arguments.`;

const OPTIONS = {
  env: { type: 'string' },
  app: { type: 'string' },
  registry: { type: 'string' },
  'plain-http': { type: 'boolean', default: false },
  'ca-file': { type: 'string' },
} as const;

/** `npm run publish`: the release artifact of contract 1.1 step 3, the versioned chart in an OCI registry. */
export const PUBLISH: CommandDefinition<typeof OPTIONS> = {
  name: 'publish',
  usage: USAGE,
  options: OPTIONS,
  run(values, _positionals, { root, env, out, err }) {
    const environment = environmentNamed(root, required(values.env, '--env <environment>'));
    const followed = followedRegistry(environment);
    const location = values.registry ?? followed;
    if (location === undefined) {
      throw new UsageError(`--registry oci://<host>/<path> is required: ${environment.name} follows the repository (its environment.yaml names no applicationSource.registry)`);
    }
    const registry = parseRegistry(location);
    if (values['plain-http'] && !isLoopbackHost(registry.host)) {
      throw new UsageError(`--plain-http goes only with a registry on a loopback address (localhost, 127.0.0.0/8, [::1]); ${registry.host} is not one: its traffic and credentials would cross the network unencrypted`);
    }
    if (values.registry !== undefined && followed !== undefined && parseRegistry(followed, 'applicationSource.registry').url !== registry.url) {
      // Publishing elsewhere is allowed (a mirror, a loopback address of the same registry), but
      // Argo CD installs this environment's charts from the registry its environment.yaml names.
      err(`note: ${registry.url} is not the registry ${environment.name} follows (${followed}, applicationSource.registry of its environment.yaml): Argo CD installs from that one\n`);
    }
    const caFile = values['ca-file'];
    if (caFile !== undefined && !fs.existsSync(caFile)) throw new UsageError(`--ca-file ${caFile} does not exist`);
    const applications = values.app === undefined ? environment.applications : [selectApplication(environment, values.app)];
    const username = env['REGISTRY_USERNAME'];
    const password = env['REGISTRY_PASSWORD'];
    if ((username === undefined) !== (password === undefined)) throw new UsageError('REGISTRY_USERNAME and REGISTRY_PASSWORD go together');
    // What is published is what git holds: a version is never given to content not committed.
    if (hasCommittedHead(root)) {
      for (const where of [`${RENDERED_DIR}/${environment.name}`, chartVersionsPath(environment.name)]) {
        const changed = git(root, ['status', '--porcelain', '--', where]);
        if (!changed.ok) throw new RefusedError(`git status ${where}: ${changed.stderr}`);
        if (changed.stdout.trim() !== '') throw new RefusedError(`${where} has changes that are not committed: commit them (reviewed) before publishing its charts`);
      }
    }
    // Every chart checked against its rendered content before anything is pushed.
    const charts = applications.map((application) => applicationChart(root, environment.name, application.name));
    // The login for this run is a file of Helm's: removed at the end, an interrupted or terminated run's included.
    return withScratchDirectory('platform-gitops-registry-', (login) => {
      let settings: PublishSettings = { helm: helmBinary(root), registry, plainHttp: values['plain-http'], ...(caFile === undefined ? {} : { caFile: path.resolve(caFile) }) };
      if (username !== undefined) settings = loginForRun(settings, username, password!, login);
      for (const chart of charts) {
        const reference = chartReference(registry, environment.name, chart.name);
        try {
          const result = publishChart(settings, environment.name, chart);

          out(`${reference}:${result.version} (appVersion ${chart.version.appVersion}): ${result.result}${result.digest === undefined ? '' : `, ${result.digest}`}\n`);
        } catch (error) {
          if (!(error instanceof RefusedError)) throw error;
          err(`${reference}:${chart.version.version}: ${printable(redactCredentials(error.message))}\n`);
          return 1;
        }
      }
      return 0;
    });
  },
};
