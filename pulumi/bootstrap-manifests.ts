import { App, Chart } from 'cdk8s';
import { publishedChartsRepoURL, rootApplicationProps } from '../src/charts/gitops-applications';
import { ROOT_APPLICATION } from '../src/contract/platform-charts';
import { Application } from '../src/imports/application-argoproj.io';
import type { ReleaseContext } from '../src/infrastructure/releases';
import { SOPS_AGE } from '../src/contract/choices';
import { REPOSITORY_SECRET_LABEL } from '../src/contract/upstream';
import { ENVIRONMENT_ORDER, loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { ConfigError } from '../src/base/errors';
import { namespacePodSecurity } from '../src/contract/security-context';
import { buildEnvironment } from '../src/synth';
import { type OperationsGroups, operationsRoleManifests } from '../src/cluster/operations-role';
import { operationsScope } from '../src/synth/operations-scope';

/**
 * The objects the bootstrap applies, as plain manifests: the Pulumi components create
 * them (with secret values wrapped as Pulumi secrets) and the e2e harness applies the
 * very same shapes (e2e/run-argo-cd.ts), so the two cannot drift. No Pulumi import here.
 */

/** Name of the repository credentials Secret in Argo CD's namespace. */
export const REPOSITORY_SECRET = 'platform-gitops-repository';

/** A rendered Kubernetes object (apiVersion, kind, metadata, spec). */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly spec?: unknown;
  readonly [key: string]: unknown;
}

/**
 * Argo CD's namespace (5.3: the controller's namespace), with its Pod Security labels: the
 * bootstrap is its one owner (it exists before any Application; none creates or labels it).
 */
export function controllerNamespaceManifest(namespace: string): Manifest {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: namespacePodSecurity(namespace) } };
}

/** The age key file Secret the repository server mounts (SOPS_AGE_KEY_FILE, 5.3). */
export function ageKeySecretManifest<S>(namespace: string, ageKey: S) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SOPS_AGE.secretName, namespace },
    type: 'Opaque',
    stringData: { [SOPS_AGE.secretKey]: ageKey },
  } as const;
}

/**
 * Read access for Argo CD to this repository: a Secret labelled
 * `argocd.argoproj.io/secret-type: repository` with the SSH URL and private key (5.3).
 */
export function repositorySecretManifest<S, N = string>(args: { namespace: N; secretName: string; url: string; sshPrivateKey: S }) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: args.secretName,
      namespace: args.namespace,
      labels: { [REPOSITORY_SECRET_LABEL.key]: REPOSITORY_SECRET_LABEL.value },
    },
    type: 'Opaque',
    stringData: { type: 'git', url: args.url, sshPrivateKey: args.sshPrivateKey },
  } as const;
}

/** Name of the Secret of the published charts' registry in Argo CD's namespace. */
export const CHART_REGISTRY_SECRET = 'platform-gitops-charts';

/** A registry login: the user and the password (or token). */
export interface RegistryCredentials<S> {
  readonly username: string;
  readonly password: S;
}

/**
 * Read access for Argo CD to the environment's published application charts (an environment
 * with `applicationSource.from: registry`): a repository Secret of type `helm` with
 * `enableOCI` for the registry path Argo CD's Applications name, and the registry login when
 * the registry asks for one (Argo CD docs, "Declarative Setup", Helm OCI repositories).
 */
export function chartRegistrySecretManifest<S, N = string>(args: { namespace: N; url: string; credentials?: RegistryCredentials<S> }) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: CHART_REGISTRY_SECRET,
      namespace: args.namespace,
      labels: { [REPOSITORY_SECRET_LABEL.key]: REPOSITORY_SECRET_LABEL.value },
    },
    type: 'Opaque',
    stringData: {
      type: 'helm',
      name: CHART_REGISTRY_SECRET,
      url: args.url,
      enableOCI: 'true',
      ...(args.credentials === undefined ? {} : { username: args.credentials.username, password: args.credentials.password }),
    },
  } as const;
}

/** The validated environment a stack bootstraps, and the platform; refuses a name that is not an environment. */
export function bootstrapContext(environmentName: string): ReleaseContext {
  if (!(ENVIRONMENT_ORDER as readonly string[]).includes(environmentName)) {
    throw new ConfigError([`stack: environment ${JSON.stringify(environmentName)} must be one of ${ENVIRONMENT_ORDER.join(', ')}`]);
  }
  return { environment: loadEnvironments().find((env) => env.name === environmentName)!, platform: loadPlatform() };
}

/** The AppProject and root Application of an environment, as `npm run synth` renders them. */
export function renderedBootstrapObjects(environmentName: string): { project: Manifest; application: Manifest } {
  const { environment, platform } = bootstrapContext(environmentName);
  const { gitops } = buildEnvironment(new App(), environment, platform);
  // Not in gitops.yaml: the root does not sync itself (src/charts/gitops-applications.ts).
  const application = new Application(new Chart(new App(), 'bootstrap'), ROOT_APPLICATION, rootApplicationProps(environment, platform)).toJson() as Manifest;
  // The root's own project, which it needs before its first sync.
  const rootProject = (application as { spec?: { project?: string } }).spec?.project;
  const project = (gitops.toJson() as Manifest[]).find((o) => o.kind === 'AppProject' && o.metadata.name === rootProject)!;
  return { project, application };
}

/** Everything the bootstrap applies besides the Argo CD Helm release, in order. */
export function bootstrapManifests<S>(
  environment: string,
  secrets: { repositorySshPrivateKey: S; sopsAgeKey: S; chartRegistry?: RegistryCredentials<S> },
  groups: OperationsGroups = {},
) {
  const platform = loadPlatform();
  const namespace = platform.controller.namespace;
  const { project, application } = renderedBootstrapObjects(environment);
  const { environment: values } = bootstrapContext(environment);
  const charts = publishedChartsRepoURL(values);
  return {
    namespace: controllerNamespaceManifest(namespace),
    ageKeySecret: ageKeySecretManifest(namespace, secrets.sopsAgeKey),
    repositorySecret: repositorySecretManifest({
      namespace,
      secretName: REPOSITORY_SECRET,
      url: platform.repository.url,
      sshPrivateKey: secrets.repositorySshPrivateKey,
    }),
    // Only for an environment that follows its published charts.
    ...(charts === undefined ? {} : { chartRegistrySecret: chartRegistrySecretManifest({ namespace, url: charts, ...(secrets.chartRegistry === undefined ? {} : { credentials: secrets.chartRegistry }) }) }),
    project,
    rootApplication: application,
    operationsAccess: operationsRoleManifests(operationsScope(values, platform), groups),
  };
}
