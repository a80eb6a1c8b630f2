import type { KubeObject } from './kube-client';

/**
 * How Envoy Gateway judges a Gateway's listeners and an HTTPRoute's attachment, for the e2e
 * stand-in (e2e/stand-in-controllers.ts) to refuse what Envoy Gateway refuses. Each rule is
 * envoyproxy/gateway v1.9.1's, with the file it comes from; reasons and messages are its own.
 * Pure functions: test/e2e-stand-in-gateway-api.test.ts pins each rule.
 */

/** A condition of a Gateway API status, without its timestamps and generation. */
export interface Verdict {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** A Secret as the stand-in sees it: its type and its data keys. */
export interface SecretSeen {
  readonly type: string;
  readonly keys: ReadonlySet<string>;
}

/** A ReferenceGrant's `from` and `to` entries (gateway.networking.k8s.io v1 and v1beta1). */
export type ReferenceGrant = Pick<KubeObject, 'metadata'> & { readonly spec?: any };

/**
 * Whether a ReferenceGrant in the target namespace lets a `fromKind` of `fromNamespace` refer
 * to a core `toKind` named `toName` (internal/gatewayapi/helpers.go `isCrossNamespaceReferencePermitted`:
 * a grant's `from` must name the group, kind and namespace, its `to` the group and kind, and
 * the name when it gives one).
 */
export function referencePermitted(
  grants: readonly ReferenceGrant[],
  from: { readonly group: string; readonly kind: string; readonly namespace: string },
  to: { readonly group: string; readonly kind: string; readonly namespace: string; readonly name: string },
): boolean {
  return grants.some(
    (grant) =>
      grant.metadata.namespace === to.namespace &&
      (grant.spec?.from ?? []).some((f: any) => (f.group ?? '') === from.group && f.kind === from.kind && f.namespace === from.namespace) &&
      (grant.spec?.to ?? []).some((t: any) => (t.group ?? '') === to.group && t.kind === to.kind && (t.name === undefined || t.name === '' || t.name === to.name)),
  );
}

/**
 * A listener's ResolvedRefs for its TLS certificates (internal/gatewayapi/validate.go
 * `validateTLSConfiguration` and its certificate loop): a Secret in another namespace needs a
 * ReferenceGrant; the Secret must exist, be `kubernetes.io/tls` and hold `tls.crt` and
 * `tls.key`. With no valid certificate left the listener's refs are unresolved, with
 * RefNotPermitted only when every problem was a missing grant.
 */
export function listenerCertificates(
  gatewayNamespace: string,
  listener: any,
  secrets: ReadonlyMap<string, SecretSeen>,
  grants: readonly ReferenceGrant[],
): Verdict {
  const refs: any[] = listener.tls?.certificateRefs ?? [];
  if (refs.length === 0) return { status: 'True', reason: 'ResolvedRefs', message: 'Listener references have been resolved' };
  const problems: { reason: string; message: string }[] = [];
  let valid = 0;
  refs.forEach((ref, index) => {
    const namespace: string = ref.namespace || gatewayNamespace;
    if (namespace !== gatewayNamespace) {
      const permitted = referencePermitted(grants, { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: gatewayNamespace }, { group: '', kind: 'Secret', namespace, name: ref.name });
      if (!permitted) {
        problems.push({ reason: 'RefNotPermitted', message: `certificate refs ${index}: Certificate ref to secret ${namespace}/${ref.name} not permitted by any ReferenceGrant.` });
        return;
      }
    }
    const secret = secrets.get(`${namespace}/${ref.name}`);
    if (!secret) problems.push({ reason: 'InvalidCertificateRef', message: `certificate refs ${index}: Secret ${namespace}/${ref.name} does not exist.` });
    else if (secret.type !== 'kubernetes.io/tls') problems.push({ reason: 'InvalidCertificateRef', message: `certificate refs ${index}: Secret ${namespace}/${ref.name} must be of type kubernetes.io/tls.` });
    else if (!secret.keys.has('tls.crt') || !secret.keys.has('tls.key')) {
      problems.push({ reason: 'InvalidCertificateRef', message: `certificate refs ${index}: Secret ${namespace}/${ref.name} must contain tls.crt and tls.key.` });
    } else valid += 1;
  });
  if (valid > 0 && problems.length === 0) return { status: 'True', reason: 'ResolvedRefs', message: 'Listener references have been resolved' };
  // Some valid: the listener is programmed with those (status.ListenerReasonPartiallyInvalidCertificateRef).
  if (valid > 0) return { status: 'False', reason: 'PartiallyInvalidCertificateRef', message: problems.map((p) => p.message).join('\n') };
  const reason = problems.every((p) => p.reason === 'RefNotPermitted') ? 'RefNotPermitted' : 'InvalidCertificateRef';
  return { status: 'False', reason, message: `No valid secrets exist: ${problems.map((p) => p.message).join('\n')}` };
}

/** Whether a label selector (matchLabels and matchExpressions) selects these labels. */
function selects(selector: any, labels: Readonly<Record<string, string>>): boolean {
  for (const [name, value] of Object.entries(selector?.matchLabels ?? {})) if (labels[name] !== value) return false;
  for (const expression of selector?.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, expression.key);
    const value = labels[expression.key];
    const values: string[] = expression.values ?? [];
    const ok =
      expression.operator === 'In' ? has && values.includes(value!)
      : expression.operator === 'NotIn' ? !has || !values.includes(value!)
      : expression.operator === 'Exists' ? has
      : expression.operator === 'DoesNotExist' ? !has
      : false;
    if (!ok) return false;
  }
  return true;
}

