import { Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { BROKER, DATABASE, HTTP_PORT_NAME, LABELS, METRICS, PLATFORM_NAMESPACES, PORTS, SINGLE_UNIT_VERSION, STRIMZI } from '../constants';
import { ApplicationCertificate } from '../constructs/application-certificate';
import { ApplicationIngress } from '../constructs/application-ingress';
import { ApplicationWorkload } from '../constructs/application-workload';
import { BlueGreen } from '../constructs/blue-green';
import { CanaryRelease } from '../constructs/canary-release';
import { DNS_PEER, NetworkPolicies } from '../constructs/network-policies';
import { SchemaMigration } from '../constructs/schema-migration';
import { SmokeHook } from '../constructs/smoke-hook';
import type { Environment } from '../environments';
import { newestTagOf, runningTagOf } from '../environments/running-tag';
import { hostOf, imageReference, migrationsName, serviceAddress, smokeName, tlsSecretName } from '../naming';
import { brokerClientSecret, databaseSecret } from '../secrets/catalog';

/** Pod Security Admission: the namespace admits only restricted pods. */
export const RESTRICTED_POD_SECURITY = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
  'pod-security.kubernetes.io/warn': 'restricted',
} as const;

export interface ApplicationChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
}

/**
 * The application in one environment (2.1, 4): its namespace, identity, workload(s) in
 * the environment's delivery strategy (1.4), Service 80 -> 8080 and HTTPS Ingress.
 */
export class ApplicationChart extends Chart {
  constructor(scope: Construct, id: string, props: ApplicationChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { application, image, strategy, tls } = props.environment;
    const appLabels = { [LABELS.app]: application.name };

    new kplus.Namespace(this, 'namespace', {
      metadata: { name: application.namespace, labels: { ...appLabels, ...RESTRICTED_POD_SECURITY } },
    });

    // Default deny, then what the application needs: HTTP from ingress-nginx and from the
    // smoke hook (4.1), scraping from Prometheus, and DNS. The allows select every pod of the
    // namespace, because in canary mode Flagger's `<app>-primary` pods carry
    // `app: <app>-primary`, not `app: <app>`.
    const smoke = smokeName(application.name);
    const smokeLabels = { [LABELS.app]: smoke };
    const { database, broker } = props.environment;
    const databaseHost = serviceAddress(DATABASE.serverName, database.namespace);
    // The contract's `kafka-cluster-kafka-bootstrap:9092`, addressed from this namespace.
    const bootstrapServers = `${serviceAddress(BROKER.bootstrapService, broker.namespace)}:${PORTS.broker}`;
    const connectionString = { secret: databaseSecret(application.name), key: 'connection-string' };
    const brokerPorts = [{ port: PORTS.broker }, ...(broker.tlsListener ? [{ port: STRIMZI.listeners.tls.port }] : [])];
    new NetworkPolicies(this, 'network-policies', {
      namespace: application.namespace,
      labels: appLabels,
      ingress: [
        { name: 'ingress-nginx', namespace: PLATFORM_NAMESPACES.ingressNginx, ports: [{ port: PORTS.application }] },
        { name: 'monitoring', namespace: PLATFORM_NAMESPACES.monitoring, ports: [{ port: METRICS.port }] },
        { name: smoke, namespace: application.namespace, podLabels: smokeLabels, ports: [{ port: PORTS.application }] },
      ],
      egress: [
        DNS_PEER,
        { name: 'database', namespace: database.namespace, podLabels: { [LABELS.app]: DATABASE.serverName }, ports: [{ port: PORTS.database }] },
        { name: 'broker', namespace: broker.namespace, podLabels: { [STRIMZI.clusterLabel]: BROKER.clusterName }, ports: brokerPorts },
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
      image: imageReference(image.registry, image.project, migrationsName(application.name), newestTagOf(props.environment)),
      imagePullSecret: image.pullSecret,
      connectionString,
      resources: application.resources,
    });

    const common = {
      namespace: application.namespace,
      application: application.name,
      resources: application.resources,
      imagePullSecret: image.pullSecret,
      serviceAccount,
      // 1.3 steps 5-6: where the database and the broker are; credentials stay in Secrets.
      environment: {
        DATABASE_HOST: databaseHost,
        DATABASE_PORT: String(PORTS.database),
        DATABASE_NAME: database.name,
        DATABASE_CONNECTION_STRING: connectionString,
        KAFKA_BOOTSTRAP_SERVERS: bootstrapServers,
        KAFKA_USERNAME: { secret: brokerClientSecret(application.name), key: 'username' },
        KAFKA_PASSWORD: { secret: brokerClientSecret(application.name), key: 'password' },
      },
    };

    let serviceSelector: Record<string, string> | undefined;
    if (strategy.type === 'blue-green') {
      const blueGreen = new BlueGreen(this, 'blue-green', {
        ...common,
        registry: image.registry,
        project: image.project,
        units: strategy.blueGreen.units,
        active: strategy.blueGreen.active,
      });
      serviceSelector = { ...blueGreen.active.podLabels };
    } else {
      // Validated: rolling and canary environments carry image.tag and replicas.
      const tag = image.tag!;
      new ApplicationWorkload(this, 'workload', {
        ...common,
        name: application.name,
        version: SINGLE_UNIT_VERSION,
        image: imageReference(image.registry, image.project, application.name, tag),
        replicas: application.replicas!,
      });
      serviceSelector = strategy.type === 'rolling' ? appLabels : undefined;
    }

    if (strategy.type === 'canary') {
      new CanaryRelease(this, 'canary', {
        application: application.name,
        namespace: application.namespace,
        labels: appLabels,
        host: hostOf(application.url),
        loadTest: strategy.canary?.loadTest ?? false,
      });
    } else {
      const service = new kplus.Service(this, 'service', {
        metadata: { name: application.name, namespace: application.namespace, labels: appLabels },
        type: kplus.ServiceType.CLUSTER_IP,
        ports: [{ name: HTTP_PORT_NAME, port: PORTS.service, targetPort: PORTS.application, protocol: kplus.Protocol.TCP }],
      });
      for (const [key, value] of Object.entries(serviceSelector!)) service.selectLabel(key, value);
    }

    new ApplicationIngress(this, 'ingress', {
      name: application.name,
      namespace: application.namespace,
      labels: appLabels,
      host: hostOf(application.url),
      serviceName: application.name,
      tlsSecretName: tlsSecretName(application.name),
    });

    new ApplicationCertificate(this, 'certificate', {
      name: application.name,
      namespace: application.namespace,
      labels: appLabels,
      host: hostOf(application.url),
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
      image: imageReference(image.registry, image.project, smoke, runningTagOf(props.environment)),
      imagePullSecret: image.pullSecret,
      baseUrl: `http://${serviceAddress(application.name, application.namespace)}`,
      secretName: smoke,
      databaseHost,
      brokerBootstrapServers: bootstrapServers,
    });
  }
}
