import { CLUSTER_DNS } from '../src/contract/upstream';

// How the cluster's DNS names a Service and where its ports send, for the containers the harness
// plays on loopback: the host they were given must be a Service of the cluster whose port sends
// to a container listening there, or nothing answers, as in a pod.

/**
 * The Service a host names from a pod of `namespace`, as the cluster's DNS resolves it
 * (`<service>`, `<service>.<namespace>`, `<service>.<namespace>.svc[.<domain>]`), or undefined
 * for a name outside the cluster's Services.
 */
export function serviceOfHost(host: string, namespace: string): { name: string; namespace: string } | undefined {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  const [name, ns, svc, ...rest] = labels;
  if (name === undefined || name === '') return undefined;
  if (ns === undefined) return { name, namespace };
  if (svc === undefined) return { name, namespace: ns };
  if (svc !== 'svc') return undefined;
  if (rest.length === 0 || rest.join('.') === CLUSTER_DNS.domain) return { name, namespace: ns };
  return undefined;
}

/**
 * Every name a pod of `fromNamespace` reaches a Service by, the inverse of `serviceOfHost`:
 * `<service>.<namespace>`, `.svc` and the cluster domain after it, and `<service>` alone from
 * its own namespace.
 */
export function serviceHostNames(service: string, namespace: string, fromNamespace: string): string[] {
  return [`${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.${CLUSTER_DNS.domain}`, ...(fromNamespace === namespace ? [service] : [])];
}

/** Whether a container's ports include the one a Service port's `targetPort` names, by number or by name. */
export function listensOn(ports: ReadonlyArray<{ readonly name?: string; readonly containerPort: number }> | undefined, targetPort: number | string): boolean {
  return (ports ?? []).some((port) => port.containerPort === targetPort || port.name === targetPort);
}
