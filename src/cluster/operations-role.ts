import { INFRASTRUCTURE_NAMESPACES, PLATFORM_NAMESPACES } from '../contract/choices';
import { OPERATIONS_ROLE } from '../contract/naming';

/**
 * What `npm run ops` needs in a cluster, and nothing more, as one table: each permission, the
 * namespaces it holds in and the verbs that need it (read from each verb's calls through
 * src/cluster/connection.ts). The roles and `npm run ops -- role`'s account of them are both
 * made from it. Two roles:
 * - the readers' (`<OPERATIONS_ROLE>-read`): reads of the workloads, routes and the platform's
 *   custom resources, and of Argo CD's Applications and AppProjects: status, drift
 *   --no-refresh, verify, check --component infrastructure, canary (describe, with
 *   --load-tester-url), silence list (with --alertmanager-url). No Secret, no exec, no
 *   port-forward, no write;
 * - the operators' (`<OPERATIONS_ROLE>-operate`), with the readers': Applications patched by
 *   name (the environment's, as rendered), Deployments patched, Jobs created, exec,
 *   port-forward and logs in the applications' namespaces only, exec in the database's and
 *   the broker's (sqlcmd, kafka-topics.sh), nodes cordoned and pods evicted (drain), and the
 *   broker chart's Role (the users' password Secrets, by name: src/charts/broker-chart.ts).
 * Never exec or port-forward in Argo CD's namespace (the repository server's sops container
 * holds the age key, and it authenticates no caller), kube-system or the infrastructure's
 * namespaces (FORBIDDEN_EXEC_NAMESPACES): Alertmanager and Flagger's load tester are reached
 * by their URLs (--alertmanager-url, --load-tester-url) under these roles. Namespaced
 * permissions are Roles bound in their namespace; only what spans every namespace (reads,
 * nodes, evictions) is a ClusterRole. No wildcard.
 */

/** A Kubernetes object as the bootstrap applies it. */
export type Manifest = { readonly apiVersion: string; readonly kind: string; readonly metadata: { readonly name: string; readonly namespace?: string }; readonly [field: string]: unknown };

/** Where a permission holds. */
export type PermissionScope = 'cluster' | 'controller' | 'applications' | 'database' | 'broker';

/** Which role holds a permission: the readers' or the operators' (who also hold the readers'). */
export type RoleLevel = 'read' | 'operate';

/** One row of the table: a rule of a role, and the verbs that need it. */
export interface Permission {
  readonly level: RoleLevel;
  readonly scope: PermissionScope;
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Only the environment's Argo CD Applications, by name. */
  readonly byApplicationName?: boolean;
  /** The verbs (and options) that need it. */
  readonly neededBy: readonly string[];
}

/** Namespaces where no role of the operations may exec or port-forward: Argo CD's, the infrastructure's, kube-system. */
export const FORBIDDEN_EXEC_NAMESPACES: readonly string[] = [...new Set([...Object.values(INFRASTRUCTURE_NAMESPACES), PLATFORM_NAMESPACES.kubeSystem])];

/** The readers' and the operators' role names. */
export const READ_ROLE = `${OPERATIONS_ROLE}-read`;
export const OPERATE_ROLE = `${OPERATIONS_ROLE}-operate`;

const READ = ['get', 'list'] as const;
/** Exec and port-forward: a WebSocket upgrade (GET) that the API server authorizes as create as well. */
const SESSION = ['create', 'get'] as const;

