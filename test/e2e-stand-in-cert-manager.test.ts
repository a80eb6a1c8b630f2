import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../e2e/kube-client';
import { Pki } from '../e2e/pki';
import { caIssuerProblem, certificateSpecProblems } from '../e2e/stand-in-cert-manager';
import { temporaryDirectory } from './support';

// The e2e's cert-manager stand-in refuses what cert-manager v1.21.2 refuses (each rule's
// upstream file is named in e2e/stand-in-cert-manager.ts). Before, any issuer kind was
// looked up and a CA issuer was Ready as soon as a Secret of its name existed.

const dir = temporaryDirectory('platform-gitops-cert-manager-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const pki = new Pki(path.join(dir, 'pki'));

const spec = (extra: object = {}) => ({ secretName: 'webapp-tls', dnsNames: ['webapp.example.com'], issuerRef: { name: 'local-ca', kind: 'ClusterIssuer' }, ...extra });

describe('a Certificate, as cert-manager\'s webhook validates it', () => {
  it('admits an issuer of kind Issuer or ClusterIssuer, or of another group\'s kind', () => {
    expect(certificateSpecProblems(spec())).toEqual([]);
    expect(certificateSpecProblems(spec({ issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } }))).toEqual([]);
    expect(certificateSpecProblems(spec({ issuerRef: { name: 'pca', kind: 'AWSPCAClusterIssuer', group: 'awspca.cert-manager.io' } }))).toEqual([]);
  });

  it('refuses a cert-manager issuer kind that does not exist, hinting at the group when none is set', () => {
    expect(certificateSpecProblems(spec({ issuerRef: { name: 'local-ca', kind: 'CertificateIssuer' } }))).toEqual([
      'spec.issuerRef.kind: Invalid value: "CertificateIssuer": must be one of Issuer or ClusterIssuer (did you forget to set spec.issuerRef.kind.group?)',
    ]);
    expect(certificateSpecProblems(spec({ issuerRef: { name: 'local-ca', kind: 'CertificateIssuer', group: 'cert-manager.io' } }))).toEqual([
      'spec.issuerRef.kind: Invalid value: "CertificateIssuer": must be one of Issuer or ClusterIssuer',
    ]);
  });

  it('refuses an issuer reference without a name, and a certificate with no identity', () => {
    expect(certificateSpecProblems(spec({ issuerRef: { kind: 'ClusterIssuer' } }))).toEqual(['spec.issuerRef.name: Required value: must be specified']);
    expect(certificateSpecProblems({ secretName: 'x', issuerRef: { name: 'local-ca', kind: 'ClusterIssuer' } })).toEqual([
      'spec: Invalid value: "": at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set',
    ]);
  });
});

describe('a CA issuer, as cert-manager sets it up', () => {
  const b64 = (file: string) => fs.readFileSync(file).toString('base64');
  const secret = (data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'local-ca-root', namespace: 'cert-manager' }, data }) as KubeObject;
  const ca = pki.ca('root', '/CN=root');
  const leaf = pki.leaf('leaf', ca, '/CN=leaf', 'server', ['leaf.example.com']);

  it('is Ready with a CA certificate and its key', () => {
    expect(caIssuerProblem(secret({ 'tls.crt': b64(ca.cert), 'tls.key': b64(ca.key) }), 'cert-manager', 'local-ca-root')).toBeUndefined();
  });

  it('is not Ready without its Secret, without tls.crt or tls.key, or when the certificate is not a CA', () => {
    expect(caIssuerProblem(undefined, 'cert-manager', 'local-ca-root')).toBe('Error getting keypair for CA issuer: secrets "local-ca-root" not found');
    expect(caIssuerProblem(secret({ 'tls.key': b64(ca.key) }), 'cert-manager', 'local-ca-root')).toBe(
      'Error getting keypair for CA issuer: no data for "tls.crt" in secret \'cert-manager/local-ca-root\'',
    );
    expect(caIssuerProblem(secret({ 'tls.crt': b64(ca.cert) }), 'cert-manager', 'local-ca-root')).toBe(
      'Error getting keypair for CA issuer: no data for "tls.key" in secret \'cert-manager/local-ca-root\'',
    );
    expect(caIssuerProblem(secret({ 'tls.crt': b64(leaf.cert), 'tls.key': b64(leaf.key) }), 'cert-manager', 'local-ca-root')).toBe(
      'Error getting keypair for CA issuer: certificate is not a CA',
    );
  });
});
