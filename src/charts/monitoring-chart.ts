import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { ALERTS, INFRASTRUCTURE_NAMESPACES, LABELS, MONITORING_SELECTOR_LABEL } from '../constants';
import { AlertRouting } from '../constructs/alert-routing';
import { ApplicationPodMonitor } from '../constructs/application-pod-monitor';
import { DeploymentAlertRules } from '../constructs/deployment-alert-rules';
import type { Environment } from '../environments';
import { primaryName } from '../naming';

export interface MonitoringChartProps {
  /** The validated environment. */
  readonly environment: Environment;
}

/**
 * What the monitoring stack needs to watch the application (2.4, 6): the scrape of
 * `:8080/metrics`, the alert rule group `deployment.rules`, and the routing of its alerts.
 * Synced after the application chart, whose namespace it uses; the chat and on-call
 * Secrets (secrets/<env>/monitoring/) sync with it.
 */
export class MonitoringChart extends Chart {
  constructor(scope: Construct, id: string, props: MonitoringChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { application } = props.environment;
    const labels = { [LABELS.app]: application.name, [MONITORING_SELECTOR_LABEL.key]: MONITORING_SELECTOR_LABEL.value };

    new ApplicationPodMonitor(this, 'pod-monitor', {
      name: application.name,
      namespace: application.namespace,
      labels,
      podLabelKey: LABELS.app,
      podLabelValues: [application.name, primaryName(application.name)],
    });
    new DeploymentAlertRules(this, 'alert-rules', { namespace: application.namespace, labels });
    new AlertRouting(this, 'alert-routing', {
      namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
      labels,
      alertNames: [ALERTS.deploymentFailed.name, ALERTS.highErrorRate.name],
      criticalSeverity: ALERTS.deploymentFailed.severity,
      warningSeverity: ALERTS.highErrorRate.severity,
    });
  }
}
