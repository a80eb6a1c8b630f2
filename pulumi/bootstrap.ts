import * as pulumi from '@pulumi/pulumi';
import { ARGO_CD_RELEASE, argoCdValues } from '../src/argocd/argo-cd-values';
import { HELM_CHARTS } from '../src/chart-versions';
import { WAITS_SECONDS } from '../src/constants';
import { loadPlatform } from '../src/environments/platform';
import { ArgoCdInstallation } from './argocd-installation';
import { REPOSITORY_SECRET, renderedBootstrapObjects } from './bootstrap-manifests';
import { RepositoryCredentials } from './repository-credentials';
import { RootApplication } from './root-application';

export { REPOSITORY_SECRET, renderedBootstrapObjects } from './bootstrap-manifests';

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
