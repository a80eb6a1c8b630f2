import * as pulumi from '@pulumi/pulumi';
import { App } from 'cdk8s';
import { ROOT_APPLICATION } from '../src/argocd/applications';
import { ARGO_CD_RELEASE, argoCdValues } from '../src/argocd/argo-cd-values';
import { HELM_CHARTS } from '../src/chart-versions';
import { WAITS_SECONDS } from '../src/constants';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { ConfigError } from '../src/errors';
import { buildEnvironment } from '../src/synth';
import { ArgoCdInstallation } from './argocd-installation';
import { RepositoryCredentials } from './repository-credentials';
import { type Manifest, RootApplication } from './root-application';

/** Name of the repository credentials Secret in Argo CD's namespace. */
export const REPOSITORY_SECRET = 'platform-gitops-repository';

/** What a stack says (Pulumi.<env>.yaml and its secrets). */
export interface BootstrapConfig {
  /** The environment this cluster runs: one of local, testing, staging, production. */
  readonly environment: string;
  /** Private half of the repository's deploy key (secret). */
  readonly repositorySshPrivateKey: pulumi.Input<string>;
  /** The environment's age key file (secret). */
  readonly sopsAgeKey: pulumi.Input<string>;
}

/** Read the stack's configuration; the two keys are required secrets. */
export function readBootstrapConfig(config: pulumi.Config = new pulumi.Config()): BootstrapConfig {
  return {
    environment: config.require('environment'),
    repositorySshPrivateKey: config.requireSecret('repositorySshPrivateKey'),
    sopsAgeKey: config.requireSecret('sopsAgeKey'),
  };
}

/** The AppProject and root Application of an environment, as `npm run synth` renders them. */
export function renderedBootstrapObjects(environmentName: string): { project: Manifest; application: Manifest } {
  if (!(ENVIRONMENT_ORDER as readonly string[]).includes(environmentName)) {
    throw new ConfigError([`stack: environment ${JSON.stringify(environmentName)} must be one of ${ENVIRONMENT_ORDER.join(', ')}`]);
  }
  const environment = loadEnvironments().find((env) => env.name === environmentName)!;
  const { gitops } = buildEnvironment(new App(), environment, loadPlatform());
  const objects = gitops.toJson() as Manifest[];
  const project = objects.find((o) => o.kind === 'AppProject')!;
  const application = objects.find((o) => o.kind === 'Application' && o.metadata.name === ROOT_APPLICATION)!;
  return { project, application };
}

/** Everything `pulumi up` creates, in dependency order. */
export interface Bootstrap {
  readonly argocd: ArgoCdInstallation;
  readonly repository: RepositoryCredentials;
  readonly root: RootApplication;
}

/**
 * A bare cluster to a synced environment (1.1.5): Argo CD with KSOPS and the age key,
 * read access to this repository, then the root Application; the controller does the rest.
 */
export function bootstrap(config: BootstrapConfig): Bootstrap {
  const platform = loadPlatform();
  const { project, application } = renderedBootstrapObjects(config.environment);
  const argocd = new ArgoCdInstallation('argocd', {
    namespace: platform.controller.namespace,
    chart: HELM_CHARTS.argoCd,
    releaseName: ARGO_CD_RELEASE,
    values: argoCdValues(),
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
    },
    { dependsOn: [argocd] },
  );
  const root = new RootApplication(
    'root',
    { project, application, timeoutSeconds: WAITS_SECONDS.controllerSync },
    { dependsOn: [argocd, repository] },
  );
  return { argocd, repository, root };
}
