import { PLATFORM_CHARTS } from '../contract/platform-charts';
import { type Application, brokerUsers, type Environment } from '../environments';
import { ALERT_ROUTING, DATABASE, DEPLOYMENT_NOTIFICATIONS, INFRASTRUCTURE_NAMESPACES } from '../contract/choices';
import { PORTS } from '../contract/contract';
import { brokerClientSecret, brokerUserSecret, databaseLoginSecret, databaseSecret, serviceAddress, SMOKE_VARIABLES, smokeName } from '../contract/naming';

/**
 * Every Secret the platform needs (5.3, 5.4, 6), by the chart that uses it, and where each
 * value comes from. None of them is rendered by the charts: each is a SOPS-encrypted Secret
 * manifest, `secrets/<environment>/<group>/<name>.sops.yaml`, written by `npm run secrets --
 * init`, decrypted in Argo CD's repository server by the `sops` Config Management Plugin and
 * synced by the child Application of its group's chart (a second source), so a Secret
 * arrives with the namespace and workloads that read it. Beside it,
 * `<name>.template.yaml` shows the Secret's keys, with no values.
 */

/**
 * Groups of secrets: each is the id of the chart whose Application syncs them, a platform
 * chart's (PLATFORM_SECRET_GROUPS) or an application's (its name, `secrets/<env>/<app>/`).
 */
export const PLATFORM_SECRET_GROUPS: readonly string[] = PLATFORM_CHARTS.filter((chart) => chart.secrets).map((chart) => chart.id);
export type SecretGroup = string;

/** Every secrets group of an environment: one per application, then the platform's. */
export function secretGroups(environment: Environment): string[] {
  return [...environment.applications.map((app) => app.name), ...PLATFORM_SECRET_GROUPS];
}

/**
 * Who provides a value (`npm run secrets -- init`):
 * - `generated`: the platform, a random password (`--rotate` replaces it);
 * - `default`: the platform, a fixed documented default a person may override;
 * - `supplied`: only people have it (registry credentials, webhook addresses): an environment
 *   variable, `--set` or `--from-file`; `local` uses `localDefault`.
 */
export type ValueSource = 'generated' | 'default' | 'supplied';

/**
 * What a value is, for the rules it must meet (src/secrets/values.ts, valueProblems):
 * - `docker-config`: a docker config JSON with `auths` (may span lines, as JSON);
 * - `webhook-url`: an `http(s)://` address, one line;
 * - `sql-password`: a SQL Server login's password (SQL Server's password policy), one line;
 * - `kafka-password`: a Kafka user's SCRAM password, printable ASCII (Kafka's tools read a
 *   client's properties file as ISO 8859-1: the smoke test's broker step writes one);
 * - `password`: any other password, one line;
 * - `login-name`: a login name, one line.
 */
export type ValueFormat = 'docker-config' | 'webhook-url' | 'sql-password' | 'kafka-password' | 'password' | 'login-name';

/**
 * One value of an environment's secrets, held once and copied wherever it appears: the
 * broker user's password is the same in the broker's Secret, the application's and the
 * smoke test's.
 */
export interface SecretValueSpec {
  /** `<secret>.<key>` of the Secret that owns it (its other keys copy it). */
  readonly id: string;
  /** Who provides it. */
  readonly source: ValueSource;
  /** What it is: the rules it must meet. */
  readonly format: ValueFormat;
  /** What it is, for the report of missing values. */
  readonly what: string;
  /**
   * The value when nobody gave one: `default` everywhere, `supplied` in `local` only.
   * @default - none: a `supplied` value is reported missing
   */
  readonly default?: string;
}

/** What a key of a Secret holds. */
export type KeyValue =
  /** One of the environment's values (SecretValueSpec), by id: twins share an id. */
  | { readonly value: string }
  /** A name from the values files (a login or user name): no secret, never asked for. */
  | { readonly fixed: string }
  /** Built from values, e.g. the connection string around the login's password. */
  | { readonly from: readonly string[]; readonly compose: (value: (id: string) => string) => string };

