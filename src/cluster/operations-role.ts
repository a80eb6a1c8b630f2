import { OPERATIONS_ROLE } from '../contract/naming';

/**
 * What `npm run ops` needs in a cluster, and nothing more: reads of the workloads, routes
 * and the platform's custom resources; `get`, `list`, `patch` of Argo CD's Applications in
 * its namespace (refresh, sync, pause, resume through the resource, as Argo CD's core mode);
 * the exec and port-forward sessions of `version`, `bluegreen` and the database's sqlcmd;
 * `patch` of Deployments for `rollback --level orchestrator` and the emergencies; `create` of
 * Jobs for the migrations Jobs of `rollback --level database` and `emergency restore`. The
 * only Secrets read are the broker users' passwords, for `check --component broker` (the topics
 * each user sees on 9092): `get` by name in the broker's namespace, through the Role the broker
 * chart renders with those names (src/charts/broker-chart.ts) and the RoleBinding here; no
 * other Secret (drift names a drifted Secret without reading it). Exec and Job
 * creation are cluster-wide, as broad as `kubectl exec` for the group: scoping them to the
 * applications' and the database's namespaces (RoleBindings the charts render) is to come.
 * The bootstrap creates both roles and binds them to the group its stack names
 * (`operatorsGroup`); `npm run ops -- role` prints them for a cluster bootstrapped otherwise.
 * The e2e runs every verb as a user of that group alone.
 */

/** A Kubernetes object as the bootstrap applies it. */
type Manifest = { readonly apiVersion: string; readonly kind: string; readonly metadata: { readonly name: string; readonly namespace?: string }; readonly [field: string]: unknown };

const READ = ['get', 'list'] as const;

/** The rules across namespaces: what status, drift, sync, verify, version, check and bluegreen read. */
const CLUSTER_RULES = [
  { apiGroups: [''], resources: ['pods', 'services', 'configmaps', 'serviceaccounts', 'persistentvolumeclaims', 'namespaces', 'nodes', 'events'], verbs: READ },
  { apiGroups: [''], resources: ['pods/exec', 'pods/portforward'], verbs: ['create', 'get'] },
  // emergency crashloop: the previous run's log of a crashing container.
  { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
  { apiGroups: ['apps', 'batch', 'policy', 'networking.k8s.io', 'discovery.k8s.io'], resources: ['*'], verbs: READ },
  // rollback --level orchestrator: a Deployment's pod template back to an earlier revision's;
  // emergency outage: its replicas.
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'] },
  // emergency drain and uncordon: a node's spec.unschedulable, and the evictions of its pods.
  { apiGroups: [''], resources: ['nodes'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  // rollback --level database and emergency restore: a Job of the migrations image (named by the
  // API server, removed by its TTL: nothing is ever deleted or replaced).
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create'] },
  {
    apiGroups: ['gateway.networking.k8s.io', 'gateway.envoyproxy.io', 'cert-manager.io', 'monitoring.coreos.com', 'flagger.app', 'kafka.strimzi.io'],
    resources: ['*'],
    verbs: READ,
  },
];

/** The rules in Argo CD's namespace: its Applications. */
const CONTROLLER_RULES = [
  { apiGroups: ['argoproj.io'], resources: ['applications'], verbs: ['get', 'list', 'patch'] },
  // drift: an AppProject the root renders may drift too.
  { apiGroups: ['argoproj.io'], resources: ['appprojects'], verbs: READ },
];

/**
 * The ClusterRole and the Role (in `controllerNamespace`), and, when `group` is given, the
 * bindings that grant them to it: also, in `brokerNamespace`, the binding of the broker
 * chart's Role (the users' password Secrets, by name). That namespace and its Role are Argo
 * CD's (the infrastructure and broker charts): the binding names the Role before it exists,
 * and needs the namespace.
 */
export function operationsRoleManifests(controllerNamespace: string, group?: string, brokerNamespace?: string): Manifest[] {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const roles: Manifest[] = [
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: OPERATIONS_ROLE }, rules: CLUSTER_RULES },
    { apiVersion: rbac, kind: 'Role', metadata: { name: OPERATIONS_ROLE, namespace: controllerNamespace }, rules: CONTROLLER_RULES },
  ];
  if (group === undefined) return roles;
  const subjects = [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }];
  return [
    ...roles,
    { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: OPERATIONS_ROLE }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: OPERATIONS_ROLE }, subjects },
    ...[controllerNamespace, ...(brokerNamespace === undefined ? [] : [brokerNamespace])].map(
      (namespace): Manifest => ({ apiVersion: rbac, kind: 'RoleBinding', metadata: { name: OPERATIONS_ROLE, namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: OPERATIONS_ROLE }, subjects }),
    ),
  ];
}