/** The table. */
export const PERMISSIONS: readonly Permission[] = [
  {
    level: 'read',
    scope: 'cluster',
    apiGroups: [''],
    resources: ['pods', 'services', 'endpoints', 'serviceaccounts', 'persistentvolumeclaims', 'namespaces', 'nodes', 'events'],
    verbs: READ,
    neededBy: ['status', 'drift', 'verify', 'check', 'canary', 'version', 'bluegreen', 'sync', 'pause', 'rollback', 'emergency'],
  },
  { level: 'read', scope: 'cluster', apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets'], verbs: READ, neededBy: ['status', 'drift', 'check', 'bluegreen', 'sync', 'rollback', 'emergency'] },
  { level: 'read', scope: 'cluster', apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: READ, neededBy: ['drift', 'check', 'rollback --level database', 'emergency restore'] },
  { level: 'read', scope: 'cluster', apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: READ, neededBy: ['drift'] },
  { level: 'read', scope: 'cluster', apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: READ, neededBy: ['drift'] },
  { level: 'read', scope: 'cluster', apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ, neededBy: ['verify', 'bluegreen', 'sync'] },
  { level: 'read', scope: 'cluster', apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: READ, neededBy: ['drift'] },
  { level: 'read', scope: 'cluster', apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways', 'httproutes', 'gatewayclasses'], verbs: READ, neededBy: ['verify', 'drift', 'check', 'sync'] },
  { level: 'read', scope: 'cluster', apiGroups: ['gateway.envoyproxy.io'], resources: ['envoyproxies'], verbs: READ, neededBy: ['drift'] },
  { level: 'read', scope: 'cluster', apiGroups: ['cert-manager.io'], resources: ['certificates', 'clusterissuers'], verbs: READ, neededBy: ['check', 'verify', 'drift'] },
  { level: 'read', scope: 'cluster', apiGroups: ['monitoring.coreos.com'], resources: ['podmonitors', 'prometheusrules', 'alertmanagerconfigs'], verbs: READ, neededBy: ['drift'] },
  { level: 'read', scope: 'cluster', apiGroups: ['flagger.app'], resources: ['canaries', 'metrictemplates'], verbs: READ, neededBy: ['canary', 'status', 'drift'] },
  { level: 'read', scope: 'cluster', apiGroups: ['kafka.strimzi.io'], resources: ['kafkas', 'kafkanodepools', 'kafkatopics', 'kafkausers'], verbs: READ, neededBy: ['check', 'drift'] },
  { level: 'read', scope: 'controller', apiGroups: ['argoproj.io'], resources: ['applications', 'appprojects'], verbs: READ, neededBy: ['status', 'drift', 'upgrade-status', 'sync', 'pause', 'resume', 'rollback', 'emergency'] },
  {
    level: 'operate',
    scope: 'controller',
    apiGroups: ['argoproj.io'],
    resources: ['applications'],
    verbs: ['patch'],
    byApplicationName: true,
    neededBy: ['drift (its refresh)', 'sync', 'pause', 'resume', 'rollback (every level pauses first)', 'emergency outage, restore, crashloop --fix'],
  },
  { level: 'operate', scope: 'applications', apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'], neededBy: ['rollback --level orchestrator', 'emergency outage, restore, crashloop --fix'] },
  { level: 'operate', scope: 'applications', apiGroups: ['batch'], resources: ['jobs'], verbs: ['create'], neededBy: ['rollback --level database', 'emergency restore'] },
  { level: 'operate', scope: 'applications', apiGroups: [''], resources: ['pods/exec'], verbs: SESSION, neededBy: ['version'] },
  { level: 'operate', scope: 'applications', apiGroups: [''], resources: ['pods/portforward'], verbs: SESSION, neededBy: ['bluegreen --step health'] },
  { level: 'operate', scope: 'applications', apiGroups: [''], resources: ['pods/log'], verbs: ['get'], neededBy: ['emergency crashloop'] },
  { level: 'operate', scope: 'database', apiGroups: [''], resources: ['pods/exec'], verbs: SESSION, neededBy: ['check --component database', 'rollback --level database', 'emergency restore'] },
  { level: 'operate', scope: 'broker', apiGroups: [''], resources: ['pods/exec'], verbs: SESSION, neededBy: ['check --component broker'] },
  { level: 'operate', scope: 'cluster', apiGroups: [''], resources: ['nodes'], verbs: ['patch'], neededBy: ['emergency drain, uncordon'] },
  { level: 'operate', scope: 'cluster', apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'], neededBy: ['emergency drain'] },
];

/** What the roles are made for: the environment's namespaces and its Argo CD Applications, as rendered. */
export interface OperationsScope {
  /** Argo CD's namespace. */
  readonly controllerNamespace: string;
  /** Every Argo CD Application of the environment (the root's, its children's, the Helm releases'). */
  readonly applications: readonly string[];
  /** The applications' namespaces. */
  readonly applicationNamespaces: readonly string[];
  readonly databaseNamespace: string;
  readonly brokerNamespace: string;
}

/** The groups the roles are bound to. */
export interface OperationsGroups {
  /** Holds both roles. */
  readonly operators?: string;
  /** Holds the readers' role alone. */
  readonly readers?: string;
}

/** The namespaces of a scope, in order. */
export function scopeNamespaces(scope: PermissionScope, of: OperationsScope): readonly string[] {
  switch (scope) {
    case 'cluster':
      return [];
    case 'controller':
      return [of.controllerNamespace];
    case 'applications':
      return [...new Set(of.applicationNamespaces)].sort();
    case 'database':
      return [of.databaseNamespace];
    case 'broker':
      return [of.brokerNamespace];
  }
}

/** A permission as an RBAC rule, with its comment: the verbs that need it. */
export interface RenderedRule {
  readonly rule: { readonly apiGroups: readonly string[]; readonly resources: readonly string[]; readonly resourceNames?: readonly string[]; readonly verbs: readonly string[] };
  readonly neededBy: readonly string[];
}

function ruleOf(permission: Permission, of: OperationsScope): RenderedRule {
  return {
    rule: {
      apiGroups: [...permission.apiGroups],
      resources: [...permission.resources],
      ...(permission.byApplicationName === true ? { resourceNames: [...new Set(of.applications)].sort() } : {}),
      verbs: [...permission.verbs],
    },
    neededBy: permission.neededBy,
  };
}

/** A role or binding, and for a role the verbs that need each of its rules (in the order of `rules`). */
export interface OperationsObject {
  readonly manifest: Manifest;
  readonly neededBy?: readonly (readonly string[])[];
}

/**
 * The roles (ClusterRoles, and Roles per namespace), and the bindings to the groups given:
 * the operators' group gets both roles and, in the broker's namespace, the broker chart's Role
 * (Argo CD makes it, and the namespaces but Argo CD's: a binding there names them before they
 * exist, and waits for its namespace).
 */
export function operationsObjects(of: OperationsScope, groups: OperationsGroups = {}): OperationsObject[] {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const objects: OperationsObject[] = [];
  const bindings: Manifest[] = [];
  const subjects = (group: string) => [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }];
  const holders = (level: RoleLevel) => [...(groups.operators === undefined ? [] : [groups.operators]), ...(level === 'read' && groups.readers !== undefined ? [groups.readers] : [])];
  const bind = (kind: 'ClusterRole' | 'Role', name: string, level: RoleLevel, namespace?: string) => {
    for (const group of holders(level)) {
      const bindingName = group === groups.operators ? name : `${name}-${group === groups.readers ? 'readers' : group}`;
      bindings.push({
        apiVersion: rbac,
        kind: kind === 'ClusterRole' ? 'ClusterRoleBinding' : 'RoleBinding',
        metadata: { name: bindingName, ...(namespace === undefined ? {} : { namespace }) },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
        subjects: subjects(group),
      });
    }
  };
  for (const level of ['read', 'operate'] as const) {
    const name = level === 'read' ? READ_ROLE : OPERATE_ROLE;
    const rows = PERMISSIONS.filter((permission) => permission.level === level);
    const clusterRules = rows.filter((permission) => permission.scope === 'cluster').map((permission) => ruleOf(permission, of));
    if (clusterRules.length > 0) {
      objects.push({ manifest: { apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules: clusterRules.map((r) => r.rule) }, neededBy: clusterRules.map((r) => r.neededBy) });
      bind('ClusterRole', name, level);
    }
    const namespaces = [...new Set(rows.flatMap((permission) => scopeNamespaces(permission.scope, of)))];
    // Argo CD's namespace first (it exists before any other), then the rest by name.
    namespaces.sort((a, b) => (a === of.controllerNamespace ? -1 : b === of.controllerNamespace ? 1 : a < b ? -1 : a > b ? 1 : 0));
    for (const namespace of namespaces) {
      const rules = rows.filter((permission) => permission.scope !== 'cluster' && scopeNamespaces(permission.scope, of).includes(namespace)).map((permission) => ruleOf(permission, of));
      objects.push({ manifest: { apiVersion: rbac, kind: 'Role', metadata: { name, namespace }, rules: rules.map((r) => r.rule) }, neededBy: rules.map((r) => r.neededBy) });
      bind('Role', name, level, namespace);
    }
  }
  // The broker chart's Role: the users' password Secrets, by name (check --component broker).
  if (groups.operators !== undefined) bind('Role', OPERATIONS_ROLE, 'operate', of.brokerNamespace);
  return [...objects, ...bindings.map((manifest) => ({ manifest }))];
}

/** The manifests alone, in order. */
export function operationsRoleManifests(of: OperationsScope, groups: OperationsGroups = {}): Manifest[] {
  return operationsObjects(of, groups).map((object) => object.manifest);
}
