import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { PORTS } from '../constants';

/** The ingress-nginx IngressClass. */
export const INGRESS_CLASS = 'nginx';

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
  /** Secret the TLS certificate is read from (written by cert-manager for the ApplicationCertificate). */
  readonly tlsSecretName: string;
}

/**
 * HTTPS entry to the application (4): ingress-nginx, one host, TLS from the Secret of
 * the ApplicationCertificate (no cert-manager annotation: one owner per Secret),
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
