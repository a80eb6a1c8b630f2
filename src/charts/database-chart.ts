import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { PORTS } from '../contract/contract';
import { MONITORING_SELECTOR_LABEL } from '../contract/upstream';
import { DatabaseBackup } from '../constructs/database-backup';
import { DatabaseBackupAlertRules } from '../constructs/database-backup-alert-rules';
import { DatabaseSetup } from '../constructs/database-setup';
import { DNS_PEER, NetworkPolicies } from '../constructs/network-policies';
import { SqlServer } from '../constructs/sql-server';
import type { Environment } from '../environments';
import { serviceAddress, databaseLoginSecret } from '../contract/naming';

export interface DatabaseChartProps {
  /** The validated environment. */
  readonly environment: Environment;
}

/**
 * The database (1.3 step 5, 7.2): SQL Server in its own namespace (the infrastructure
 * chart's), its backup volume and scheduled backup of every application's database, the alert
 * on a failed or missing backup, the Sync hook that creates each application's login and
 * database once the server answers, and NetworkPolicies that let only the applications'
 * namespaces (application, migrations, smoke test), the backup job and the setup hook reach
 * 1433. The schema migrations belong to the application chart: they run with each release.
 */
export class DatabaseChart extends Chart {
  constructor(scope: Construct, id: string, props: DatabaseChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { database, applications } = props.environment;

    const server = new SqlServer(this, 'server', {
      namespace: database.namespace,
      edition: database.edition,
      resources: database.resources,
      storage: database.storage,
      backupStorage: database.backup.storage,
    });

    const backup = new DatabaseBackup(this, 'backup', {
      namespace: database.namespace,
      server: serviceAddress(server.service.name, database.namespace),
      databases: applications.map((app) => app.database.name),
      schedule: database.backup.schedule,
    });
    // A failed or missing backup pages on-call (critical), through the platform's alert routing.
    new DatabaseBackupAlertRules(this, 'backup-alert-rules', {
      namespace: database.namespace,
      cronJob: backup.cronJobName,
      labels: { [MONITORING_SELECTOR_LABEL.key]: MONITORING_SELECTOR_LABEL.value },
    });

    // Each application's login and database, before its migrations need them.
    const setup = new DatabaseSetup(this, 'setup', {
      namespace: database.namespace,
      server: serviceAddress(server.service.name, database.namespace),
      applications: applications.map((app) => ({
        database: app.database.name,
        login: app.name,
        password: { secret: databaseLoginSecret(app.name), key: 'password' },
      })),
    });

    const sqlServer = [{ port: PORTS.database }];
    new NetworkPolicies(this, 'network-policies', {
      namespace: database.namespace,
      ingress: [
        ...applications.map((app) => ({ name: app.namespace, namespace: app.namespace, ports: sqlServer })),
        { name: backup.podLabels.app!, namespace: database.namespace, podLabels: backup.podLabels, ports: sqlServer },
        { name: setup.podLabels.app!, namespace: database.namespace, podLabels: setup.podLabels, ports: sqlServer },
      ],
      egress: [DNS_PEER, { name: server.podLabels.app!, namespace: database.namespace, podLabels: server.podLabels, ports: sqlServer }],
    });
  }
}
