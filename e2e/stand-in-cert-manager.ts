import { X509Certificate } from 'node:crypto';
import type { KubeObject } from './kube-client';

/**
 * How cert-manager judges a Certificate and a CA issuer, for the e2e stand-in
 * (e2e/stand-in-controllers.ts) to refuse what cert-manager refuses. cert-manager's
 * controller cannot be built from the Go module proxy (its `cmd/controller` and
 * `cmd/webhook` modules are not served; README, "The e2e cluster"), so these rules are
 * cert-manager v1.21.2's own, with the file each comes from, and messages as it writes them.
 * Pure functions: test/e2e-stand-in-cert-manager.test.ts pins each rule.
 */

/**
 * What cert-manager's webhook refuses in a Certificate's spec, which a cluster would refuse
 * at admission (internal/apis/certmanager/validation/certificate.go `ValidateCertificateSpec`,
 * `validateIssuerRef`): an issuer reference without a name, a cert-manager issuer kind other
 * than Issuer or ClusterIssuer, and a certificate with no identity at all. Empty when valid.
 */
export function certificateSpecProblems(spec: any): string[] {
  const problems: string[] = [];
  const ref = spec?.issuerRef ?? {};
  if (!ref.name) problems.push('spec.issuerRef.name: Required value: must be specified');
  if (!ref.group || ref.group === 'cert-manager.io') {
    if (ref.kind && ref.kind !== 'Issuer' && ref.kind !== 'ClusterIssuer') {
      const hint = ref.group ? '' : ' (did you forget to set spec.issuerRef.kind.group?)';
      problems.push(`spec.issuerRef.kind: Invalid value: "${ref.kind}": must be one of Issuer or ClusterIssuer${hint}`);
    }
  }
  const identities = [spec?.commonName, spec?.literalSubject, ...(spec?.dnsNames ?? []), ...(spec?.emailAddresses ?? []), ...(spec?.ipAddresses ?? []), ...(spec?.otherNames ?? []), ...(spec?.uris ?? [])];
  if (!identities.some((identity) => identity !== undefined && identity !== '')) {
    problems.push(
      'spec: Invalid value: "": at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set',
    );
  }
  return problems;
}

/**
 * Why a CA issuer is not Ready, or undefined when it is (pkg/issuer/ca/setup.go `Setup`, with
 * pkg/util/kube/pki.go `SecretTLSCert`, `SecretTLSKeyRef`): its Secret must exist in the
 * issuer's resource namespace with a `tls.crt` that is a CA certificate and a `tls.key`.
 * Messages carry the "Error getting keypair for CA issuer: " prefix of the Ready condition.
 */
export function caIssuerProblem(secret: KubeObject | undefined, namespace: string, name: string): string | undefined {
  const prefix = 'Error getting keypair for CA issuer: ';
  if (!secret) return `${prefix}secrets "${name}" not found`;
  const data: Record<string, string> = (secret as any).data ?? {};
  if (!data['tls.crt']) return `${prefix}no data for "tls.crt" in secret '${namespace}/${name}'`;
  if (!data['tls.key']) return `${prefix}no data for "tls.key" in secret '${namespace}/${name}'`;
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(Buffer.from(data['tls.crt'], 'base64'));
  } catch (error) {
    return `${prefix}${error instanceof Error ? error.message : String(error)}`;
  }
  return certificate.ca ? undefined : `${prefix}certificate is not a CA`;
}
