import { Construct } from 'constructs';
import { GATEWAY, SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import { Certificate, CertificateSpecPrivateKeyAlgorithm } from '../imports/certificate-cert-manager.io';
import { ClusterIssuer } from '../imports/clusterissuer-cert-manager.io';
import { ACME_DIRECTORIES, type Issuer, issuerName } from '../environments/infrastructure-schema';

export interface PlatformIssuerProps {
  /** The environment's issuer configuration (`infrastructure.issuer`). */
  readonly issuer: Issuer;
  /** cert-manager's namespace: the self-signed CA's key pair is kept there. */
  readonly certManagerNamespace: string;
  /**
   * Each application's Gateway, whose `http` listener serves the ACME HTTP-01 challenges of
   * its host: cert-manager creates each challenge's HTTPRoute in the Certificate's namespace
   * with the parentRefs of the solver selected for the host.
   */
  readonly gateways: readonly { readonly name: string; readonly namespace: string; readonly host: string }[];
  /** Sync wave of the issuers: after cert-manager has installed its CRDs. */
  readonly syncWave: number;
}

/**
 * The environment's ClusterIssuer (2.7), named after its kind: `local-ca`, a CA whose
 * root is self-signed inside the cluster (workstations have no public DNS for ACME), or
 * `letsencrypt-staging` / `letsencrypt-production`, ACME with HTTP-01 through the
 * Gateway (cert-manager's `gatewayHTTPRoute` solver; its Gateway API support is enabled in
 * the cert-manager release's values). ACME account keys and the CA key pair are written by cert-manager
 * into Secrets it owns; none is in git.
 */
export class PlatformIssuer extends Construct {
  /** The ClusterIssuer certificates name in `issuerRef`. */
  public readonly clusterIssuer: ClusterIssuer;
  /** Its name, equal to the environment's `tls.clusterIssuer` (validated). */
  public readonly name: string;

  constructor(scope: Construct, id: string, props: PlatformIssuerProps) {
    super(scope, id);
    this.name = issuerName(props.issuer);
    const annotations = { [SYNC_WAVE_ANNOTATION]: String(props.syncWave) };

    if (props.issuer.type === 'self-signed-ca') {
      const bootstrapName = `${this.name}-bootstrap`;
      const rootSecret = `${this.name}-root`;
      new ClusterIssuer(this, 'bootstrap', {
        metadata: { name: bootstrapName, annotations },
        spec: { selfSigned: {} },
      });
      new Certificate(this, 'root', {
        metadata: { name: rootSecret, namespace: props.certManagerNamespace, annotations },
        spec: {
          isCa: true,
          commonName: `${this.name} root`,
          secretName: rootSecret,
          privateKey: { algorithm: CertificateSpecPrivateKeyAlgorithm.ECDSA, size: 256 },
          issuerRef: { group: 'cert-manager.io', kind: 'ClusterIssuer', name: bootstrapName },
        },
      });
      // cert-manager reads a ClusterIssuer's CA Secret from its own namespace. The CA
      // issuer comes a wave after the root certificate: until the root's Secret exists
      // cert-manager reports it Ready=False (ErrGetKeyPair), which Argo CD's health check
      // for ClusterIssuers reads as Degraded and which fails the sync (seen on the e2e cluster).
      this.clusterIssuer = new ClusterIssuer(this, 'issuer', {
        metadata: { name: this.name, annotations: { [SYNC_WAVE_ANNOTATION]: String(props.syncWave + 1) } },
        spec: { ca: { secretName: rootSecret } },
      });
    } else {
      this.clusterIssuer = new ClusterIssuer(this, 'issuer', {
        metadata: { name: this.name, annotations },
        spec: {
          acme: {
            server: ACME_DIRECTORIES[props.issuer.directory],
            email: props.issuer.email,
            privateKeySecretRef: { name: `${this.name}-account` },
            // One HTTP-01 solver per application, selected by its host: its challenges are
            // served by its own Gateway. `selector.dnsNames` (cert-manager v1.21 CRD,
            // schemas/crds/certmanager-clusterissuer.yaml): a solver whose dnsNames match the
            // Certificate's wins over any other.
            solvers: props.gateways.map((gateway) => ({
              selector: { dnsNames: [gateway.host] },
              http01: {
                gatewayHttpRoute: {
                  parentRefs: [
                    {
                      group: 'gateway.networking.k8s.io',
                      kind: 'Gateway',
                      name: gateway.name,
                      namespace: gateway.namespace,
                      sectionName: GATEWAY.listeners.http,
                    },
                  ],
                },
              },
            })),
          },
        },
      });
    }
  }
}