export interface SecretKeySpec {
  /** What the key holds, written into the template. */
  readonly meaning: string;
  /** Where its value comes from. */
  readonly holds: KeyValue;
}

export interface SecretSpec {
  /** Secret name, as the workloads reference it. */
  readonly name: string;
  /** The chart whose Application syncs the Secret. */
  readonly group: SecretGroup;
  /** Namespace of the Secret. */
  readonly namespace: string;
  /** Kubernetes Secret type. */
  readonly type: 'Opaque' | 'kubernetes.io/dockerconfigjson';
  /** The keys of `stringData`, each with what its value is and where it comes from. */
  readonly keys: Readonly<Record<string, SecretKeySpec>>;
  /** Why the Secret exists (contract section). */
  readonly purpose: string;
}

/**
 * `local`'s webhook addresses: a sink inside the cluster that nothing serves unless a person
 * deploys one (Alertmanager logs each failed delivery and carries on). Documented in
 * docs/secrets.md; other environments must be given real addresses.
 */
export const LOCAL_WEBHOOK_SINK = 'http://webhook-sink.monitoring.svc.cluster.local:8080';

/** `local`'s registry credentials: none, anonymous pulls (docker config JSON). */
export const ANONYMOUS_DOCKER_CONFIG = '{"auths":{}}';

/** The smoke test's application login when nobody names another (4.1 step 2). */
export const DEFAULT_SMOKE_USER = 'smoke';

/** `<secret>.<key>`: how a value and a key are named on the command line and in reports. */
export function keyId(secret: string, key: string): string {
  return `${secret}.${key}`;
}

/** The broker user an application connects as: its own, named after it. */
export function applicationBrokerUser(application: Application): string {
  return application.broker.name;
}

/**
 * The application's connection string (ADO.NET / Microsoft.Data.SqlClient keywords): the
 * server's Service on 1433, the application's database and login; TrustServerCertificate
 * because SQL Server presents its own self-signed certificate (the connection stays encrypted).
 */
export function connectionString(environment: Environment, application: Application, password: string): string {
  const server = serviceAddress(DATABASE.serverName, environment.database.namespace);
  return `Server=tcp:${server},${PORTS.database};Database=${application.database.name};User ID=${application.name};Password=${password};Encrypt=True;TrustServerCertificate=True`;
}

/** The values of one environment's secrets, each defined once (twins refer to it by id). */
export function secretValues(environment: Environment): readonly SecretValueSpec[] {
  const local = environment.name === 'local';
  const supplied = (id: string, format: ValueFormat, what: string, localDefault: string): SecretValueSpec =>
    local ? { id, source: 'supplied', format, what, default: localDefault } : { id, source: 'supplied', format, what };
  const values: SecretValueSpec[] = [
    // Applications pulling with a Secret of the same name share its value (one registry login).
    ...environment.applications.map((app) =>
      supplied(keyId(app.image.pullSecret, DOCKER_CONFIG_KEY), 'docker-config', `registry credentials for ${app.image.registry} (docker config JSON)`, ANONYMOUS_DOCKER_CONFIG),
    ),
    { id: keyId(DATABASE.adminSecret.name, DATABASE.adminSecret.key), source: 'generated', format: 'sql-password', what: 'database administrator password' },
    ...environment.applications.map(
      (app): SecretValueSpec => ({ id: keyId(databaseLoginSecret(app.name), 'password'), source: 'generated', format: 'sql-password', what: `password of the SQL login ${app.name}` }),
    ),
    ...brokerUsers(environment).map(
      ({ name: user }): SecretValueSpec => ({ id: keyId(brokerUserSecret(user), 'password'), source: 'generated', format: 'kafka-password', what: `password of the broker user ${user}` }),
    ),
    ...environment.applications.flatMap((app): SecretValueSpec[] => [
      { id: keyId(smokeName(app.name), SMOKE_VARIABLES.username), source: 'default', format: 'login-name', what: `application login of ${app.name}'s smoke test`, default: DEFAULT_SMOKE_USER },
      { id: keyId(smokeName(app.name), SMOKE_VARIABLES.password), source: 'generated', format: 'password', what: `password of ${app.name}'s smoke test application login` },
    ]),
    supplied(
      keyId(ALERT_ROUTING.teamChat.secret.name, ALERT_ROUTING.teamChat.secret.key),
      'webhook-url',
      'team chat webhook address',
      `${LOCAL_WEBHOOK_SINK}/${ALERT_ROUTING.teamChat.receiver}`,
    ),
    supplied(
      keyId(ALERT_ROUTING.onCall.secret.name, ALERT_ROUTING.onCall.secret.key),
      'webhook-url',
      'on-call paging webhook address',
      `${LOCAL_WEBHOOK_SINK}/${ALERT_ROUTING.onCall.receiver}`,
    ),
  ];
  const ids = new Set<string>();
  return values.filter((value) => !ids.has(value.id) && ids.add(value.id));
}

