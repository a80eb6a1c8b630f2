import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { chartRegistrySecretManifest, type RegistryCredentials, repositorySecretManifest } from './bootstrap-manifests';

export interface RepositoryCredentialsArgs {
  /** Namespace of Argo CD, where repository Secrets are read. */
  readonly namespace: pulumi.Input<string>;
  /** Secret name. */
  readonly secretName: string;
  /** SSH URL of this repository (src/environments/platform.ts). */
  readonly url: string;
  /** The deploy key's private half (a Pulumi secret); stored as `sshPrivateKey` (5.3). */
  readonly sshPrivateKey: pulumi.Input<string>;
  /**
   * The registry of the environment's published charts, when it follows them: the path Argo
   * CD's Applications name, and the registry login if it asks for one.
   * @default - none: the environment follows this repository
   */
  readonly chartRegistry?: { readonly url: string; readonly credentials?: RegistryCredentials<pulumi.Input<string>> };
}

/**
 * Read access for Argo CD to this repository: a Secret labelled
 * `argocd.argoproj.io/secret-type: repository` with the SSH URL and private key.
 * The API server stores `stringData` base64-encoded under `data` (5.3).
 */
export class RepositoryCredentials extends pulumi.ComponentResource {
  /** The repository Secret. */
  public readonly secret: k8s.core.v1.Secret;

  constructor(name: string, args: RepositoryCredentialsArgs, opts?: pulumi.ComponentResourceOptions) {
    super('platform-gitops:bootstrap:RepositoryCredentials', name, {}, opts);
    this.secret = new k8s.core.v1.Secret(
      `${name}-secret`,
      repositorySecretManifest({
        namespace: args.namespace,
        secretName: args.secretName,
        url: args.url,
        sshPrivateKey: pulumi.secret(args.sshPrivateKey),
      }) as k8s.core.v1.SecretArgs,
      { parent: this },
    );
    const registry = args.chartRegistry;
    if (registry !== undefined) {
      const credentials = registry.credentials === undefined ? {} : { credentials: { username: registry.credentials.username, password: pulumi.secret(registry.credentials.password) } };
      new k8s.core.v1.Secret(`${name}-charts`, chartRegistrySecretManifest({ namespace: args.namespace, url: registry.url, ...credentials }) as k8s.core.v1.SecretArgs, { parent: this });
    }
    this.registerOutputs({ secretName: this.secret.metadata.name });
  }
}
