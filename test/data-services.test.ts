import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { cronProblem } from '../src/environments/fields';
import { validateAgainstSchema } from '../src/validation/schemas';
import { CHART_WAVES, DATABASE } from '../src/contract/choices';
import { databaseLoginSecret, databaseSecret } from '../src/contract/naming';
import { secretCatalog } from '../src/secrets/catalog';
import { ENVIRONMENT_ORDER, committedObjects, findObject, projectEnvironments, refusalsAgainstCommittedDist, type K8sObject } from './support';

const environments = projectEnvironments();

const byName = Object.fromEntries(ENVIRONMENT_ORDER.map((env) => [env, committedObjects(env)])) as Record<string, K8sObject[]>;

/** Seconds Argo CD's retries of a sync span: the backoff waits summed as Argo CD computes them. */
function retrySpanSeconds(retry: { limit: number; backoff: { duration: string; factor: number; maxDuration: string } }): number {
  const seconds = (text: string) => Number(text.replace(/s$/, ''));
  let total = 0;
  for (let attempt = 0; attempt < retry.limit; attempt += 1) {
    total += Math.min(seconds(retry.backoff.duration) * retry.backoff.factor ** attempt, seconds(retry.backoff.maxDuration));
  }
  return total;
}

describe.each(ENVIRONMENT_ORDER)('the database in %s (1.3 step 5)', (environment) => {
  const objects = byName[environment]!;
  const server = findObject(objects, 'StatefulSet', 'mssql');
  const container = server.spec.template.spec.containers[0];

  it('runs SQL Server in its own namespace, created by the sync, behind a Service on 1433', () => {
    expect(findObject(objects, 'Namespace', 'database').metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });
    expect(server.metadata.namespace).toBe('database');
    const service = findObject(objects, 'Service', 'mssql');
    expect(service.spec.ports).toEqual([{ name: 'tds', port: 1433, targetPort: 1433, protocol: 'TCP' }]);
    expect(service.spec.selector).toEqual(server.spec.template.metadata.labels);
    expect(container.ports).toEqual([{ name: 'tds', containerPort: 1433, protocol: 'TCP' }]);
  });

  it('is ready when it answers a query, and may take the 600 s the contract waits to start', () => {
    expect(container.readinessProbe.exec.command.join(' ')).toMatch(/SQLCMDPASSWORD="\$MSSQL_SA_PASSWORD" \S*sqlcmd -S localhost -U sa -C -b -Q "SELECT 1"/);
    expect(container.startupProbe.exec).toEqual(container.readinessProbe.exec);
    expect(container.startupProbe.periodSeconds * container.startupProbe.failureThreshold).toBe(600);
    expect(container.livenessProbe.tcpSocket).toEqual({ port: 1433 });
  });

  it('reads the administrator password from a Secret, never from git', () => {
    expect(container.env).toContainEqual({ name: 'MSSQL_SA_PASSWORD', valueFrom: { secretKeyRef: { name: 'database-admin', key: 'password' } } });
    expect(JSON.stringify(objects)).not.toMatch(/MSSQL_SA_PASSWORD","value"/);
  });

  it('keeps its data on a volume claim template and its backups on a dedicated claim mounted in the server', () => {
    const [data] = server.spec.volumeClaimTemplates;
    expect(data.metadata.name).toBe('data');
    expect(data.spec.resources.requests.storage).toMatch(/^\d+Gi$/);
    expect(container.volumeMounts).toEqual([
      { name: 'data', mountPath: '/var/opt/mssql' },
      { name: 'backup', mountPath: '/var/opt/mssql/backup' },
    ]);
    const claim = findObject(objects, 'PersistentVolumeClaim', 'mssql-backup');
    expect(server.spec.template.spec.volumes).toEqual([{ name: 'backup', persistentVolumeClaim: { claimName: 'mssql-backup' } }]);
    expect(claim.metadata.namespace).toBe('database');
  });

  it('backs up the application database on the environment schedule, never two at once', () => {
    const cron = findObject(objects, 'CronJob', 'mssql-backup');
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    const command = cron.spec.jobTemplate.spec.template.spec.containers[0].command.join(' ');
    expect(command).toMatch(/BACKUP DATABASE \[webapp\] TO DISK = N'\/var\/opt\/mssql\/backup\/webapp-day.*\.bak' WITH CHECKSUM, INIT/);
    expect(command).toContain('-S mssql.database.svc.cluster.local');
  });

  it("admits 1433 only from the applications' namespaces, the backup job and the setup hook, after a default deny", () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === 'database');
    expect(findObject(policies, 'NetworkPolicy', 'default-deny').spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const ingress = policies.filter((p) => p.spec.policyTypes.includes('Ingress') && p.spec.ingress).flatMap((p) => p.spec.ingress);
    expect(ingress).toEqual([
      ...environments[environment]!.applications.map((app) => ({
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': app.namespace } } }],
        ports: [{ port: 1433, protocol: 'TCP' }],
      })),
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'database' } }, podSelector: { matchLabels: { app: 'mssql-backup' } } }],
        ports: [{ port: 1433, protocol: 'TCP' }],
      },
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'database' } }, podSelector: { matchLabels: { app: 'mssql-setup' } } }],
        ports: [{ port: 1433, protocol: 'TCP' }],
      },
    ]);
  });

  it("creates the application's login, database and user once the server answers, before the migrations, idempotently", () => {
    const env = environments[environment]!;
    const job = findObject(objects, 'Job', 'mssql-setup');
    const app = env.applications[0]!;
    const login = app.name;
    // A Sync hook in the wave after the server (wave 0, healthy when it answers a query), rerun on every sync.
    expect(job.metadata.annotations).toEqual({
      'argocd.argoproj.io/hook': 'Sync',
      'argocd.argoproj.io/sync-wave': String(DATABASE.setup.syncWave),
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    expect(DATABASE.setup.syncWave).toBeGreaterThan(0);
    expect(server.metadata.annotations?.['argocd.argoproj.io/sync-wave']).toBeUndefined();
    const pod = job.spec.template.spec;
    const [setup] = pod.containers;
    // The server's own image and sqlcmd, as the administrator, with the login's password from the database group's Secret.
    expect(setup.image).toBe(container.image);
    expect(setup.command.join(' ')).toContain(`${DATABASE.sqlcmd} -S mssql.database.svc.cluster.local -U sa -C -b`);
    expect(setup.env).toContainEqual({ name: 'SQLCMDPASSWORD', valueFrom: { secretKeyRef: { name: 'database-admin', key: 'password' } } });
    expect(setup.env).toContainEqual({ name: 'LOGIN_PASSWORD_0', valueFrom: { secretKeyRef: { name: databaseLoginSecret(login), key: 'password' } } });
    const sql = Object.fromEntries(setup.env.filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value]));
    expect(sql.SERVER_SQL_0).toContain(`IF SUSER_ID(N'${login}') IS NULL CREATE LOGIN [${login}]`);
    expect(sql.SERVER_SQL_0).toContain(`IF DB_ID(N'${app.database.name}') IS NULL CREATE DATABASE [${app.database.name}]`);
    expect(sql.DATABASE_SQL_0).toContain(`IF USER_ID(N'${login}') IS NULL CREATE USER [${login}] FOR LOGIN [${login}]`);
    // Kubernetes turns `$$(` into `$(`: sqlcmd substitutes its variable, the manifest holds no password.
    expect(sql.SERVER_SQL_0).toContain("N'$$(LOGIN_PASSWORD)'");
    expect(setup.command.join(' ')).toContain(`-d "${app.database.name}" -Q "$DATABASE_SQL_0"`);
    // The login in the database's Secret is the one in the application's connection string (src/secrets/catalog.ts).
    const catalog = secretCatalog(env);
    const loginSecret = catalog.find((secret) => secret.name === databaseLoginSecret(login))!;
    expect(loginSecret.namespace).toBe(job.metadata.namespace);
    expect(loginSecret.keys.password!.holds).toEqual({ value: `${databaseLoginSecret(login)}.password` });
    const connection = catalog.find((secret) => secret.name === databaseSecret(login))!.keys['connection-string']!.holds;
    expect('from' in connection && connection.from).toEqual([`${databaseLoginSecret(login)}.password`]);
    // Restricted, bounded.
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(setup.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(setup.resources.limits).toBeDefined();
    expect(job.spec.activeDeadlineSeconds).toBeLessThanOrEqual(300);
  });

  it('migrates the schema before the application rolls out, with the application tag', () => {
    const job = findObject(objects, 'Job', 'webapp-migrations');
    // A Sync hook in the wave after the Secrets it reads (a PreSync hook runs before any
    // of them exists: proven on the e2e cluster), before the Deployments' wave 0.
    expect(job.metadata.annotations).toEqual({
      'argocd.argoproj.io/hook': 'Sync',
      'argocd.argoproj.io/sync-wave': String(CHART_WAVES.migrations),
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    expect(CHART_WAVES.secrets).toBeLessThan(CHART_WAVES.migrations);
    expect(CHART_WAVES.migrations).toBeLessThan(0);
    expect(job.spec.backoffLimit).toBe(1);
    expect(job.spec.activeDeadlineSeconds).toBe(300);
    const migration = job.spec.template.spec.containers[0];
    const tags = objects.filter((o) => o.kind === 'Deployment' && o.metadata.namespace === 'webapp').map((d) => d.spec.template.spec.containers[0].image.split(':')[1]);
    expect(tags).toContain(migration.image.split(':')[1]);
    expect(migration.image).toMatch(/^registry\.example\.com\/platform\/webapp-migrations:v\d+\.\d+\.\d+$/);
    expect(migration.env).toEqual([{ name: 'DATABASE_CONNECTION_STRING', valueFrom: { secretKeyRef: { name: 'webapp-database', key: 'connection-string' } } }]);
    const gitops = objects.filter((o) => o.kind === 'Application');
    const wave = (name: string) => Number(findObject(gitops, 'Application', name).metadata.annotations?.['argocd.argoproj.io/sync-wave']);
    expect(wave('database')).toBeLessThan(wave('webapp'));
    expect(wave('broker')).toBeLessThan(wave('webapp'));
  });

  it('gives the database and the broker the 600 s the contract waits, the rest 300 s', () => {
    const gitops = objects.filter((o) => o.kind === 'Application' && o.metadata.namespace === 'argocd');
    expect(retrySpanSeconds(findObject(gitops, 'Application', 'database').spec.syncPolicy.retry)).toBe(600);
    expect(retrySpanSeconds(findObject(gitops, 'Application', 'broker').spec.syncPolicy.retry)).toBe(600);
    expect(retrySpanSeconds(findObject(gitops, 'Application', 'webapp').spec.syncPolicy.retry)).toBe(300);
    expect(retrySpanSeconds(findObject(gitops, 'Application', 'strimzi-kafka-operator').spec.syncPolicy.retry)).toBe(300);
  });
});

const BROKERS: Record<string, number> = { local: 1, testing: 1, staging: 3, production: 3 };

describe.each(ENVIRONMENT_ORDER)('the broker in %s (1.3 step 6)', (environment) => {
  const objects = byName[environment]!;
  const kafka = findObject(objects, 'Kafka', 'kafka-cluster');
  const brokers = BROKERS[environment]!;

  it('installs the Strimzi operator 1.2.0 from its Helm chart before the cluster', () => {
    const operator = findObject(objects, 'Application', 'strimzi-kafka-operator');
    expect(operator.spec.source).toMatchObject({ repoURL: 'https://strimzi.io/charts/', chart: 'strimzi-kafka-operator', targetRevision: '1.2.0' });
    expect(operator.spec.destination.namespace).toBe('kafka');
    expect(Number(operator.metadata.annotations?.['argocd.argoproj.io/sync-wave'])).toBeGreaterThan(
      Number(findObject(objects, 'Application', 'argocd').metadata.annotations?.['argocd.argoproj.io/sync-wave']),
    );
  });

  it('runs kafka-cluster in KRaft mode on node pools, a plain listener on 9092', () => {
    expect(kafka.apiVersion).toBe('kafka.strimzi.io/v1');
    expect(kafka.metadata.namespace).toBe('kafka');
    expect(kafka.spec.kafka.listeners[0]).toMatchObject({ name: 'plain', port: 9092, type: 'internal', tls: false, authentication: { type: 'scram-sha-512' } });
    expect(kafka.spec.kafka.listeners[0].networkPolicyPeers).toEqual(
      environments[environment]!.applications.map((app) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': app.namespace } } })),
    );
    expect(Object.keys(kafka.spec.entityOperator).sort()).toEqual(['topicOperator', 'userOperator']);
    const pool = findObject(objects, 'KafkaNodePool', 'dual-role');
    expect(pool.metadata.labels).toEqual({ 'strimzi.io/cluster': 'kafka-cluster' });
    expect(pool.spec.roles).toEqual(['controller', 'broker']);
    expect(pool.spec.replicas).toBe(brokers);
    expect(pool.spec.storage.volumes[0]).toMatchObject({ type: 'persistent-claim', deleteClaim: false, kraftMetadata: 'shared' });
  });

  it('matches replication to the broker count', () => {
    const replication = brokers === 1 ? 1 : 3;
    const minInSync = brokers === 1 ? 1 : 2;
    expect(kafka.spec.kafka.config).toEqual({
      'default.replication.factor': replication,
      'min.insync.replicas': minInSync,
      'offsets.topic.replication.factor': replication,
      'transaction.state.log.replication.factor': replication,
      'transaction.state.log.min.isr': minInSync,
    });
    expect(findObject(objects, 'KafkaTopic', 'declarations').spec).toEqual({
      partitions: 3,
      replicas: replication,
      config: { 'retention.ms': 604_800_000, 'min.insync.replicas': minInSync },
    });
  });

  it('adds the TLS listener on 9093 only where the environment asks', () => {
    const names = kafka.spec.kafka.listeners.map((l: any) => `${l.name}:${l.port}:${l.tls}`);
    expect(names).toEqual(brokers === 3 ? ['plain:9092:false', 'tls:9093:true'] : ['plain:9092:false']);
  });

  it('creates topics and users after the cluster, users limited to their own topics', () => {
    const topic = findObject(objects, 'KafkaTopic', 'declarations');
    const user = findObject(objects, 'KafkaUser', 'webapp');
    for (const entity of [topic, user]) {
      expect(entity.metadata.labels).toEqual({ 'strimzi.io/cluster': 'kafka-cluster' });
      expect(entity.metadata.annotations).toEqual({ 'argocd.argoproj.io/sync-wave': '1' });
    }
    expect(user.spec.authentication).toEqual({ type: 'scram-sha-512', password: { valueFrom: { secretKeyRef: { name: 'webapp-broker-user', key: 'password' } } } });
    expect(user.spec.authorization.acls).toEqual([
      { type: 'allow', resource: { type: 'topic', name: 'declarations', patternType: 'literal' }, operations: ['Read', 'Write', 'Describe'] },
      { type: 'allow', resource: { type: 'group', name: 'webapp', patternType: 'prefix' }, operations: ['Read'] },
    ]);
  });

  it("lets the operators read the users' password Secrets, by name, in the broker's namespace, and no other Secret", () => {
    const role = findObject(objects, 'Role', 'platform-gitops-operations');
    expect(role.metadata.namespace).toBe('kafka');
    const passwordSecrets = objects
      .filter((object) => object.kind === 'KafkaUser')
      .map((user) => user.spec.authentication.password.valueFrom.secretKeyRef.name)
      .sort();
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: passwordSecrets }]);
  });

  it('validates Kafka, KafkaNodePool, KafkaTopic and KafkaUser against the Strimzi 1.2 CRDs', () => {
    for (const kind of ['Kafka', 'KafkaNodePool', 'KafkaTopic', 'KafkaUser']) {
      for (const object of objects.filter((o) => o.kind === kind)) expect(validateAgainstSchema(object), kind).toEqual([]);
    }
  });

  it('hands the application both addresses through its configuration, credentials by Secret', () => {
    const deployments = objects.filter((o) => o.kind === 'Deployment' && o.metadata.namespace === 'webapp');
    for (const deployment of deployments) {
      const env = deployment.spec.template.spec.containers[0].env;
      expect(env).toContainEqual({ name: 'DATABASE_HOST', value: 'mssql.database.svc.cluster.local' });
      expect(env).toContainEqual({ name: 'DATABASE_PORT', value: '1433' });
      expect(env).toContainEqual({ name: 'KAFKA_BOOTSTRAP_SERVERS', value: 'kafka-cluster-kafka-bootstrap.kafka.svc.cluster.local:9092' });
      expect(env).toContainEqual({ name: 'KAFKA_PASSWORD', valueFrom: { secretKeyRef: { name: 'webapp-broker', key: 'password' } } });
    }
  });
});

