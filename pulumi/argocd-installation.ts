import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import type { HelmChartRef } from '../src/infrastructure/releases';
import { ageKeySecretManifest, controllerNamespaceManifest } from './bootstrap-manifests';

export interface ArgoCdInstallationArgs {
  /** Namespace Argo CD runs in; created here (5.3: the controller's namespace). */
  readonly namespace: string;
  /** The argo-cd chart at its pinned version (the Argo CD row of src/infrastructure/releases.ts). */
  readonly chart: HelmChartRef;
  /** Helm release name; the self-managed Application uses the same one. */
  readonly releaseName: string;
  /** Chart values: the same as the self-managed Application's (src/infrastructure/argo-cd-values.ts). */
  readonly values: Readonly<Record<string, unknown>>;
  /** Contents of the environment's age key file (a Pulumi secret), mounted into the sops plugin sidecar (5.3). */
  readonly ageKey: pulumi.Input<string>;
  /** How long the release may take to become ready, in seconds (1.3.4 / 8: 300). */
  readonly timeoutSeconds: number;
}

/**
 * Argo CD on a bare cluster: its namespace, the age key Secret the repository server
 * mounts (SOPS_AGE_KEY_FILE), and the argo-cd Helm release with the sops plugin sidecar. After
 * the first sync, the `argocd` Application keeps the release in step with git.
 */
export class ArgoCdInstallation extends pulumi.ComponentResource {
  /** The controller's namespace. */
  public readonly namespace: k8s.core.v1.Namespace;
  /** The Secret holding the age key file. */
  public readonly ageKeySecret: k8s.core.v1.Secret;
  /** The Helm release of Argo CD. */
  public readonly release: k8s.helm.v3.Release;

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

    this.release = new k8s.helm.v3.Release(
      `${name}-release`,
      {
        name: args.releaseName,
        namespace: args.namespace,
        chart: args.chart.chart,
        version: args.chart.version,
        repositoryOpts: { repo: args.chart.repoURL },
        values: args.values as Record<string, pulumi.Input<unknown>>,
        createNamespace: false,
        // Helm waits for the release's pods to be ready, at most timeoutSeconds.
        timeout: args.timeoutSeconds,
        skipAwait: false,
        atomic: true,
      },
      { parent: this, dependsOn: [this.namespace, this.ageKeySecret], customTimeouts },
    );

    this.registerOutputs({
      namespace: this.namespace.metadata.name,
      ageKeySecret: this.ageKeySecret.metadata.name,
      releaseStatus: this.release.status,
    });
  }
}
