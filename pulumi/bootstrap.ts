import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { WAITS_SECONDS } from '../src/contract/contract';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath, releaseNamespace } from '../src/infrastructure/releases';
import { projectRoot } from '../src/base/project-root';
import { ArgoCdInstallation } from './argocd-installation';
import { REPOSITORY_SECRET, bootstrapContext, renderedBootstrapObjects } from './bootstrap-manifests';
import { RepositoryCredentials } from './repository-credentials';
import { OperationsAccess } from './operations-access';
import { operationsScope } from '../src/synth/operations-scope';
import { RootApplication } from './root-application';
import { publishedChartsRepoURL } from '../src/charts/gitops-applications';

export { REPOSITORY_SECRET, renderedBootstrapObjects } from './bootstrap-manifests';

/** What a stack says (Pulumi.<env>.yaml and its secrets). */
export interface BootstrapConfig {
  /** The environment this cluster runs: one of local, testing, staging, production. */
  readonly environment: string;
  /** Private half of the repository's deploy key (secret). */
  readonly repositorySshPrivateKey: pulumi.Input<string>;
  /** The environment's age key file (secret). */
  readonly sopsAgeKey: pulumi.Input<string>;
  /**
   * The group that operates the environment with `npm run ops`: the verbs' roles are bound to it.
   * @default - the roles are created, bound to nobody
   */
  readonly operatorsGroup?: string;
  /**
   * The group that only reads the environment (status, drift --no-refresh, verify, check
   * --component infrastructure): the readers' role is bound to it.
   * @default - bound to nobody
   */
  readonly readersGroup?: string;
  /**
   * The login to the registry of the published charts (`chartRegistryUsername`, and the secret
   * `chartRegistryPassword`), for an environment that follows them from a registry that asks for one.
   * @default - anonymous pulls
   */
  readonly chartRegistry?: { readonly username: string; readonly password: pulumi.Input<string> };
}

/**
 * The age key for the `sops-age` Secret: the file named by `sopsAgeKeyFile` (the one `npm run
 * secrets -- init` wrote, `~/.config/platform-gitops/age/<environment>.key`), read on this
 * machine and kept secret, or else the stack secret `sopsAgeKey`.
 */
export function readAgeKey(config: pulumi.Config): pulumi.Output<string> {
  const file = config.get('sopsAgeKeyFile');
  if (file === undefined || file === '') return config.requireSecret('sopsAgeKey');
  const resolved = file.startsWith('~/') ? path.join(os.homedir(), file.slice(2)) : path.resolve(file);
  let text: string;
  try {
    text = fs.readFileSync(resolved, 'utf8');
  } catch (error) {
    throw new Error(`sopsAgeKeyFile ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)}); run npm run secrets -- init <environment> on this machine`);
  }
  if (!/^AGE-SECRET-KEY-1/m.test(text)) throw new Error(`sopsAgeKeyFile ${file}: holds no age secret key (AGE-SECRET-KEY-1...)`);
  return pulumi.secret(text);
}

/** Read the stack's configuration; the two keys are required secrets (the age key may come from its file). */
export function readBootstrapConfig(config: pulumi.Config = new pulumi.Config()): BootstrapConfig {
  return {
    environment: config.require('environment'),
    repositorySshPrivateKey: config.requireSecret('repositorySshPrivateKey'),
    sopsAgeKey: readAgeKey(config),
    ...(config.get('operatorsGroup') ? { operatorsGroup: config.get('operatorsGroup')! } : {}),
    ...(config.get('readersGroup') ? { readersGroup: config.get('readersGroup')! } : {}),
    ...(config.get('chartRegistryUsername') ? { chartRegistry: { username: config.get('chartRegistryUsername')!, password: config.requireSecret('chartRegistryPassword') } } : {}),
  };
}

/** Everything `pulumi up` creates, in dependency order. */
export interface Bootstrap {
  readonly argocd: ArgoCdInstallation;
  readonly repository: RepositoryCredentials;
  readonly root: RootApplication;
  readonly operations: OperationsAccess;
}

/**
 * A bare cluster to a synced environment (1.1.5): Argo CD with the sops plugin and the age key,
 * read access to this repository, then the root Application; the controller does the rest.
 * Beside them, the roles of the live operations (`npm run ops`), bound to `operatorsGroup`.
 */
export function bootstrap(config: BootstrapConfig): Bootstrap {
  const context = bootstrapContext(config.environment);
  const { platform } = context;
  const { project, application } = renderedBootstrapObjects(config.environment);
  const charts = publishedChartsRepoURL(context.environment);
  // The same kustomization the self-managed `argocd` Application syncs: dist/<environment>/argocd.
  const argoCd = INFRASTRUCTURE_RELEASES.argoCd;
  const argocd = new ArgoCdInstallation('argocd', {
    namespace: releaseNamespace(argoCd, context),
    kustomization: path.join(projectRoot(), releaseKustomizationPath(config.environment, argoCd)),
    ageKey: config.sopsAgeKey,
    timeoutSeconds: WAITS_SECONDS.infrastructurePodsReady,
  });
  const repository = new RepositoryCredentials(
    'repository',
    {
      namespace: argocd.namespace.metadata.name,
      secretName: REPOSITORY_SECRET,
      url: platform.repository.url,
      sshPrivateKey: config.repositorySshPrivateKey,
      ...(charts === undefined ? {} : { chartRegistry: { url: charts, ...(config.chartRegistry === undefined ? {} : { credentials: config.chartRegistry }) } }),
    },
    { dependsOn: [argocd] },
  );
  const root = new RootApplication(
    'root',
    { project, application, timeoutSeconds: WAITS_SECONDS.controllerSync },
    { dependsOn: [argocd, repository] },
  );
  const operations = new OperationsAccess(
    'operations',
    {
      scope: operationsScope(context.environment, context.platform),
      groups: {
        ...(config.operatorsGroup === undefined ? {} : { operators: config.operatorsGroup }),
        ...(config.readersGroup === undefined ? {} : { readers: config.readersGroup }),
      },
      // The namespaces but Argo CD's are made by Argo CD, once the root Application is there.
      laterNamespacesAfter: [root],
    },
    { dependsOn: [argocd] },
  );
  return { argocd, repository, root, operations };
}
