import { Construct } from 'constructs';
import { PORTS } from '../contract/contract';
import { CHART_WAVES } from '../contract/choices';
import { GATEWAY, SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import {
  EnvoyProxy,
  EnvoyProxySpecProviderKubernetesEnvoyServiceType,
  EnvoyProxySpecProviderType,
} from '../imports/envoyproxy-gateway.envoyproxy.io';
import {
  Gateway,
  GatewaySpecListenersAllowedRoutesNamespacesFrom,
  GatewaySpecListenersTlsMode,
} from '../imports/gateway-gateway.networking.k8s.io';
import {
  HttpRoute,
  HttpRouteSpecRulesFiltersRequestRedirectScheme,
  HttpRouteSpecRulesFiltersRequestRedirectStatusCode,
  HttpRouteSpecRulesFiltersType,
} from '../imports/httproute-gateway.networking.k8s.io';

/** How the environment's Envoy proxies are sized and reached (`infrastructure.gateway`). */
export interface GatewaySizing {
  /** Envoy proxy pods. */
  readonly replicas: number;
  /** Service type of the proxies: a cloud load balancer, or node ports on a workstation. */
  readonly serviceType: 'LoadBalancer' | 'NodePort';
}

export interface ApplicationGatewayProps {
  /** Name of the Gateway, its EnvoyProxy and its redirect route prefix: the application name. */
  readonly name: string;
  /** Namespace of the application: the Gateway, its routes and the TLS Secret live there. */
  readonly namespace: string;
  /** Labels of the objects. */
  readonly labels: Readonly<Record<string, string>>;
  /** The one host the application is served on in this environment (1.2). */
  readonly host: string;
  /** Secret holding the host's certificate (written by cert-manager for the ApplicationCertificate). */
  readonly tlsSecretName: string;
  /** GatewayClass the Gateway belongs to (Envoy Gateway's). */
  readonly gatewayClassName: string;
  /** Name of the Envoy proxy Deployment and Service in Envoy Gateway's namespace. */
  readonly proxyName: string;
  /** Per-environment sizing of the proxies. */
  readonly sizing: GatewaySizing;
}

/**
 * The HTTPS entry to the application (4, 1.3.4) on Gateway API, served by Envoy Gateway:
 * - a Gateway with two listeners for the application's host: `http` on 80, which redirects
 *   every request to HTTPS and is where cert-manager attaches the HTTPRoutes of ACME HTTP-01
 *   challenges (their exact-path matches win over the redirect's `/` prefix: Gateway API's
 *   HTTPRoute precedence), and `https` on 443, terminating TLS with the ApplicationCertificate's
 *   Secret (no cert-manager annotation on the Gateway: one owner per Secret);
 * - an EnvoyProxy the Gateway names in `spec.infrastructure.parametersRef` (Envoy Gateway
 *   v1.9.0 site/content/en/latest/tasks/operations/customize-envoyproxy.md): the environment's
 *   replicas and Service type, and fixed names for the proxy Deployment and Service;
 * - the HTTPRoute of the redirect. Routes attach from the Gateway's own namespace only.
 * The route to the application is the ApplicationRoute (or, in canary mode, Flagger's).
 */
export class ApplicationGateway extends Construct {
  /** The Gateway routes attach to. */
  public readonly gateway: Gateway;
  /** The EnvoyProxy sizing the Gateway's proxies. */
  public readonly proxy: EnvoyProxy;
  /** The HTTP to HTTPS redirect on the `http` listener. */
  public readonly redirect: HttpRoute;
  /** The Gateway's name. */
  public readonly name: string;

  constructor(scope: Construct, id: string, props: ApplicationGatewayProps) {
    super(scope, id);
    this.name = props.name;
    const metadata = (name: string) => ({ name, namespace: props.namespace, labels: { ...props.labels } });
    const serviceType =
      props.sizing.serviceType === 'LoadBalancer'
        ? EnvoyProxySpecProviderKubernetesEnvoyServiceType.LOAD_BALANCER
        : EnvoyProxySpecProviderKubernetesEnvoyServiceType.NODE_PORT;

    this.proxy = new EnvoyProxy(this, 'proxy', {
      metadata: { ...metadata(props.name), annotations: { [SYNC_WAVE_ANNOTATION]: String(CHART_WAVES.gatewayParameters) } },
      spec: {
        provider: {
          type: EnvoyProxySpecProviderType.KUBERNETES,
          kubernetes: {
            envoyDeployment: { name: props.proxyName, replicas: props.sizing.replicas },
            envoyService: { name: props.proxyName, type: serviceType },
          },
        },
      },
    });

    const allowedRoutes = { namespaces: { from: GatewaySpecListenersAllowedRoutesNamespacesFrom.SAME } };
    this.gateway = new Gateway(this, 'gateway', {
      metadata: metadata(props.name),
      spec: {
        gatewayClassName: props.gatewayClassName,
        infrastructure: { parametersRef: { group: EnvoyProxy.GVK.apiVersion.split('/')[0]!, kind: EnvoyProxy.GVK.kind, name: props.name } },
        listeners: [
          { name: GATEWAY.listeners.http, protocol: 'HTTP', port: PORTS.http, hostname: props.host, allowedRoutes },
          {
            name: GATEWAY.listeners.https,
            protocol: 'HTTPS',
            port: PORTS.https,
            hostname: props.host,
            tls: { mode: GatewaySpecListenersTlsMode.TERMINATE, certificateRefs: [{ kind: 'Secret', name: props.tlsSecretName }] },
            allowedRoutes,
          },
        ],
      },
    });

    this.redirect = new HttpRoute(this, 'redirect', {
      metadata: metadata(`${props.name}-https-redirect`),
      spec: {
        parentRefs: [{ name: props.name, sectionName: GATEWAY.listeners.http }],
        hostnames: [props.host],
        rules: [
          {
            filters: [
              {
                type: HttpRouteSpecRulesFiltersType.REQUEST_REDIRECT,
                requestRedirect: {
                  scheme: HttpRouteSpecRulesFiltersRequestRedirectScheme.HTTPS,
                  statusCode: HttpRouteSpecRulesFiltersRequestRedirectStatusCode.VALUE_301,
                },
              },
            ],
          },
        ],
      },
    });
  }
}
