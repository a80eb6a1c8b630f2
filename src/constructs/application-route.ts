import type { Construct } from 'constructs';
import { PORTS } from '../contract/contract';
import { GATEWAY } from '../contract/upstream';
import { HttpRoute, HttpRouteSpecRulesMatchesPathType } from '../imports/httproute-gateway.networking.k8s.io';

export interface ApplicationRouteProps {
  /** HTTPRoute name: the application name. */
  readonly name: string;
  /** Namespace of the route, its Gateway and its backend Service. */
  readonly namespace: string;
  /** Labels of the route. */
  readonly labels: Readonly<Record<string, string>>;
  /** The application's host (1.2). */
  readonly host: string;
  /** The Gateway the route attaches to, on its `https` listener. */
  readonly gatewayName: string;
  /** Backend Service, by name, on the Service port (80). */
  readonly serviceName: string;
}

/**
 * The application's HTTPRoute (4): every path of its host, on the Gateway's HTTPS listener,
 * to the Service's port 80. Rolling and blue-green only: in canary mode Flagger generates
 * and owns the HTTPRoute `<app>` (its weights are the traffic split).
 */
export class ApplicationRoute extends HttpRoute {
  constructor(scope: Construct, id: string, props: ApplicationRouteProps) {
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        parentRefs: [{ name: props.gatewayName, sectionName: GATEWAY.listeners.https }],
        hostnames: [props.host],
        rules: [
          {
            matches: [{ path: { type: HttpRouteSpecRulesMatchesPathType.PATH_PREFIX, value: '/' } }],
            backendRefs: [{ name: props.serviceName, port: PORTS.service }],
          },
        ],
      },
    });
  }
}
