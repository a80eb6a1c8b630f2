import { FLAGGER_LOAD_TESTER, INFRASTRUCTURE_NAMESPACES, MONITORING_SELECTOR_LABEL } from '../constants';
import { INGRESS_CLASS } from '../constructs/application-ingress';
import type { Environment } from '../environments';

/**
 * Helm values of the infrastructure releases, per environment where they differ
 * (`environment.infrastructure`). Release names are fixed: Services other parts of the
 * platform address (Prometheus, the load tester) are named after them.
 */

/** Release names, which also name the Argo CD Applications that install them. */
export const RELEASES = {
  certManager: 'cert-manager',
  ingressNginx: 'ingress-nginx',
  // The chart labels what it selects with its release name.
  kubePrometheusStack: MONITORING_SELECTOR_LABEL.value,
  flagger: 'flagger',
  flaggerLoadTester: FLAGGER_LOAD_TESTER.service,
  strimziOperator: 'strimzi-kafka-operator',
} as const;

/** Prometheus of the monitoring stack: `<fullname>-prometheus` on the operator's default port. */
export const PROMETHEUS_URL = `http://${RELEASES.kubePrometheusStack}-prometheus.${INFRASTRUCTURE_NAMESPACES.monitoringStack}:9090`;

/** cert-manager with its CRDs; leader election in its own namespace, not kube-system. */
export function certManagerValues(): Record<string, unknown> {
  return {
    crds: { enabled: true, keep: true },
    global: { leaderElection: { namespace: INFRASTRUCTURE_NAMESPACES.certificateManager } },
  };
}

/** ingress-nginx: the `nginx` IngressClass the application's Ingress names, metrics for Flagger. */
export function ingressNginxValues(environment: Environment): Record<string, unknown> {
  const { replicas, serviceType } = environment.infrastructure.ingressController;
  return {
    controller: {
      replicaCount: replicas,
      ingressClassResource: { name: INGRESS_CLASS, controllerValue: 'k8s.io/ingress-nginx' },
      service: { type: serviceType },
      // Flagger's nginx provider reads the controller's request metrics from Prometheus.
      metrics: { enabled: true },
    },
  };
}

/**
 * kube-prometheus-stack: Prometheus evaluates every PrometheusRule and scrapes every
 * ServiceMonitor of the cluster (not only the chart's own), Alertmanager routes with every
 * AlertmanagerConfig (2.4, 6). Grafana is off: its chart default is a plaintext admin
 * password. The kube-system scrape Services are off: the platform deploys nothing there.
 */
export function kubePrometheusStackValues(environment: Environment): Record<string, unknown> {
  const { retention, alertmanagerReplicas } = environment.infrastructure.monitoring;
  return {
    fullnameOverride: RELEASES.kubePrometheusStack,
    grafana: { enabled: false },
    kubeControllerManager: { enabled: false },
    kubeScheduler: { enabled: false },
    kubeEtcd: { enabled: false },
    kubeProxy: { enabled: false },
    coreDns: { enabled: false },
    prometheus: {
      prometheusSpec: {
        retention,
        ruleSelectorNilUsesHelmValues: false,
        serviceMonitorSelectorNilUsesHelmValues: false,
        podMonitorSelectorNilUsesHelmValues: false,
      },
      // Declared here, not in the ingress-nginx release: the ServiceMonitor CRD arrives
      // with this release, after the ingress controller (sync order 1.3.4).
      additionalServiceMonitors: [
        {
          name: RELEASES.ingressNginx,
          namespaceSelector: { matchNames: [INFRASTRUCTURE_NAMESPACES.ingressController] },
          selector: {
            matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx', 'app.kubernetes.io/component': 'controller' },
          },
          endpoints: [{ port: 'metrics', interval: '15s' }],
        },
      ],
    },
    alertmanager: {
      alertmanagerSpec: {
        replicas: alertmanagerReplicas,
        alertmanagerConfigSelector: {},
        alertmanagerConfigNamespaceSelector: {},
        // Routes of an AlertmanagerConfig are not confined to alerts of its own namespace.
        alertmanagerConfigMatcherStrategy: { type: 'None' },
      },
    },
  };
}

/** Flagger with the nginx provider, reading metrics from the monitoring stack's Prometheus. */
export function flaggerValues(): Record<string, unknown> {
  return { meshProvider: 'nginx', metricsServer: PROMETHEUS_URL, prometheus: { install: false } };
}

/** The load tester the canary's webhooks call (`flagger-loadtester.flagger-system`). */
export function flaggerLoadTesterValues(): Record<string, unknown> {
  return { fullnameOverride: FLAGGER_LOAD_TESTER.service };
}

/**
 * The Strimzi cluster operator, watching only its own namespace (where the broker chart puts
 * `kafka-cluster`): the chart's default, written out so the diff shows it.
 */
export function strimziOperatorValues(): Record<string, unknown> {
  return { watchAnyNamespace: false };
}
