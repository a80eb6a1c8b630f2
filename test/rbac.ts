import type { Manifest } from '../src/cluster/operations-role';

/** One request as the API server's RBAC authorizer sees it. */
export interface ResourceRequest {
  readonly verb: string;
  readonly apiGroup: string;
  /** `pods`, or `pods/exec` for a subresource. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * Whether RBAC's authorizer allows `request` to `group` through `manifests` (ClusterRoles
 * bound cluster-wide or in a namespace, Roles in theirs), as Kubernetes' RBAC evaluates a
 * rule (kubernetes v1.36 pkg/apis/rbac/v1/evaluation_helpers.go: VerbMatches, APIGroupMatches,
 * ResourceMatches, ResourceNameMatches; `*` matches all, which the roles here never use).
 */
export function permits(manifests: readonly Manifest[], group: string, request: ResourceRequest): boolean {
  const bound = manifests.filter(
    (m) => (m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding') && ((m as any).subjects ?? []).some((s: any) => s.kind === 'Group' && s.name === group),
  );
  return bound.some((binding) => {
    const ref = (binding as any).roleRef as { kind: string; name: string };
    // A RoleBinding grants only in its namespace, whatever role it names.
    if (binding.kind === 'RoleBinding' && binding.metadata.namespace !== request.namespace) return false;
    const role = manifests.find((m) => m.kind === ref.kind && m.metadata.name === ref.name && (ref.kind === 'ClusterRole' || m.metadata.namespace === binding.metadata.namespace));
    if (role === undefined) return false;
    return ((role as any).rules as any[]).some(
      (rule) =>
        (rule.verbs.includes(request.verb) || rule.verbs.includes('*')) &&
        (rule.apiGroups.includes(request.apiGroup) || rule.apiGroups.includes('*')) &&
        (rule.resources.includes(request.resource) || rule.resources.includes('*')) &&
        (rule.resourceNames === undefined || rule.resourceNames.length === 0 || (request.name !== undefined && rule.resourceNames.includes(request.name))),
    );
  });
}

/**
 * A request line as the fake API server records it (`METHOD /path`), as RBAC sees it:
 * `/api/v1/...` (the core group) or `/apis/<group>/<version>/...`, the namespace, the
 * resource, the name and the subresource; GET of a collection is `list`. Discovery paths
 * (no resource) are undefined: every authenticated user may read them.
 */
export function resourceRequest(line: string): ResourceRequest | undefined {
  const [method, pathname] = line.split(' ') as [string, string];
  const parts = pathname.split('/').filter(Boolean);
  let apiGroup: string;
  let rest: string[];
  if (parts[0] === 'api') {
    apiGroup = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    apiGroup = parts[1]!;
    rest = parts.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 2) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0) return undefined;
  const [resource, name, subresource] = rest as [string, string | undefined, string | undefined];
  const verb = { GET: name === undefined ? 'list' : 'get', PATCH: 'patch', POST: 'create', PUT: 'update', DELETE: 'delete' }[method] ?? method.toLowerCase();
  return { verb, apiGroup, resource: subresource === undefined ? resource : `${resource}/${subresource}`, ...(namespace === undefined ? {} : { namespace }), ...(name === undefined ? {} : { name }) };
}
