import { stringify } from 'yaml';
import { databaseMigrationJob, migrationsName, smokeName } from '../src/contract/naming';

/**
 * The annotation the harness's kubelet checks put on a pod once everything its
 * containers need exists (the kubelet stand-in of e2e/stand-in-controllers.ts); kwok starts only such pods.
 */
export const KWOK_ADMITTED_ANNOTATION = 'e2e.platform-gitops/kubelet-checks';

/**
 * The annotation that gives a simulated node its InternalIP, which kwok reports as a kubelet
 * does (Envoy Gateway takes a NodePort Gateway's addresses from its nodes). Addresses of
 * TEST-NET-1 (192.0.2.0/24, RFC 5737): never routed, nothing is sent to them.
 */
export const NODE_IP_ANNOTATION = 'e2e.platform-gitops/internal-ip';

/**
 * kwok's configuration: the node and pod lifecycle a kubelet would drive, as kwok
 * Stages (kwok.x-k8s.io/v1alpha1):
 * - node ready: a node reports its conditions (NodeConditions: Ready, no pressure),
 *   addresses and capacity; kwok then renews its Lease, as a kubelet does, and the
 *   conditions again every few minutes;
 * - start: a scheduled, admitted pod becomes Running and Ready (containers, init
 *   containers completed, sidecars started, readiness gates true);
 * - complete: a Running pod owned by a Job exits 0, so the Job controller completes
 *   the Job (the database setup, backups), except a pod of the migrations image (the Sync hook's,
 *   the live operations') or of a smoke hook, whose container or HTTP step the harness plays;
 * - delete: a pod being deleted goes away.
 */
const NOW = '{{ $now | Quote }}';
const RUNNING = `  state: { running: { startedAt: ${NOW} } }`;
const COMPLETED = `  state: { terminated: { exitCode: 0, reason: Completed, startedAt: ${NOW}, finishedAt: ${NOW} } }`;

/** A status list (`field`) with one entry per container of `.spec.<list>`, `body` its further lines. */
function containerStatuses(field: string, list: string, body: readonly string[]): string[] {
  return [`${field}:`, `{{ range .spec.${list} }}`, '- name: {{ .name | Quote }}', '  image: {{ .image | Quote }}', '  restartCount: 0', ...body, '{{ end }}'];
}