describe('bad data-service values are refused, and dist/ is untouched', () => {
  const refused = refusalsAgainstCommittedDist();

  it('refuses topic replicas above the broker count', () => {
    expect(refused((files) => (files.testing.environment.broker.topics[0].replicas = 3))).toEqual([
      'src/environments/testing/environment.yaml: broker.topics[0].replicas 3 must not exceed broker.brokers (1)',
    ]);
  });

  it('refuses two topics of the same name', () => {
    expect(refused((files) => files.staging.environment.broker.topics.push({ ...files.staging.environment.broker.topics[0] }))).toEqual([
      'src/environments/staging/environment.yaml: broker.topics[1].name "declarations" must be unique (another topic has this name)',
    ]);
  });

  it('refuses two users of the same name', () => {
    const user = { name: 'reporting', acls: [{ topic: 'declarations', operations: ['Read'] }] };
    expect(refused((files) => (files.local.environment.broker.users = [user, structuredClone(user)]))).toEqual([
      'src/environments/local/environment.yaml: broker.users[1].name "reporting" must be unique (another user has this name)',
    ]);
  });

  it("refuses a broker user named like an application: each application's own user has its name", () => {
    const user = { name: 'webapp', acls: [{ topic: 'declarations', operations: ['Read'] }] };
    expect(refused((files) => (files.local.environment.broker.users = [user]))).toEqual([
      'src/environments/local/webapp.yaml: (file name) "webapp" is also a user in src/environments/local/environment.yaml (broker.users): each application gets a broker user named after it; rename that user',
    ]);
  });

  it('refuses an ACL on a topic that does not exist, in environment.yaml and in an application file', () => {
    const user = { name: 'reporting', acls: [{ topic: 'orders', operations: ['Read'] }] };
    expect(refused((files) => (files.production.environment.broker.users = [user]))).toEqual([
      'src/environments/production/environment.yaml: broker.users[0].acls[0].topic "orders" must name a topic of broker.topics (declarations)',
    ]);
    expect(refused((files) => (files.production.webapp.broker = { acls: [{ topic: 'orders', operations: ['Read'] }] }))).toEqual([
      'src/environments/production/webapp.yaml: broker.acls[0].topic "orders" must name a topic of broker.topics in environment.yaml (declarations)',
    ]);
  });

  it('refuses a unit namespace shared with another unit or the infrastructure', () => {
    expect(refused((files) => (files.staging.environment.database.namespace = 'webapp'))).toEqual([
      'src/environments/staging/webapp.yaml: namespace "webapp" must differ from database.namespace of environment.yaml (each unit has its own namespace)',
    ]);
    expect(refused((files) => (files.testing.environment.broker.namespace = 'monitoring'))).toEqual([
      'src/environments/testing/environment.yaml: broker.namespace "monitoring" must not be a namespace of the infrastructure',
    ]);
  });

  it('refuses a backup schedule that is not a cron expression', () => {
    expect(refused((files) => (files.testing.environment.database.backup.schedule = 'nightly'))).toEqual([
      'src/environments/testing/environment.yaml: database.backup.schedule "nightly" must be a cron expression of five fields (minute hour day-of-month month day-of-week), not 1',
    ]);
  });

  it.each([
    ['0 25 * * *', 'must be a valid cron expression: Constraint error, got value 25 expected range 0-23'],
    ['99 99 99 99 99', 'must be a valid cron expression: Constraint error, got value 99 expected range 0-59'],
    ['0 0 1 * * *', 'must be a cron expression of five fields (minute hour day-of-month month day-of-week), not 6'],
    ['0 1 * * 7', 'must give the day of week as 0-6 (Sunday is 0)'],
    ['0 1 L * *', 'must use only *, ranges, lists and steps (L, W and # are not understood by Kubernetes)'],
  ])('refuses the backup schedule %j, which a Kubernetes CronJob does not accept', (schedule, rule) => {
    expect(refused((files) => (files.testing.environment.database.backup.schedule = schedule))).toEqual([
      `src/environments/testing/environment.yaml: database.backup.schedule ${JSON.stringify(schedule)} ${rule}`,
    ]);
  });

  // Checking a schedule builds luxon dates; without a default locale luxon asks ICU for the
  // system's (~20 ms a synth). The setting must reach the copy cron-parser itself loads.
  it("checks schedules with cron-parser's own luxon set to a default locale", () => {
    expect(cronProblem('0 2 * * *')).toBeUndefined();
    const cronParsersLuxon = createRequire(require.resolve('cron-parser'))('luxon') as typeof import('luxon');
    expect(cronParsersLuxon.Settings.defaultLocale).toBe('en-US');
  });

  it.each(['default', 'kube-system', 'kube-public', 'kube-node-lease'])('refuses the reserved namespace %s', (namespace) => {
    expect(refused((files) => (files.staging.environment.database.namespace = namespace))).toEqual([
      `src/environments/staging/environment.yaml: database.namespace "${namespace}" must not be a namespace Kubernetes reserves (default, kube-system, kube-public, kube-node-lease)`,
    ]);
  });

  it('refuses a database volume without a size', () => {
    expect(refused((files) => (files.local.environment.database.storage.size = '0Gi'))).toEqual([
      'src/environments/local/environment.yaml: database.storage.size "0Gi" must be a positive memory quantity in Mi or Gi such as "256Mi" or "1Gi"',
    ]);
  });
});
