import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { HTTP_PORT_NAME } from '../contract/choices';
import { PORTS } from '../contract/contract';
import { ApplicationRoute } from '../constructs/application-route';
import type { Application } from '../environments';
import type { DeliveryWorkloads, StrategyTrafficProps } from './delivery-strategy';

export interface ServiceRouteProps extends StrategyTrafficProps {
  /** Application name: the Service's and the HTTPRoute's. */
  readonly name: string;
  /** The application's namespace. */
  readonly namespace: string;
  /** Labels of both objects. */
  readonly labels: Readonly<Record<string, string>>;
  /** The pods the Service selects: the strategy decides which. */
  readonly selector: Readonly<Record<string, string>>;
}

/**
 * The Service 80 -> 8080 (4) and the HTTPRoute from the Gateway to it: how rolling and
 * blue-green deliver traffic (canary leaves both to Flagger).
 */
export function serviceAndRoute(scope: Construct, props: ServiceRouteProps): void {
  const service = new kplus.Service(scope, 'service', {
    metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels } },
    type: kplus.ServiceType.CLUSTER_IP,
    ports: [{ name: HTTP_PORT_NAME, port: PORTS.service, targetPort: PORTS.application, protocol: kplus.Protocol.TCP }],
  });
  for (const [key, value] of Object.entries(props.selector)) service.selectLabel(key, value);
  new ApplicationRoute(scope, 'route', {
    name: props.name,
    namespace: props.namespace,
    labels: props.labels,
    host: props.host,
    gatewayName: props.gatewayName,
    serviceName: service.name,
  });
}

/** The `route` of a strategy that serves through its own Service: the application's, selecting `selector`. */
export function throughService(application: Application, labels: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>>): DeliveryWorkloads['route'] {
  return (scope, traffic) => serviceAndRoute(scope, { ...traffic, name: application.name, namespace: application.namespace, labels, selector });
}