export function kwokStages(kubeletPort: number): string {
  const nodeRef = { apiGroup: 'v1', kind: 'Node' };
  const nodeStatus = [
    '{{ $now := Now }}',
    'phase: Running',
    'conditions:',
    '{{ range NodeConditions }}',
    '- type: {{ .type | Quote }}',
    '  status: {{ .status | Quote }}',
    '  reason: {{ .reason | Quote }}',
    '  message: {{ .message | Quote }}',
    '  lastHeartbeatTime: {{ $now | Quote }}',
    '  lastTransitionTime: {{ $now | Quote }}',
    '{{ end }}',
    'addresses:',
    `- { type: InternalIP, address: {{ index .metadata.annotations "${NODE_IP_ANNOTATION}" | Quote }} }`,
    '- { type: Hostname, address: {{ .metadata.name | Quote }} }',
    // Where the API server reaches the node's kubelet (kwok's server): exec, port-forward.
    '- { type: InternalDNS, address: localhost }',
    `daemonEndpoints: { kubeletEndpoint: { Port: ${kubeletPort} } }`,
    'allocatable: {{ YAML .status.allocatable 1 }}',
    'capacity: {{ YAML .status.capacity 1 }}',
    'nodeInfo: { architecture: amd64, operatingSystem: linux, kubeletVersion: {{ printf "kwok-%s" Version | Quote }}, kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }} }',
  ].join('\n');
  const readyIs = (values: string[], operator: 'In' | 'NotIn') => ({
    key: '.status.conditions.[] | select( .type == "Ready" ) | .status',
    operator,
    values,
  });
  const nodeReady = {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: 'node-ready' },
    spec: { resourceRef: nodeRef, selector: { matchExpressions: [readyIs(['True'], 'NotIn')] }, next: { statusTemplate: nodeStatus } },
  };
  const nodeHeartbeat = {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: 'node-heartbeat' },
    spec: {
      resourceRef: nodeRef,
      selector: { matchExpressions: [readyIs(['True'], 'In')] },
      // Leases carry the heartbeat; conditions are refreshed now and then, as a kubelet does.
      delay: { durationMilliseconds: 120_000, jitterDurationMilliseconds: 150_000 },
      next: { statusTemplate: nodeStatus },
    },
  };
  const podRef = { apiGroup: 'v1', kind: 'Pod' };
  const notDeleting = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' };
  const start = {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: 'pod-start' },
    spec: {
      resourceRef: podRef,
      selector: {
        matchExpressions: [
          notDeleting,
          { key: '.spec.nodeName', operator: 'Exists' },
          { key: '.status.phase', operator: 'In', values: ['Pending'] },
          { key: `.metadata.annotations["${KWOK_ADMITTED_ANNOTATION}"]`, operator: 'In', values: ['passed'] },
        ],
      },
      next: {
        statusTemplate: [
          '{{ $now := Now }}',
          'phase: Running',
          'startTime: {{ $now | Quote }}',
          'conditions:',
          '{{ range list "PodScheduled" "Initialized" "ContainersReady" "Ready" }}',
          '- type: {{ . }}',
          '  status: "True"',
          '  lastTransitionTime: {{ $now | Quote }}',
          '{{ end }}',
          '{{ range .spec.readinessGates }}',
          '- type: {{ .conditionType | Quote }}',
          '  status: "True"',
          '  lastTransitionTime: {{ $now | Quote }}',
          '{{ end }}',
          ...containerStatuses('containerStatuses', 'containers', ['  ready: true', '  started: true', RUNNING]),
          // Sidecars (restartPolicy Always) keep running; other init containers have completed.
          ...containerStatuses('initContainerStatuses', 'initContainers', [
            '  ready: true',
            '{{ if eq .restartPolicy "Always" }}',
            '  started: true',
            RUNNING,
            '{{ else }}',
            COMPLETED,
            '{{ end }}',
          ]),
          '{{ with NodeIPsWith .spec.nodeName }}',
          'hostIP: {{ index . 0 | Quote }}',
          '{{ end }}',
          '{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}',
          'podIP: {{ index . 0 | Quote }}',
          'podIPs:',
          '{{ range . }}',
          '- ip: {{ . | Quote }}',
          '{{ end }}',
          '{{ end }}',
        ].join('\n'),
      },
    },
  };
  const complete = {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: 'pod-complete' },
    spec: {
      resourceRef: podRef,
      selector: {
        matchExpressions: [
          notDeleting,
          { key: '.status.phase', operator: 'In', values: ['Running'] },
          { key: '.metadata.ownerReferences.[].kind', operator: 'In', values: ['Job'] },
          // A pod of the migrations image (the Sync hook's, the live operations') or of a smoke hook
          // ends when the harness has played its container or step (e2e/live-containers.ts).
          { key: `.metadata.labels.app // "" | endswith("${migrationsName('')}") or endswith("${databaseMigrationJob('').label}") or endswith("${smokeName('')}")`, operator: 'NotIn', values: ['true'] },
        ],
      },
      delay: { durationMilliseconds: 1000 },
      next: {
        statusTemplate: [
          '{{ $now := Now }}',
          'phase: Succeeded',
          'conditions:',
          ...['Ready', 'ContainersReady'].flatMap((type) => [`- type: ${type}`, '  status: "False"', '  reason: PodCompleted', `  lastTransitionTime: ${NOW}`]),
          ...containerStatuses('containerStatuses', 'containers', ['  ready: false', '  started: false', COMPLETED]),
        ].join('\n'),
      },
    },
  };
  const remove = {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: 'pod-delete' },
    spec: {
      resourceRef: podRef,
      selector: { matchExpressions: [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }] },
      next: { finalizers: { empty: true }, delete: true },
    },
  };
  return [nodeReady, nodeHeartbeat, start, complete, remove].map((stage) => stringify(stage)).join('---\n');
}
