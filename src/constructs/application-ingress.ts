import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { PORTS } from '../constants';

/** The ingress-nginx IngressClass. */
export const INGRESS_CLASS = 'nginx';

/** cert-manager's ingress-shim reads this annotation and issues the TLS certificate. */
export const CLUSTER_ISSUER_ANNOTATION = 'cert-manager.io/cluster-issuer';

export interface ApplicationIngressProps {
  /** Ingress name: the application name. */
  readonly name: string;
  /** Namespace of the Ingress and its backend Service. */
  readonly namespace: string;
  /** Labels of the Ingress. */
  readonly labels: Readonly<Record<string, string>>;
  /** The one host the application is served on in this environment (1.2). */
  readonly host: string;
  /**
   * Backend Service, by name: in canary mode Flagger owns the Services, so the chart
   * cannot hand over a Service object.
   */
  readonly serviceName: string;
  /** Secret cert-manager writes the certificate into. */
  readonly tlsSecretName: string;
  /** ClusterIssuer that signs the certificate (issuers are rendered by the infrastructure). */
  readonly clusterIssuer: string;
}

/**
 * HTTPS entry to the application (4): ingress-nginx, one host, TLS from cert-manager,
 * every path to the Service's port 80. An L1 object: cdk8s-plus' Ingress wants a Service
 * object, which canary mode does not have.
 */
export class ApplicationIngress extends k8s.KubeIngress {
  constructor(scope: Construct, id: string, props: ApplicationIngressProps) {
    super(scope, id, {
      metadata: {
        name: props.name,
        namespace: props.namespace,
        labels: { ...props.labels },
        annotations: { [CLUSTER_ISSUER_ANNOTATION]: props.clusterIssuer },
      },
      spec: {
        ingressClassName: INGRESS_CLASS,
        tls: [{ hosts: [props.host], secretName: props.tlsSecretName }],
        rules: [
          {
            host: props.host,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: props.serviceName, port: { number: PORTS.service } } },
                },
              ],
            },
          },
        ],
      },
    });
  }
}
