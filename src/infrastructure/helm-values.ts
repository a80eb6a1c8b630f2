import { ALERT_ROUTING, FLAGGER_LOAD_TESTER, INFRASTRUCTURE_NAMESPACES } from '../contract/choices';
import { MONITORING_SELECTOR_LABEL } from '../contract/upstream';
import type { Environment } from '../environments';
import { restrictedContainer } from '../contract/security-context';

/**
 * Helm values of the infrastructure releases (src/infrastructure/releases.ts), per
 * environment where they differ (`environment.infrastructure`). Release names are fixed:
 * Services other parts of the platform address (Prometheus, the load tester) are named
 * after them.
 */

/**
 * Prometheus of the monitoring stack: `<fullname>-prometheus` on the operator's default port
 * (the release, and its full name, are named after the selector label's value).
 */
export const PROMETHEUS_URL = `http://${MONITORING_SELECTOR_LABEL.value}-prometheus.${INFRASTRUCTURE_NAMESPACES.monitoringStack}:9090`;

/**
 * Envoy Gateway's CRDs-only chart: the Gateway API standard channel (not the chart's
 * default, experimental) and Envoy Gateway's own CRDs. Synced before cert-manager, which
 * checks for the Gateway API CRDs only when it starts.
 */
export function gatewayApiCrdsValues(): Record<string, unknown> {
  return { crds: { gatewayAPI: { enabled: true, channel: 'standard' }, envoyGateway: { enabled: true } } };
}

/**
 * cert-manager with its CRDs; leader election in its own namespace, not kube-system; Gateway
 * API support on, through the controller's configuration file (`config.gatewayAPI.enabled`,
 * cert-manager v1.21 documentation content/docs/usage/gateway.md), so HTTP-01 challenges
 * are solved with HTTPRoutes on the Gateway.
 */
export function certManagerValues(): Record<string, unknown> {
  return {
    crds: { enabled: true, keep: true },
    global: { leaderElection: { namespace: INFRASTRUCTURE_NAMESPACES.certificateManager } },
    config: {
      apiVersion: 'controller.config.cert-manager.io/v1alpha1',
      kind: 'ControllerConfiguration',
      gatewayAPI: { enabled: true },
    },
  };
}

/**
 * Envoy Gateway without the CRDs its chart would install (`crds.enabled`): the gateway-crds
 * release owns them, so one release owns each CRD. The proxies are sized per Gateway through
 * its EnvoyProxy (src/constructs/application-gateway.ts), not here.
 */
export function envoyGatewayValues(): Record<string, unknown> {
  return { crds: { enabled: false } };
}

/**
 * kube-prometheus-stack: Prometheus evaluates every PrometheusRule and scrapes every
 * ServiceMonitor and PodMonitor of the cluster (not only the chart's own). Alertmanager
 * routes with the platform's AlertmanagerConfig only (2.4, 6): the one in its own namespace
 * carrying ALERT_ROUTING.selectorLabel. Its namespace is the only one it reads them from, so
 * an AlertmanagerConfig written in an application's namespace is never merged; and any other
 * AlertmanagerConfig would see only its own namespace's alerts, while the platform's, beside
 * the Alertmanager, sees every namespace's (prometheus-operator v0.93.0
 * pkg/apis/monitoring/v1/alertmanager_types.go: `alertmanagerConfigSelector`,
 * `alertmanagerConfigNamespaceSelector` (nil: its own namespace; the chart renders `{}` as
 * every namespace, hence the explicit one), `alertmanagerConfigMatcherStrategy`
 * `OnNamespaceExceptForAlertmanagerNamespace`). Grafana is off: its chart default is a
 * plaintext admin password. The kube-system scrape Services are off: the platform deploys
 * nothing there.
 */
export function kubePrometheusStackValues(environment: Environment): Record<string, unknown> {
  const { retention, alertmanagerReplicas } = environment.infrastructure.monitoring;
  return {
    fullnameOverride: MONITORING_SELECTOR_LABEL.value,
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
    },
    alertmanager: {
      alertmanagerSpec: {
        replicas: alertmanagerReplicas,
        alertmanagerConfigSelector: { matchLabels: { [ALERT_ROUTING.selectorLabel.key]: ALERT_ROUTING.selectorLabel.value } },
        alertmanagerConfigNamespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': INFRASTRUCTURE_NAMESPACES.monitoringStack } },
        alertmanagerConfigMatcherStrategy: { type: 'OnNamespaceExceptForAlertmanagerNamespace' },
      },
    },
  };
}

/**
 * Flagger with the Gateway API provider (`gatewayapi:v1`), reading metrics from the
 * monitoring stack's Prometheus (the Canary's MetricTemplates name it too).
 */
export function flaggerValues(): Record<string, unknown> {
  return {
    meshProvider: 'gatewayapi:v1',
    metricsServer: PROMETHEUS_URL,
    prometheus: { install: false },
    // The chart's user (charts/flagger/values.yaml `securityContext.context`), restricted:
    // the chart's own context sets only the user and a read-only root filesystem.
    securityContext: { enabled: true, context: restrictedContainer(10001, 10001) },
  };
}

/** The load tester the canary's webhooks call (`flagger-loadtester.flagger-system`). */
export function flaggerLoadTesterValues(): Record<string, unknown> {
  return {
    fullnameOverride: FLAGGER_LOAD_TESTER.service,
    // One replica, the chart's default written out: the manual gates live in the process's
    // memory (fluxcd/flagger pkg/loadtester/gate.go), so with two an operator's open gate
    // would answer only every other check Flagger sends through the Service.
    replicaCount: 1,
    // The image's user and group (charts/loadtester/values.yaml `securityContext.context`), restricted.
    securityContext: { enabled: true, context: restrictedContainer(100, 101) },
  };
}

/**
 * The Strimzi cluster operator, watching only its own namespace (where the broker chart puts
 * `kafka-cluster`): the chart's default, written out so the diff shows it. Its pod security
 * provider is the restricted one: without it Strimzi gives the Kafka and entity-operator
 * pods it creates the baseline profile's security context, which a restricted namespace
 * refuses (strimzi-kafka-operator 1.2.0
 * documentation/modules/configuring/con-config-security-providers.adoc).
 */
export function strimziOperatorValues(): Record<string, unknown> {
  return { watchAnyNamespace: false, extraEnvs: [{ name: 'STRIMZI_POD_SECURITY_PROVIDER_CLASS', value: 'restricted' }] };
}