/** The key of a docker config Secret. */
const DOCKER_CONFIG_KEY = '.dockerconfigjson';

/** The Secrets of one application, in its group (its namespace) and the database's. */
/** A monitoring webhook's address, one key of its own Secret (6). */
function webhookSecret(secret: { readonly name: string; readonly key: string }, meaning: string, purpose: string): SecretSpec {
  return {
    name: secret.name,
    group: 'monitoring',
    namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
    type: 'Opaque',
    keys: { [secret.key]: { meaning, holds: { value: keyId(secret.name, secret.key) } } },
    purpose,
  };
}

function applicationSecrets(environment: Environment, app: Application): SecretSpec[] {
  const login = keyId(databaseLoginSecret(app.name), 'password');
  const brokerUser = applicationBrokerUser(app);
  const brokerPassword: KeyValue = { value: keyId(brokerUserSecret(brokerUser), 'password') };
  const smoke = smokeName(app.name);
  const value = (id: string): KeyValue => ({ value: id });
  return [
    {
      name: app.image.pullSecret,
      group: app.name,
      namespace: app.namespace,
      type: 'kubernetes.io/dockerconfigjson',
      keys: {
        [DOCKER_CONFIG_KEY]: {
          meaning: `registry credentials for ${app.image.registry} (docker config JSON)`,
          holds: value(keyId(app.image.pullSecret, DOCKER_CONFIG_KEY)),
        },
      },
      purpose: '5.3: the registry pull secret in the application namespace',
    },
    {
      name: databaseSecret(app.name),
      group: app.name,
      namespace: app.namespace,
      type: 'Opaque',
      keys: {
        'connection-string': {
          meaning: `the application's connection string: its login ${app.name} on port 1433, the password of ${login}`,
          holds: { from: [login], compose: (get) => connectionString(environment, app, get(login)) },
        },
      },
      purpose: '7: the connection string secret the application reads',
    },
    {
      name: brokerClientSecret(app.name),
      group: app.name,
      namespace: app.namespace,
      type: 'Opaque',
      keys: {
        username: { meaning: 'broker user of the application', holds: { fixed: brokerUser } },
        password: { meaning: `its password (the same as in ${brokerUserSecret(brokerUser)})`, holds: brokerPassword },
      },
      purpose: '6: broker credentials of the application',
    },
    {
      name: smoke,
      group: app.name,
      namespace: app.namespace,
      type: 'Opaque',
      keys: {
        [SMOKE_VARIABLES.username]: { meaning: 'smoke test (4.1 step 2): application login', holds: value(keyId(smoke, SMOKE_VARIABLES.username)) },
        [SMOKE_VARIABLES.password]: { meaning: 'smoke test (4.1 step 2): its password', holds: value(keyId(smoke, SMOKE_VARIABLES.password)) },
        [SMOKE_VARIABLES.databaseUser]: { meaning: "smoke test (4.1 step 4): the application's SQL login", holds: { fixed: app.name } },
        [SMOKE_VARIABLES.databasePassword]: { meaning: `smoke test (4.1 step 4): its password (${login})`, holds: value(login) },
        [SMOKE_VARIABLES.brokerUsername]: { meaning: "smoke test (4.1 step 5): the application's broker user", holds: { fixed: brokerUser } },
        [SMOKE_VARIABLES.brokerPassword]: { meaning: 'smoke test (4.1 step 5): its password', holds: brokerPassword },
      },
      purpose: '4.1: the smoke hook credentials (application login, database login, broker user)',
    },
    {
      name: databaseLoginSecret(app.name),
      group: 'database',
      namespace: environment.database.namespace,
      type: 'Opaque',
      keys: {
        username: { meaning: "the application's SQL login", holds: { fixed: app.name } },
        password: { meaning: `its password (the one in ${databaseSecret(app.name)}'s connection string)`, holds: value(login) },
      },
      purpose: "7: the application's SQL login, created with its database by the database chart's setup Job",
    },
  ];
}

