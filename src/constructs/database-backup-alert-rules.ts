import type { Construct } from 'constructs';
import { BACKUP_ALERT } from '../contract/choices';
import { PrometheusRule, PrometheusRuleSpecGroupsRulesExpr } from '../imports/prometheusrule-monitoring.coreos.com';

export interface DatabaseBackupAlertRulesProps {
  /** Namespace of the database and its backup CronJob; the rule lives there too. */
  readonly namespace: string;
  /** Name of the backup CronJob. */
  readonly cronJob: string;
  /** Labels of the PrometheusRule, including the one the monitoring stack selects by. */
  readonly labels: Readonly<Record<string, string>>;
}

/** kube-state-metrics' CronJob timestamps (seconds since the epoch). */
const LAST_SCHEDULE = 'kube_cronjob_status_last_schedule_time';
const LAST_SUCCESS = 'kube_cronjob_status_last_successful_time';

/**
 * The rule group `database.rules`: DatabaseBackupFailed fires when the backup CronJob's
 * last scheduled run is newer than its last successful one (or it never succeeded) for
 * longer than the job may run: the run failed, hung or never started. It resolves with the
 * next successful backup (a failed Job's own series would stay as long as the Job is kept).
 */
export class DatabaseBackupAlertRules extends PrometheusRule {
  constructor(scope: Construct, id: string, props: DatabaseBackupAlertRulesProps) {
    const selector = `{namespace="${props.namespace}", cronjob="${props.cronJob}"}`;
    const on = 'on (namespace, cronjob)';
    super(scope, id, {
      metadata: { name: 'database-backup-rules', namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        groups: [
          {
            name: BACKUP_ALERT.groupName,
            rules: [
              {
                alert: BACKUP_ALERT.name,
                expr: PrometheusRuleSpecGroupsRulesExpr.fromString(
                  `(${LAST_SCHEDULE}${selector} > ${on} ${LAST_SUCCESS}${selector}) or ${on} (${LAST_SCHEDULE}${selector} unless ${on} ${LAST_SUCCESS}${selector})`,
                ),
                for: BACKUP_ALERT.for,
                labels: { severity: BACKUP_ALERT.severity },
                annotations: {
                  summary: 'Database backup {{ $labels.namespace }}/{{ $labels.cronjob }} failed',
                  description: `The last scheduled run of {{ $labels.cronjob }} in {{ $labels.namespace }} has not succeeded within ${BACKUP_ALERT.for}: see the runbook, "Database", Backups.`,
                },
              },
            ],
          },
        ],
      },
    });
  }
}
