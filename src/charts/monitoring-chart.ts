import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { ALERTS, BACKUP_ALERT, INFRASTRUCTURE_NAMESPACES, LABELS, MONITORING_SELECTOR_LABEL } from '../constants';
import { AlertRouting } from '../constructs/alert-routing';
import { ApplicationPodMonitor } from '../constructs/application-pod-monitor';
import { DEFAULT_BACKUP_NAME } from '../constructs/database-backup';
import { DatabaseBackupAlertRules } from '../constructs/database-backup-alert-rules';
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
    const { application, database } = props.environment;
    const labels = { [LABELS.app]: application.name, [MONITORING_SELECTOR_LABEL.key]: MONITORING_SELECTOR_LABEL.value };

    new ApplicationPodMonitor(this, 'pod-monitor', {
      name: application.name,
      namespace: application.namespace,
      labels,
      podLabelKey: LABELS.app,
      podLabelValues: [application.name, primaryName(application.name)],
    });
    new DeploymentAlertRules(this, 'alert-rules', { namespace: application.namespace, labels });
    // Convergence item 10: a failed backup pages on-call (critical), through the same routing.
    new DatabaseBackupAlertRules(this, 'backup-alert-rules', {
      namespace: database.namespace,
      // The database chart renders the DatabaseBackup under its default name.
      cronJob: DEFAULT_BACKUP_NAME,
      labels,
    });
    new AlertRouting(this, 'alert-routing', {
      namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
      labels,
      alertNames: [ALERTS.deploymentFailed.name, ALERTS.highErrorRate.name, BACKUP_ALERT.name],
      criticalSeverity: ALERTS.deploymentFailed.severity,
      warningSeverity: ALERTS.highErrorRate.severity,
    });
  }
}
