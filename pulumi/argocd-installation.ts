import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { ageKeySecretManifest, controllerNamespaceManifest } from './bootstrap-manifests';

export interface ArgoCdInstallationArgs {
  /** Namespace Argo CD runs in; created here (5.3: the controller's namespace). */
  readonly namespace: string;
  /**
   * The environment's kustomization folder, absolute (`dist/<environment>/argocd`, rendered by
   * `npm run synth`): upstream's manifests at the pinned tag with the platform's patches, the
   * folder the self-managed `argocd` Application syncs afterwards.
   */
  readonly kustomization: string;
  /** Contents of the environment's age key file (a Pulumi secret), mounted into the sops plugin sidecar (5.3). */
  readonly ageKey: pulumi.Input<string>;
  /** How long Argo CD's objects may take to become ready, in seconds (1.3.4 / 8: 300). */
  readonly timeoutSeconds: number;
}

/**
 * Argo CD on a bare cluster: its namespace, the age key Secret the repository server
 * mounts (SOPS_AGE_KEY_FILE), and the environment's kustomization of Argo CD's release
 * manifests with the sops plugin sidecar (the provider's kustomize builds it, fetching the
 * remote base at its tag). After the first sync, the `argocd` Application keeps it in step with git.
 */
export class ArgoCdInstallation extends pulumi.ComponentResource {
  /** The controller's namespace. */
  public readonly namespace: k8s.core.v1.Namespace;
  /** The Secret holding the age key file. */
  public readonly ageKeySecret: k8s.core.v1.Secret;
  /** Argo CD's objects, from the kustomization. */
  public readonly install: k8s.kustomize.v2.Directory;

  constructor(name: string, args: ArgoCdInstallationArgs, opts?: pulumi.ComponentResourceOptions) {
    super('platform-gitops:bootstrap:ArgoCdInstallation', name, {}, opts);
    const customTimeouts = { create: `${args.timeoutSeconds}s`, update: `${args.timeoutSeconds}s`, delete: `${args.timeoutSeconds}s` };

    this.namespace = new k8s.core.v1.Namespace(
      `${name}-namespace`,
      controllerNamespaceManifest(args.namespace) as k8s.core.v1.NamespaceArgs,
      { parent: this, customTimeouts },
    );

    this.ageKeySecret = new k8s.core.v1.Secret(
      `${name}-age-key`,
      ageKeySecretManifest(args.namespace, pulumi.secret(args.ageKey)) as k8s.core.v1.SecretArgs,
      { parent: this, dependsOn: [this.namespace] },
    );

    this.install = new k8s.kustomize.v2.Directory(
      `${name}-install`,
      {
        directory: args.kustomization,
        namespace: args.namespace,
        // Each object waits until it is ready (Deployments rolled out), at most timeoutSeconds.
        skipAwait: false,
      },
      { parent: this, dependsOn: [this.namespace, this.ageKeySecret], customTimeouts },
    );

    this.registerOutputs({
      namespace: this.namespace.metadata.name,
      ageKeySecret: this.ageKeySecret.metadata.name,
      install: this.install.urn,
    });
  }
}