/** The Secrets of one environment: each application's, then the platform's. */
export function secretCatalog(environment: Environment): readonly SecretSpec[] {
  const value = (id: string): KeyValue => ({ value: id });
  return [
    ...environment.applications.flatMap((app) => applicationSecrets(environment, app)),
    {
      name: DATABASE.adminSecret.name,
      group: 'database',
      namespace: environment.database.namespace,
      type: 'Opaque',
      keys: { [DATABASE.adminSecret.key]: { meaning: 'database administrator password', holds: value(keyId(DATABASE.adminSecret.name, DATABASE.adminSecret.key)) } },
      purpose: '5.4: the administrator password, never written into the repository in plaintext',
    },
    ...brokerUsers(environment).map(
      ({ name: user }): SecretSpec => ({
        name: brokerUserSecret(user),
        group: 'broker',
        namespace: environment.broker.namespace,
        type: 'Opaque',
        keys: {
          password: {
            meaning: `password of the broker user ${user} (the same as in its client's copy)`,
            holds: value(keyId(brokerUserSecret(user), 'password')),
          },
        },
        purpose: '6: the broker side of a KafkaUser (SCRAM-SHA-512)',
      }),
    ),
    webhookSecret(ALERT_ROUTING.teamChat.secret, 'chat webhook address alerts and outage messages are posted to', '6: the chat webhook given by a variable'),
    webhookSecret(ALERT_ROUTING.onCall.secret, 'webhook address of the on-call paging integration critical alerts go to', '6: escalation level 2, the on-call engineer'),
    {
      // Argo CD's notifications controller reads only its own Secret, in its namespace: the
      // team chat's address again (the same value), synced with the monitoring Secrets.
      name: DEPLOYMENT_NOTIFICATIONS.secret.name,
      group: 'monitoring',
      namespace: INFRASTRUCTURE_NAMESPACES.controller,
      type: 'Opaque',
      keys: {
        [DEPLOYMENT_NOTIFICATIONS.secret.key]: {
          meaning: 'the chat webhook address deployments are announced to',
          holds: { value: keyId(ALERT_ROUTING.teamChat.secret.name, ALERT_ROUTING.teamChat.secret.key) },
        },
      },
      purpose: '1.6: stakeholders notified of significant deployments (Argo CD notifications)',
    },
  ];
}

/**
 * What the sops plugin expects of the folder it is given (SOPS_PLUGIN.expectationVariable,
 * a plugin variable of the Application; checked by SOPS_PLUGIN_GENERATE): one line per Secret of the group, `<name> <namespace> <type>
 * <key>...`, keys sorted. Names, namespaces, types and keys of a Secret hold no space.
 */
export function pluginExpectation(secrets: readonly SecretSpec[]): string {
  return secrets
    .map((secret) => [secret.name, secret.namespace, secret.type, ...Object.keys(secret.keys).sort()].join(' '))
    .sort()
    .join('\n');
}