/**
 * Whether a listener admits an HTTPRoute of `routeNamespace` (internal/gatewayapi/contexts.go
 * `AllowsKind`, `AllowsNamespace`): its `allowedRoutes.kinds` (by default the kinds of its
 * protocol, HTTPRoute for HTTP and HTTPS) and `allowedRoutes.namespaces.from`, `Same` by
 * default, `All`, or `Selector` over the route namespace's labels.
 */
export function listenerAllows(listener: any, gatewayNamespace: string, routeNamespace: string, namespaceLabels: Readonly<Record<string, string>>): boolean {
  const kinds: any[] | undefined = listener.allowedRoutes?.kinds;
  const kindAllowed = kinds && kinds.length > 0
    ? kinds.some((k) => (k.group ?? 'gateway.networking.k8s.io') === 'gateway.networking.k8s.io' && k.kind === 'HTTPRoute')
    : ['HTTP', 'HTTPS'].includes(listener.protocol);
  if (!kindAllowed) return false;
  const namespaces = listener.allowedRoutes?.namespaces ?? {};
  switch (namespaces.from ?? 'Same') {
    case 'All':
      return true;
    case 'Selector':
      return selects(namespaces.selector, namespaceLabels);
    default:
      return routeNamespace === gatewayNamespace;
  }
}

/**
 * Whether a route hostname and a listener hostname intersect (Gateway API: `*.` matches one
 * or more leading labels; an empty side matches every hostname; internal/gatewayapi/route.go
 * `computeHosts`).
 */
export function hostnamesIntersect(routeHostname: string | undefined, listenerHostname: string | undefined): boolean {
  if (!routeHostname || !listenerHostname) return true;
  if (routeHostname === listenerHostname) return true;
  const wildcardMatches = (wildcard: string, host: string) => wildcard.startsWith('*.') && host.endsWith(wildcard.slice(1)) && host.length > wildcard.length - 1;
  if (wildcardMatches(listenerHostname, routeHostname)) return true;
  if (wildcardMatches(routeHostname, listenerHostname)) return true;
  // Both wildcards: the longer suffix must end with the shorter one.
  if (routeHostname.startsWith('*.') && listenerHostname.startsWith('*.')) {
    const [a, b] = [routeHostname.slice(1), listenerHostname.slice(1)];
    return a.endsWith(b) || b.endsWith(a);
  }
  return false;
}

