import { Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { HTTP_PORT_NAME, LABELS, METRICS, PLATFORM_NAMESPACES, PORTS, SINGLE_UNIT_VERSION } from '../constants';
import { ApplicationCertificate } from '../constructs/application-certificate';
import { ApplicationIngress } from '../constructs/application-ingress';
import { ApplicationWorkload } from '../constructs/application-workload';
import { BlueGreen } from '../constructs/blue-green';
import { CanaryRelease } from '../constructs/canary-release';
import { DNS_PEER, NetworkPolicies } from '../constructs/network-policies';
import { SmokeHook } from '../constructs/smoke-hook';
import type { Environment } from '../environments';
import { runningTagOf } from '../environments/running-tag';
import { hostOf, imageReference, serviceAddress, smokeName, tlsSecretName } from '../naming';

/** Pod Security Admission: the namespace admits only restricted pods. */
export const RESTRICTED_POD_SECURITY = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
  'pod-security.kubernetes.io/warn': 'restricted',
} as const;

export interface ApplicationChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
  /**
   * Plain configuration for the application container (addresses of the database and
   * the broker, for example).
   * @default - none
   */
  readonly applicationEnvironment?: Readonly<Record<string, string>>;
  /**
   * SQL Server host the smoke hook checks (4.1 step 4).
   * @default - the hook reads DATABASE_HOST from its Secret
   */
  readonly smokeDatabaseHost?: string;
  /**
   * Kafka bootstrap servers the smoke hook checks (4.1 step 5).
   * @default "kafka-cluster-kafka-bootstrap:9092"
   */
  readonly smokeBrokerBootstrapServers?: string;
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
    new NetworkPolicies(this, 'network-policies', {
      namespace: application.namespace,
      labels: appLabels,
      ingress: [
        { name: 'ingress-nginx', namespace: PLATFORM_NAMESPACES.ingressNginx, ports: [{ port: PORTS.application }] },
        { name: 'monitoring', namespace: PLATFORM_NAMESPACES.monitoring, ports: [{ port: METRICS.port }] },
        { name: smoke, namespace: application.namespace, podLabels: smokeLabels, ports: [{ port: PORTS.application }] },
      ],
      egress: [DNS_PEER],
    });

    const serviceAccount = new kplus.ServiceAccount(this, 'service-account', {
      metadata: { name: application.name, namespace: application.namespace, labels: appLabels },
      automountToken: false,
    });

    const common = {
      namespace: application.namespace,
      application: application.name,
      resources: application.resources,
      imagePullSecret: image.pullSecret,
      serviceAccount,
      environment: props.applicationEnvironment,
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
      databaseHost: props.smokeDatabaseHost,
      brokerBootstrapServers: props.smokeBrokerBootstrapServers,
    });
  }
}
