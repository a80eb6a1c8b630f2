import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import type { Manifest } from './bootstrap-manifests';

export type { Manifest } from './bootstrap-manifests';

export interface RootApplicationArgs {
  /** The AppProject, exactly as rendered into dist/<env>/gitops.yaml. */
  readonly project: Manifest;
  /** The root Application (app of apps), exactly as rendered into dist/<env>/gitops.yaml. */
  readonly application: Manifest;
  /** How long creating or updating each may take, in seconds (8: 300). */
  readonly timeoutSeconds: number;
}

/**
 * Hands the cluster to git: the platform's AppProject and the environment's root
 * Application. From here the root syncs gitops.yaml (itself, the project and the child
 * Applications) and each child its chart; Pulumi does not touch the charts.
 */
export class RootApplication extends pulumi.ComponentResource {
  /** The AppProject. */
  public readonly project: k8s.apiextensions.CustomResource;
  /** The root Application. */
  public readonly application: k8s.apiextensions.CustomResource;

  constructor(name: string, args: RootApplicationArgs, opts?: pulumi.ComponentResourceOptions) {
    super('platform-gitops:bootstrap:RootApplication', name, {}, opts);
    const customTimeouts = { create: `${args.timeoutSeconds}s`, update: `${args.timeoutSeconds}s` };
    this.project = new k8s.apiextensions.CustomResource(
      `${name}-project`,
      { ...args.project } as k8s.apiextensions.CustomResourceArgs,
      { parent: this, customTimeouts },
    );
    this.application = new k8s.apiextensions.CustomResource(
      `${name}-application`,
      { ...args.application } as k8s.apiextensions.CustomResourceArgs,
      { parent: this, dependsOn: [this.project], customTimeouts },
    );
    this.registerOutputs({ project: this.project.metadata.name, application: this.application.metadata.name });
  }
}