/**
 * An HTTPRoute's Accepted condition for one parent Gateway (internal/gatewayapi/route.go
 * `processAllowedListenersForParentRefs` and the hostname check of `processHTTPRouteParentRefs`):
 * the listeners its `sectionName` and `port` select, those that allow it, and of those one
 * whose hostname intersects the route's.
 */
export function routeAcceptance(route: KubeObject, parentRef: any, gateway: KubeObject, namespaceLabels: Readonly<Record<string, string>>): Verdict {
  const listeners: any[] = gateway.spec?.listeners ?? [];
  const selected = listeners.filter(
    (listener) => (parentRef.sectionName === undefined || parentRef.sectionName === listener.name) && (parentRef.port === undefined || parentRef.port === listener.port),
  );
  if (selected.length === 0) return { status: 'False', reason: 'NoMatchingParent', message: 'No listeners match this parent ref' };
  const allowed = selected.filter((listener) => listenerAllows(listener, gateway.metadata.namespace!, route.metadata.namespace!, namespaceLabels));
  if (allowed.length === 0) {
    return { status: 'False', reason: 'NotAllowedByListeners', message: 'No listeners included by this parent ref allowed this attachment.' };
  }
  const hostnames: (string | undefined)[] = route.spec?.hostnames?.length ? route.spec.hostnames : [undefined];
  if (!allowed.some((listener) => hostnames.some((hostname) => hostnamesIntersect(hostname, listener.hostname)))) {
    return {
      status: 'False',
      reason: 'NoMatchingListenerHostname',
      message: "There were no hostname intersections between the HTTPRoute and this parent ref's Listener(s).",
    };
  }
  return { status: 'True', reason: 'Accepted', message: 'Route is accepted' };
}

/**
 * A listener's conditions from its certificates' verdict (internal/gatewayapi/validate.go
 * `validateListenerConditions`): an invalid certificate leaves it Accepted but not Programmed;
 * a refused cross-namespace reference leaves it not Programmed; a partly invalid set of
 * certificates is still Programmed with the valid ones.
 */
export function listenerConditions(certificates: Verdict): { type: string; verdict: Verdict }[] {
  const accepted = { type: 'Accepted', verdict: { status: 'True', reason: 'Accepted', message: 'Listener has been successfully translated' } as Verdict };
  const programmed = { type: 'Programmed', verdict: { status: 'True', reason: 'Programmed', message: 'Sending translated listener configuration to the data plane' } as Verdict };
  const invalid = { type: 'Programmed', verdict: { status: 'False', reason: 'Invalid', message: 'Listener is invalid, see other Conditions for details.' } as Verdict };
  const refs = { type: 'ResolvedRefs', verdict: certificates };
  if (certificates.status === 'True' || certificates.reason === 'PartiallyInvalidCertificateRef') return [accepted, programmed, refs];
  if (certificates.reason === 'InvalidCertificateRef') return [accepted, invalid, refs];
  return [refs, invalid];
}

/** Whether a route accepted by a Gateway attaches to one of its listeners (counted in the listener's `attachedRoutes`). */
export function attachesTo(route: KubeObject, parentRef: any, gateway: KubeObject, listener: any, namespaceLabels: Readonly<Record<string, string>>): boolean {
  if ((parentRef.sectionName !== undefined && parentRef.sectionName !== listener.name) || (parentRef.port !== undefined && parentRef.port !== listener.port)) return false;
  if (!listenerAllows(listener, gateway.metadata.namespace!, route.metadata.namespace!, namespaceLabels)) return false;
  const hostnames: (string | undefined)[] = route.spec?.hostnames?.length ? route.spec.hostnames : [undefined];
  return hostnames.some((hostname) => hostnamesIntersect(hostname, listener.hostname));
}
