import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../e2e/kube-client';
import { hostnamesIntersect, listenerCertificates, listenerConditions, type ReferenceGrant, routeAcceptance, type SecretSeen } from '../e2e/stand-in-gateway-api';

// The e2e's Envoy Gateway stand-in refuses what Envoy Gateway v1.9.1 refuses (each rule's
// upstream file is named in e2e/stand-in-gateway-api.ts). Before, every listener and route
// was accepted whatever it named.

const tls = (keys = ['tls.crt', 'tls.key']): SecretSeen => ({ type: 'kubernetes.io/tls', keys: new Set(keys) });
const httpsListener = (certificateRefs: object[], extra: object = {}) => ({ name: 'https', port: 443, protocol: 'HTTPS', hostname: 'webapp.example.com', tls: { certificateRefs }, ...extra });
const gateway = (listeners: object[]): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'webapp', namespace: 'webapp' },
  spec: { gatewayClassName: 'envoy-gateway', listeners },
} as KubeObject);
const route = (namespace: string, hostnames?: string[]): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'webapp', namespace },
  spec: { ...(hostnames ? { hostnames } : {}) },
} as KubeObject);
const grant = (from: string, name?: string): ReferenceGrant => ({
  metadata: { name: 'certificates', namespace: 'certificates' },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: from }], to: [{ group: '', kind: 'Secret', ...(name ? { name } : {}) }] },
});

describe('a Gateway listener\'s certificates, as Envoy Gateway resolves them', () => {
  const secrets = new Map<string, SecretSeen>([
    ['webapp/webapp-tls', tls()],
    ['certificates/shared-tls', tls()],
    ['webapp/opaque', { type: 'Opaque', keys: new Set(['tls.crt', 'tls.key']) }],
    ['webapp/no-key', tls(['tls.crt'])],
  ]);

  it('resolves a TLS Secret of its own namespace', () => {
    expect(listenerCertificates('webapp', httpsListener([{ name: 'webapp-tls' }]), secrets, [])).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
  });

  it('refuses a Secret in another namespace without a ReferenceGrant, and is then not Programmed', () => {
    const verdict = listenerCertificates('webapp', httpsListener([{ name: 'shared-tls', namespace: 'certificates' }]), secrets, []);
    expect(verdict).toEqual({
      status: 'False',
      reason: 'RefNotPermitted',
      message: 'No valid secrets exist: certificate refs 0: Certificate ref to secret certificates/shared-tls not permitted by any ReferenceGrant.',
    });
    expect(listenerConditions(verdict).find((c) => c.type === 'Programmed')?.verdict).toMatchObject({ status: 'False', reason: 'Invalid' });
  });

  it('accepts it under a ReferenceGrant from the Gateway\'s namespace, for every Secret or the one named', () => {
    const ref = httpsListener([{ name: 'shared-tls', namespace: 'certificates' }]);
    expect(listenerCertificates('webapp', ref, secrets, [grant('webapp')]).status).toBe('True');
    expect(listenerCertificates('webapp', ref, secrets, [grant('webapp', 'shared-tls')]).status).toBe('True');
    expect(listenerCertificates('webapp', ref, secrets, [grant('webapp', 'other-tls')]).reason).toBe('RefNotPermitted');
    expect(listenerCertificates('webapp', ref, secrets, [grant('billing')]).reason).toBe('RefNotPermitted');
  });

  it('refuses a missing Secret, one not of type kubernetes.io/tls, and one without both keys, Accepted but not Programmed', () => {
    for (const [name, message] of [
      ['absent', 'Secret webapp/absent does not exist.'],
      ['opaque', 'Secret webapp/opaque must be of type kubernetes.io/tls.'],
      ['no-key', 'Secret webapp/no-key must contain tls.crt and tls.key.'],
    ] as const) {
      const verdict = listenerCertificates('webapp', httpsListener([{ name }]), secrets, []);
      expect(verdict, name).toEqual({ status: 'False', reason: 'InvalidCertificateRef', message: `No valid secrets exist: certificate refs 0: ${message}` });
      const conditions = Object.fromEntries(listenerConditions(verdict).map((c) => [c.type, c.verdict.status]));
      expect(conditions, name).toEqual({ Accepted: 'True', Programmed: 'False', ResolvedRefs: 'False' });
    }
  });
});

describe('an HTTPRoute\'s attachment to a Gateway, as Envoy Gateway accepts it', () => {
  const listeners = [
    { name: 'http', port: 80, protocol: 'HTTP', hostname: 'webapp.example.com' },
    httpsListener([{ name: 'webapp-tls' }]),
  ];

  it('accepts a route of the Gateway\'s namespace naming an existing listener with a shared hostname', () => {
    expect(routeAcceptance(route('webapp', ['webapp.example.com']), { name: 'webapp', sectionName: 'https' }, gateway(listeners), {})).toMatchObject({ status: 'True', reason: 'Accepted' });
  });

  it('refuses a sectionName or port no listener has (NoMatchingParent)', () => {
    expect(routeAcceptance(route('webapp'), { name: 'webapp', sectionName: 'htps' }, gateway(listeners), {})).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
    expect(routeAcceptance(route('webapp'), { name: 'webapp', port: 8443 }, gateway(listeners), {})).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
  });

  it('refuses a route of another namespace unless the listener allows it (NotAllowedByListeners)', () => {
    expect(routeAcceptance(route('billing'), { name: 'webapp', namespace: 'webapp' }, gateway(listeners), {})).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
    const all = listeners.map((l) => ({ ...l, allowedRoutes: { namespaces: { from: 'All' } } }));
    expect(routeAcceptance(route('billing'), { name: 'webapp', namespace: 'webapp' }, gateway(all), {}).status).toBe('True');
    const selected = listeners.map((l) => ({ ...l, allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'billing' } } } } }));
    expect(routeAcceptance(route('billing'), { name: 'webapp', namespace: 'webapp' }, gateway(selected), { team: 'billing' }).status).toBe('True');
    expect(routeAcceptance(route('billing'), { name: 'webapp', namespace: 'webapp' }, gateway(selected), { team: 'web' }).reason).toBe('NotAllowedByListeners');
  });

  it('refuses a route whose hostnames no selected listener shares (NoMatchingListenerHostname)', () => {
    expect(routeAcceptance(route('webapp', ['billing.example.com']), { name: 'webapp' }, gateway(listeners), {})).toMatchObject({ status: 'False', reason: 'NoMatchingListenerHostname' });
  });

  it('matches hostnames as Gateway API does: a wildcard covers one or more leading labels', () => {
    expect(hostnamesIntersect('webapp.example.com', '*.example.com')).toBe(true);
    expect(hostnamesIntersect('a.b.example.com', '*.example.com')).toBe(true);
    expect(hostnamesIntersect('example.com', '*.example.com')).toBe(false);
    expect(hostnamesIntersect('*.example.com', 'webapp.example.com')).toBe(true);
    expect(hostnamesIntersect(undefined, 'webapp.example.com')).toBe(true);
    expect(hostnamesIntersect('webapp.example.com', 'billing.example.com')).toBe(false);
  });
});
