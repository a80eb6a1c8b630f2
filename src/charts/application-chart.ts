import { Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { DATABASE, PLATFORM_NAMESPACES } from '../contract/choices';
import { BROKER, LABELS, METRICS, PORTS } from '../contract/contract';
import { ACME_HTTP01_SOLVER, GATEWAY, MONITORING_SELECTOR_LABEL, STRIMZI } from '../contract/upstream';
import { ApplicationCertificate } from '../constructs/application-certificate';
import { ApplicationGateway } from '../constructs/application-gateway';
import { ApplicationPodMonitor } from '../constructs/application-pod-monitor';
import { DeploymentAlertRules } from '../constructs/deployment-alert-rules';
import { DNS_PEER, NetworkPolicies } from '../constructs/network-policies';
import { SchemaMigration } from '../constructs/schema-migration';
import { SmokeHook } from '../constructs/smoke-hook';
import { renderWorkloads } from '../strategies/registry';
import type { Application, Environment } from '../environments';
import { newestTagOf } from '../environments/strategy-registry';
import { gatewayProxyName, hostOf, imageReference, migrationsName, primaryName, serviceAddress, smokeName, tlsSecretName, brokerClientSecret, databaseSecret } from '../contract/naming';

export interface ApplicationChartProps {
  /** The validated environment the application runs in: its database, broker and Gateway sizing. */
  readonly environment: Environment;
  /** The application to render, one of `environment.applications`. */
  readonly application: Application;
}

/**
 * The Envoy proxy pods of an application's Gateway: Envoy Gateway's labels plus the owning
 * Gateway's name and namespace (the proxy Deployment's selector).
 */
export function gatewayProxyPodLabels(gateway: string, namespace: string): Record<string, string> {
  return { ...GATEWAY.proxyPodLabels, [GATEWAY.owningGatewayNameLabel]: gateway, [GATEWAY.owningGatewayNamespaceLabel]: namespace };
}

/**
 * One application in one environment (2.1, 4), `dist/<env>/<application>.yaml`, in its
 * namespace (a Namespace object of the infrastructure chart): its NetworkPolicies,
 * identity, workload(s) in its delivery strategy (1.4), Service 80 -> 8080, its
 * HTTPS entry on Gateway API (Gateway, HTTPRoute, Certificate), migrations and smoke hooks,
 * and what the monitoring stack needs to watch it (PodMonitor, `deployment.rules` scoped to
 * its namespace). The Gateway API objects are here, not in the infrastructure chart: this
 * chart syncs after the infrastructure is healthy, so their CRDs exist by then. Nothing in
 * it is cluster-scoped: the GatewayClass all Gateways share is the issuers chart's, so
 * two applications' Argo CD Applications never own one object.
 */
export class ApplicationChart extends Chart {
  constructor(scope: Construct, id: string, props: ApplicationChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { application } = props;
    const { image, tls } = application;
    const appLabels = { [LABELS.app]: application.name };

    // Default deny, then what the application needs: HTTP from the Gateway's Envoy proxies
    // and from the smoke hook (4.1), scraping from Prometheus, and DNS. The allows select every
    // pod of the namespace, because in canary mode Flagger's `<app>-primary` pods carry
    // `app: <app>-primary`, not `app: <app>`. cert-manager's HTTP-01 solver pods run here too
    // (the Certificate's namespace) and answer the proxies on 8089.
    const smoke = smokeName(application.name);
    const smokeLabels = { [LABELS.app]: smoke };
    const { database, broker } = props.environment;
    const databaseHost = serviceAddress(DATABASE.serverName, database.namespace);
    // The contract's `kafka-cluster-kafka-bootstrap:9092`, addressed from this namespace.
    const bootstrapServers = `${serviceAddress(BROKER.bootstrapService, broker.namespace)}:${PORTS.broker}`;
    const connectionString = { secret: databaseSecret(application.name), key: 'connection-string' };
    const brokerPorts = [{ port: PORTS.broker }, ...(broker.tlsListener ? [{ port: STRIMZI.listeners.tls.port }] : [])];
    const proxies = gatewayProxyPodLabels(application.name, application.namespace);
    const databasePodLabels = { [LABELS.app]: DATABASE.serverName };
    const brokerPodLabels = { [STRIMZI.clusterLabel]: BROKER.clusterName };
    new NetworkPolicies(this, 'network-policies', {
      namespace: application.namespace,
      labels: appLabels,
      ingress: [
        { name: 'gateway', namespace: PLATFORM_NAMESPACES.gateway, podLabels: proxies, ports: [{ port: PORTS.application }] },
        {
          name: 'gateway-to-acme-solver',
          namespace: PLATFORM_NAMESPACES.gateway,
          podLabels: proxies,
          localPodLabels: ACME_HTTP01_SOLVER.podLabels,
          ports: [{ port: ACME_HTTP01_SOLVER.port }],
        },
        { name: 'monitoring', namespace: PLATFORM_NAMESPACES.monitoring, ports: [{ port: METRICS.port }] },
        { name: smoke, namespace: application.namespace, podLabels: smokeLabels, ports: [{ port: PORTS.application }] },
      ],
      egress: [
        DNS_PEER,
        { name: 'database', namespace: database.namespace, podLabels: databasePodLabels, ports: [{ port: PORTS.database }] },
        { name: 'broker', namespace: broker.namespace, podLabels: brokerPodLabels, ports: brokerPorts },
      ],
    });

    const serviceAccount = new kplus.ServiceAccount(this, 'service-account', {
      metadata: { name: application.name, namespace: application.namespace, labels: appLabels },
      automountToken: false,
    });

    // 1.3 step 5: pending migrations run before any Deployment of this release rolls out.
    new SchemaMigration(this, 'migrations', {
      name: migrationsName(application.name),
      namespace: application.namespace,
      image: imageReference(image.registry, image.project, migrationsName(application.name), newestTagOf(application)),
      imagePullSecret: image.pullSecret,
      connectionString,
      resources: application.resources,
    });

    // 1.4: the application's delivery strategy renders its workloads (src/strategies/).
    const workloads = renderWorkloads(this, {
      application,
      labels: appLabels,
      serviceAccount,
      // 1.3 steps 5-6: where the database and the broker are; credentials stay in Secrets.
      environment: {
        DATABASE_HOST: databaseHost,
        DATABASE_PORT: String(PORTS.database),
        DATABASE_NAME: application.database.name,
        DATABASE_CONNECTION_STRING: connectionString,
        KAFKA_BOOTSTRAP_SERVERS: bootstrapServers,
        KAFKA_USERNAME: { secret: brokerClientSecret(application.name), key: 'username' },
        KAFKA_PASSWORD: { secret: brokerClientSecret(application.name), key: 'password' },
      },
    });

    const host = hostOf(application.url);
    const gateway = new ApplicationGateway(this, 'gateway', {
      name: application.name,
      namespace: application.namespace,
      labels: appLabels,
      host,
      tlsSecretName: tlsSecretName(application.name),
      gatewayClassName: GATEWAY.className,
      proxyName: gatewayProxyName(application.name),
      sizing: props.environment.infrastructure.gateway,
    });
    // Then the strategy routes the Gateway's traffic to them.
    workloads.route(this, { host, gatewayName: gateway.name });

    new ApplicationCertificate(this, 'certificate', {
      name: application.name,
      namespace: application.namespace,
      labels: appLabels,
      host,
      secretName: tlsSecretName(application.name),
      clusterIssuer: tls.clusterIssuer,
    });

    // 4.1 after every sync of this chart: a PostSync hook runs once the Deployments are
    // healthy, which is why it lives here and not in a chart (Argo CD Application) of its own.
    new SmokeHook(this, 'smoke', {
      name: smoke,
      namespace: application.namespace,
      // Not `app: <application>`: the Service selects that label.
      labels: smokeLabels,
      // Every pod of the namespace, for the same reason as the allows above (canary mode).
      applicationPodLabels: {},
      baseUrl: `http://${serviceAddress(application.name, application.namespace)}`,
      secretName: smoke,
      databaseHost,
      brokerBootstrapServers: bootstrapServers,
      databasePods: { namespace: database.namespace, labels: databasePodLabels },
      brokerPods: { namespace: broker.namespace, labels: brokerPodLabels },
    });

    // 2.4: what the monitoring stack scrapes and alerts on, scoped to this application's namespace.
    const monitoringLabels = { ...appLabels, [MONITORING_SELECTOR_LABEL.key]: MONITORING_SELECTOR_LABEL.value };
    new ApplicationPodMonitor(this, 'pod-monitor', {
      name: application.name,
      namespace: application.namespace,
      labels: monitoringLabels,
      podLabelKey: LABELS.app,
      podLabelValues: [application.name, primaryName(application.name)],
    });
    new DeploymentAlertRules(this, 'alert-rules', { namespace: application.namespace, labels: monitoringLabels });
  }
}
