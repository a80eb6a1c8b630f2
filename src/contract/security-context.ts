import { INFRASTRUCTURE_NAMESPACES } from './choices';

/**
 * Pod Security Admission levels of the namespaces the platform creates,
 * in one place: every namespace carries an `enforce` label, and `audit` / `warn` at
 * restricted, so a pod that would fail the restricted profile is reported even where a
 * namespace enforces less (Kubernetes: Pod Security Admission, "Pod Security Admission
 * labels for namespaces", https://kubernetes.io/docs/concepts/security/pod-security-admission/).
 */
export type PodSecurityLevel = 'restricted' | 'baseline' | 'privileged';

/** The labels of a namespace that enforces `level`. */
export function podSecurityLabels(level: PodSecurityLevel): Record<string, string> {
  return {
    'pod-security.kubernetes.io/enforce': level,
    'pod-security.kubernetes.io/audit': 'restricted',
    'pod-security.kubernetes.io/warn': 'restricted',
  };
}

/**
 * Namespaces that cannot enforce restricted, each with why. Every other namespace the
 * platform creates enforces restricted.
 */
export const POD_SECURITY_EXCEPTIONS: Readonly<Record<string, { readonly level: PodSecurityLevel; readonly reason: string }>> = {
  [INFRASTRUCTURE_NAMESPACES.monitoringStack]: {
    level: 'privileged',
    reason: "kube-prometheus-stack's node exporter DaemonSet reads the node through hostNetwork, hostPID and hostPath mounts",
  },
};

/** The Pod Security labels of one namespace the platform creates. */
export function namespacePodSecurity(namespace: string): Record<string, string> {
  return podSecurityLabels(POD_SECURITY_EXCEPTIONS[namespace]?.level ?? 'restricted');
}

/**
 * A pod security context that passes the restricted profile: a non-root user (with the
 * user, group and volume group when given) and the runtime's default seccomp profile.
 */
export function restrictedPod(ids: { readonly user?: number; readonly group?: number; readonly fsGroup?: number } = {}) {
  return {
    runAsNonRoot: true,
    ...(ids.user === undefined ? {} : { runAsUser: ids.user }),
    ...(ids.group === undefined ? {} : { runAsGroup: ids.group }),
    ...(ids.fsGroup === undefined ? {} : { fsGroup: ids.fsGroup }),
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/**
 * A container security context that passes the restricted profile: a non-root user (and
 * group, when given), no privilege escalation, a read-only root filesystem, no capabilities,
 * the runtime's default seccomp profile. For the platform's own containers and for upstream
 * charts whose defaults do not pass.
 */
export function restrictedContainer(user: number, group?: number) {
  return {
    runAsNonRoot: true,
    runAsUser: user,
    ...(group === undefined ? {} : { runAsGroup: group }),
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
