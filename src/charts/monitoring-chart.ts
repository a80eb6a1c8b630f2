import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { ALERT_ROUTING, BACKUP_ALERT, INFRASTRUCTURE_NAMESPACES } from '../contract/choices';
import { ALERTS } from '../contract/contract';
import { MONITORING_SELECTOR_LABEL } from '../contract/upstream';
import { AlertRouting } from '../constructs/alert-routing';
import { DEFAULT_BACKUP_NAME } from '../constructs/database-backup';
import { DatabaseBackupAlertRules } from '../constructs/database-backup-alert-rules';
import type { Environment } from '../environments';

export interface MonitoringChartProps {
  /** The validated environment. */
  readonly environment: Environment;
}

/**
 * The environment-wide monitoring (2.4, 6): the database backup alert and the routing of
 * every alert (each application's `deployment.rules` and PodMonitor are in its own chart).
 * Synced after the applications; the chat and on-call Secrets (secrets/<env>/monitoring/)
 * sync with it.
 */
export class MonitoringChart extends Chart {
  constructor(scope: Construct, id: string, props: MonitoringChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { database } = props.environment;
    const labels = { [MONITORING_SELECTOR_LABEL.key]: MONITORING_SELECTOR_LABEL.value };
    // Convergence item 10: a failed backup pages on-call (critical), through the same routing.
    new DatabaseBackupAlertRules(this, 'backup-alert-rules', {
      namespace: database.namespace,
      // The database chart renders the DatabaseBackup under its default name.
      cronJob: DEFAULT_BACKUP_NAME,
      labels,
    });
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
