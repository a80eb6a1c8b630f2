import type { Construct } from 'constructs';
import { Certificate } from '../imports/certificate-cert-manager.io';

export interface ApplicationCertificateProps {
  /** Certificate name: the application name. */
  readonly name: string;
  /** Namespace of the application; the TLS Secret is written there. */
  readonly namespace: string;
  /** Labels of the Certificate. */
  readonly labels: Readonly<Record<string, string>>;
  /** The application's host in this environment (1.2). */
  readonly host: string;
  /** Secret the Ingress reads its TLS certificate from. */
  readonly secretName: string;
  /** ClusterIssuer that signs the certificate (rendered by the infrastructure chart). */
  readonly clusterIssuer: string;
}

/**
 * The TLS certificate of the application's host (2.7, 4.2), explicit rather than from
 * the Ingress annotation, so that one object owns the TLS Secret and
 * `kubectl get certificates -A` (1.3.4) lists it with its issuer.
 */
export class ApplicationCertificate extends Certificate {
  constructor(scope: Construct, id: string, props: ApplicationCertificateProps) {
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        secretName: props.secretName,
        dnsNames: [props.host],
        issuerRef: { group: 'cert-manager.io', kind: 'ClusterIssuer', name: props.clusterIssuer },
      },
    });
  }
}
