import type { Environment } from '../environments';
import { ALERT_ROUTING, INFRASTRUCTURE_NAMESPACES } from '../constants';
import { smokeName } from '../naming';
import { SMOKE_SECRET_KEYS } from '../smoke/settings';

/**
 * Every Secret the platform needs (5.3, 5.4, 6), by the chart that uses it. None of them
 * is rendered by the charts: each is a SOPS-encrypted file under
 * `secrets/<environment>/<group>/<name>.sops.yaml`, decrypted by KSOPS in Argo CD's
 * repository server and synced by the child Application of its group's chart (a second
 * source), so a Secret arrives with the namespace and workloads that read it.
 * `secrets/templates/<group>/<name>.yaml` shows each Secret's keys, with no values.
 */

/** Groups of secrets: each is the id of the chart whose Application syncs them. */
export const SECRET_GROUPS = ['application', 'database', 'broker', 'monitoring'] as const;
export type SecretGroup = (typeof SECRET_GROUPS)[number];


export interface SecretSpec {
  /** Secret name, as the workloads reference it. */
  readonly name: string;
  /** The chart whose Application syncs the Secret. */
  readonly group: SecretGroup;
  /** Namespace of the Secret. */
  readonly namespace: string;
  /** Kubernetes Secret type. */
  readonly type: 'Opaque' | 'kubernetes.io/dockerconfigjson';
  /** The keys of `stringData`, each with what its value is. */
  readonly keys: Readonly<Record<string, string>>;
  /** Why the Secret exists (contract section). */
  readonly purpose: string;
}

/** The Secrets of one environment. */
export function secretCatalog(environment: Environment): readonly SecretSpec[] {
  const app = environment.application;
  return [
    {
      name: environment.image.pullSecret,
      group: 'application',
      namespace: app.namespace,
      type: 'kubernetes.io/dockerconfigjson',
      keys: { '.dockerconfigjson': `registry credentials for ${environment.image.registry} (docker config JSON)` },
      purpose: '5.3: the registry pull secret in the application namespace',
    },
    {
      name: databaseSecret(app.name),
      group: 'application',
      namespace: app.namespace,
      type: 'Opaque',
      keys: { 'connection-string': "the application's database connection string (port 1433)" },
      purpose: '7: the connection string secret the application reads',
    },
    {
      name: brokerClientSecret(app.name),
      group: 'application',
      namespace: app.namespace,
      type: 'Opaque',
      keys: { username: 'broker user of the application', password: 'its password' },
      purpose: '6: broker credentials of the application',
    },
    {
      name: 'database-admin',
      group: 'database',
      namespace: environment.database.namespace,
      type: 'Opaque',
      keys: { password: 'database administrator password' },
      purpose: '5.4: the administrator password, never written into the repository in plaintext',
    },
    ...environment.broker.users.map(
      (user): SecretSpec => ({
        name: brokerUserSecret(user.name),
        group: 'broker',
        namespace: environment.broker.namespace,
        type: 'Opaque',
        keys: { password: `password of the broker user ${user.name} (the same as in its client's copy)` },
        purpose: '6: the broker side of a KafkaUser (SCRAM-SHA-512)',
      }),
    ),
    {
      name: smokeName(app.name),
      group: 'application',
      namespace: app.namespace,
      type: 'Opaque',
      keys: Object.fromEntries(SMOKE_SECRET_KEYS.map((key) => [key, `smoke test (4.1): ${key}`])),
      purpose: '4.1: the smoke hook credentials (application login, database login, broker user)',
    },
    {
      name: ALERT_ROUTING.teamChat.secret.name,
      group: 'monitoring',
      namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
      type: 'Opaque',
      keys: { [ALERT_ROUTING.teamChat.secret.key]: 'chat webhook address alerts and outage messages are posted to' },
      purpose: '6: the chat webhook given by a variable',
    },
    {
      name: ALERT_ROUTING.onCall.secret.name,
      group: 'monitoring',
      namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
      type: 'Opaque',
      keys: { [ALERT_ROUTING.onCall.secret.key]: "webhook address of the on-call paging integration critical alerts go to" },
      purpose: '6: escalation level 2, the on-call engineer',
    },
  ];
}

/** Folder of a group's encrypted secrets, relative to the repository root. */
export function secretsPath(environment: string, group: SecretGroup): string {
  return `secrets/${environment}/${group}`;
}

/** File name of an encrypted Secret. */
export function encryptedFileName(name: string): string {
  return `${name}.sops.yaml`;
}

/** The Secret with a broker user's password, in the cluster's namespace (KafkaUser `valueFrom`). */
export function brokerUserSecret(user: string): string {
  return `${user}-broker-user`;
}

/** The application's connection string, in its namespace. */
export function databaseSecret(application: string): string {
  return `${application}-database`;
}

/** The application's broker credentials (user name and password), in its namespace. */
export function brokerClientSecret(application: string): string {
  return `${application}-broker`;
}
