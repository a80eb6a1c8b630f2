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
  /**
   * The broker's namespace, where the group is bound to the broker chart's Role (the users'
   * password Secrets, for `ops check --component broker`). Argo CD creates the namespace: the
   * binding waits for the root Application and, on a cluster where it is not there yet, is
   * created by the next `pulumi up`.
   * @default - no binding there
   */
  readonly brokerNamespace?: string;
  /**
   * What the binding in the broker's namespace waits for (the root Application, whose sync
   * makes the namespace); the other objects wait for nothing of Argo CD's.
   * @default - nothing
   */
  readonly brokerBindingAfter?: readonly pulumi.Resource[];
}

/**
 * What `npm run ops` needs (src/cluster/operations-role.ts): the ClusterRole, the Role in
 * Argo CD's namespace and, for the stack's `operatorsGroup`, their bindings, and the binding
 * of the broker chart's Role in the broker's namespace.
 */
export class OperationsAccess extends pulumi.ComponentResource {
  /** Every RBAC object, in the order the manifests list them. */
  public readonly objects: readonly k8s.apiextensions.CustomResource[];

  constructor(name: string, args: OperationsAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super('platform-gitops:bootstrap:OperationsAccess', name, {}, opts);
    this.objects = operationsRoleManifests(args.controllerNamespace, args.group, args.brokerNamespace).map((manifest) => {
      const namespace = manifest.metadata.namespace;
      // The first object of a kind keeps its name (`<name>-<kind>`): a stack made before keeps its resources.
      const suffix = namespace === undefined || namespace === args.controllerNamespace ? '' : `-${namespace}`;
      const inBroker = namespace !== undefined && namespace === args.brokerNamespace && namespace !== args.controllerNamespace;
      return new k8s.apiextensions.CustomResource(`${name}-${manifest.kind.toLowerCase()}${suffix}`, { ...manifest } as k8s.apiextensions.CustomResourceArgs, {
        parent: this,
        ...(inBroker ? { dependsOn: [...(args.brokerBindingAfter ?? [])] } : {}),
      });
    });
    this.registerOutputs({ objects: this.objects.map((object) => object.metadata.name) });
  }
}
