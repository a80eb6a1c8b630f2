import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { DATABASE } from '../contract/choices';
import { ADMIN_PASSWORD_ENV, sqlcmdJobPod, sqlcmdShell } from './sql-server';
import { resourceRequirements } from './resource-requirements';

/** The backup CronJob's name and its pods' `app` label unless told otherwise. */
export const DEFAULT_BACKUP_NAME = `${DATABASE.serverName}-backup`;

/**
 * The file a backup of `database` is written to in the backup volume: one per slot, the
 * slot `day<N>` (N the UTC day number modulo DATABASE.backup.keep) or a shell expression
 * that computes it.
 */
export function backupFile(database: string, slot: string): string {
  return `${DATABASE.backupPath}/${database}-${slot}.bak`;
}

/** Whether `file` is one of `database`'s own backup files (a restore never takes another database's). */
export function isBackupFileOf(database: string, file: string): boolean {
  const [prefix, suffix] = backupFile(database, '\0').split('\0') as [string, string];
  return file.startsWith(prefix) && file.endsWith(suffix) && /^day\d+$/.test(file.slice(prefix.length, file.length - suffix.length));
}

export interface DatabaseBackupProps {
  /** The server's namespace. */
  readonly namespace: string;
  /** Host the job connects to: the server's Service. */
  readonly server: string;
  /** The applications' databases, backed up one after the other in each run. */
  readonly databases: readonly string[];
  /** Cron schedule (UTC). */
  readonly schedule: string;
  /**
   * Name of the CronJob and its pods' label `app`.
   * @default DEFAULT_BACKUP_NAME (`mssql-backup`)
   */
  readonly name?: string;
}

/**
 * The scheduled full backup (2.7, 7.2): sqlcmd asks the server for `BACKUP DATABASE ... TO
 * DISK` into the backup volume mounted in the server, checksummed, `INIT` overwriting the
 * file: one file per UTC day in DATABASE.backup.keep slots, so the newest `keep` daily
 * backups stay and the volume never fills. Runs never overlap.
 */
export class DatabaseBackup extends Construct {
  /** Labels of the backup pods, which the server's NetworkPolicy admits. */
  public readonly podLabels: Readonly<Record<string, string>>;
  /** Name of the CronJob, which the backup alert watches. */
  public readonly cronJobName: string;

  constructor(scope: Construct, id: string, props: DatabaseBackupProps) {
    super(scope, id);
    const name = props.name ?? DEFAULT_BACKUP_NAME;
    this.cronJobName = name;
    this.podLabels = { app: name };
    // One file per UTC day, `keep` of them: the day number modulo `keep` names the slot.
    const slot = `day$(( $(date -u +%s) / 86400 % ${DATABASE.backup.keep} ))`;
    const query = props.databases
      .map((database) => `BACKUP DATABASE [${database}] TO DISK = N'${backupFile(database, slot)}' WITH CHECKSUM, INIT`)
      .join('; ');
    new k8s.KubeCronJob(this, 'cron-job', {
      metadata: { name, namespace: props.namespace, labels: { ...this.podLabels } },
      spec: {
        schedule: props.schedule,
        timeZone: 'Etc/UTC',
        concurrencyPolicy: 'Forbid',
        successfulJobsHistoryLimit: DATABASE.backup.historyLimit,
        failedJobsHistoryLimit: DATABASE.backup.historyLimit,
        jobTemplate: {
          spec: {
            backoffLimit: DATABASE.backup.backoffLimit,
            activeDeadlineSeconds: DATABASE.backup.activeDeadlineSeconds,
            template: sqlcmdJobPod(this.podLabels, {
              name: 'backup',
              command: sqlcmdShell(query, props.server),
              env: [ADMIN_PASSWORD_ENV],
              resources: resourceRequirements(DATABASE.backup.resources),
            }),
          },
        },
      },
    });
  }
}
