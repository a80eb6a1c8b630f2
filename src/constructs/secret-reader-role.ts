import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';

export interface SecretReaderRoleProps {
  /** The Role's name: a binding outside the chart (the bootstrap's) names it. */
  readonly name: string;
  /** Namespace of the Role and of the Secrets. */
  readonly namespace: string;
  /** The Secrets it may read, by name; no other. */
  readonly secrets: readonly string[];
}

/**
 * A Role that reads the named Secrets of one namespace and nothing else: `get` with
 * `resourceNames` only (a `list` or `watch` would return every Secret of the namespace,
 * whatever the names: Kubernetes RBAC, "Referring to resources").
 */
export class SecretReaderRole extends k8s.KubeRole {
  constructor(scope: Construct, id: string, props: SecretReaderRoleProps) {
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: [...props.secrets].sort() }],
    });
  }
}
