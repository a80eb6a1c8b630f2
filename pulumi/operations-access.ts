import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { operationsRoleManifests } from '../src/cluster/operations-role';

export interface OperationsAccessArgs {
  /** Argo CD's namespace, where the Role lets the verbs patch Applications. */
  readonly controllerNamespace: string;
  /**
   * The group that operates the environment (`npm run ops`): the roles are bound to it.
   * @default - no binding: the roles exist, for whoever binds them
   */
  readonly group?: string;
}

/**
 * What `npm run ops` needs (src/cluster/operations-role.ts): the ClusterRole, the Role in
 * Argo CD's namespace and, for the stack's `operatorsGroup`, their bindings.
 */
export class OperationsAccess extends pulumi.ComponentResource {
  /** Every RBAC object, in the order the manifests list them. */
  public readonly objects: readonly k8s.apiextensions.CustomResource[];

  constructor(name: string, args: OperationsAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super('platform-gitops:bootstrap:OperationsAccess', name, {}, opts);
    this.objects = operationsRoleManifests(args.controllerNamespace, args.group).map(
      (manifest) => new k8s.apiextensions.CustomResource(`${name}-${manifest.kind.toLowerCase()}`, { ...manifest } as k8s.apiextensions.CustomResourceArgs, { parent: this }),
    );
    this.registerOutputs({ objects: this.objects.map((object) => object.metadata.name) });
  }
}
