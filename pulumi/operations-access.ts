import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { OPERATIONS_ROLE } from '../src/contract/naming';
import { type OperationsGroups, type OperationsScope, operationsRoleManifests } from '../src/cluster/operations-role';

export interface OperationsAccessArgs {
  /** The environment's namespaces and Argo CD Applications, as rendered (src/synth/operations-scope.ts). */
  readonly scope: OperationsScope;
  /**
   * The groups the roles are bound to: the operators' (both roles, and the broker chart's Role)
   * and the readers' (the readers' role alone).
   * @default - no binding: the roles exist, for whoever binds them
   */
  readonly groups?: OperationsGroups;
  /**
   * What the objects in a namespace Argo CD creates (the applications', the database's, the
   * broker's) wait for: the root Application, whose sync makes the namespaces. On a cluster
   * where they are not there yet, the next `pulumi up` creates them.
   * @default - nothing
   */
  readonly laterNamespacesAfter?: readonly pulumi.Resource[];
}

/**
 * What `npm run ops` needs (src/cluster/operations-role.ts): the readers' and the operators'
 * ClusterRoles and Roles, and their bindings to the stack's `operatorsGroup` and `readersGroup`.
 */
export class OperationsAccess extends pulumi.ComponentResource {
  /** Every RBAC object, in the order the manifests list them. */
  public readonly objects: readonly k8s.apiextensions.CustomResource[];

  constructor(name: string, args: OperationsAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super('platform-gitops:bootstrap:OperationsAccess', name, {}, opts);
    const controller = args.scope.controllerNamespace;
    this.objects = operationsRoleManifests(args.scope, args.groups).map((manifest) => {
      const namespace = manifest.metadata.namespace;
      const later = namespace !== undefined && namespace !== controller;
      // The binding of the broker chart's Role keeps the resource name it had before the roles were
      // split, so a stack made before keeps the object instead of creating it anew and deleting it.
      const kept = manifest.kind === 'RoleBinding' && manifest.metadata.name === OPERATIONS_ROLE && namespace === args.scope.brokerNamespace;
      return new k8s.apiextensions.CustomResource(
        `${name}-${manifest.kind.toLowerCase()}-${manifest.metadata.name}${namespace === undefined ? '' : `-${namespace}`}`,
        { ...manifest } as k8s.apiextensions.CustomResourceArgs,
        { parent: this, ...(later ? { dependsOn: [...(args.laterNamespacesAfter ?? [])] } : {}), ...(kept ? { aliases: [{ name: `${name}-rolebinding-${namespace}` }] } : {}) },
      );
    });
    this.registerOutputs({ objects: this.objects.map((object) => object.metadata.name) });
  }
}
