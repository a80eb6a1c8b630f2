import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { ALERT_ROUTING, BACKUP_ALERT, INFRASTRUCTURE_NAMESPACES } from '../contract/choices';
import { ALERTS } from '../contract/contract';
import { MONITORING_SELECTOR_LABEL } from '../contract/upstream';
import { AlertRouting } from '../constructs/alert-routing';
import type { Environment } from '../environments';

export interface MonitoringChartProps {
  /** The validated environment. */
  readonly environment: Environment;
}

/**
 * The environment-wide alert routing (6): every alert of the platform (each application's
 * `deployment.rules`, in its chart, and the database's backup alert, in the database chart) to
 * the on-call engineer or the team chat. It lives in the monitoring stack's namespace, which
 * enforces privileged Pod Security, so this chart belongs to the infrastructure project
 * (src/contract/platform-charts.ts). Synced after the applications; the chat and on-call
 * Secrets (secrets/<env>/monitoring/) sync with it.
 */
export class MonitoringChart extends Chart {
  constructor(scope: Construct, id: string, _props: MonitoringChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const labels = { [MONITORING_SELECTOR_LABEL.key]: MONITORING_SELECTOR_LABEL.value };
    new AlertRouting(this, 'alert-routing', {
      namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
      // The Alertmanager merges only the AlertmanagerConfig of its namespace with this label.
      labels: { ...labels, [ALERT_ROUTING.selectorLabel.key]: ALERT_ROUTING.selectorLabel.value },
      alertNames: [ALERTS.deploymentFailed.name, ALERTS.highErrorRate.name, BACKUP_ALERT.name],
      criticalSeverity: ALERTS.deploymentFailed.severity,
      warningSeverity: ALERTS.highErrorRate.severity,
    });
  }
}
