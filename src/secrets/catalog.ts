import type { Environment } from '../environments';
import { ALERT_ROUTING, INFRASTRUCTURE_NAMESPACES } from '../constants';

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

/**
 * Namespaces of the groups whose charts are not part of this module's branch yet (their
 * charts own them; not in the contract). The application's namespace comes from the
 * environment.
 */
export const SECRET_NAMESPACES = {
  database: 'database',
  broker: 'kafka',
  monitoring: INFRASTRUCTURE_NAMESPACES.monitoringStack,
} as const;

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
      name: `${app.name}-database`,
      group: 'application',
      namespace: app.namespace,
      type: 'Opaque',
      keys: { 'connection-string': "the application's database connection string (port 1433)" },
      purpose: '7: the connection string secret the application reads',
    },
    {
      name: `${app.name}-broker`,
      group: 'application',
      namespace: app.namespace,
      type: 'Opaque',
      keys: { username: 'broker user of the application', password: 'its password' },
      purpose: '6: broker credentials of the application',
    },
    {
      name: 'database-admin',
      group: 'database',
      namespace: SECRET_NAMESPACES.database,
      type: 'Opaque',
      keys: { password: 'database administrator password' },
      purpose: '5.4: the administrator password, never written into the repository in plaintext',
    },
    {
      name: `${app.name}-broker-user`,
      group: 'broker',
      namespace: SECRET_NAMESPACES.broker,
      type: 'Opaque',
      keys: { password: "password of the application's broker user (same as in the application's copy)" },
      purpose: '6: the broker side of the application user',
    },
    {
      name: ALERT_ROUTING.teamChat.secret.name,
      group: 'monitoring',
      namespace: SECRET_NAMESPACES.monitoring,
      type: 'Opaque',
      keys: { [ALERT_ROUTING.teamChat.secret.key]: 'chat webhook address alerts and outage messages are posted to' },
      purpose: '6: the chat webhook given by a variable',
    },
    {
      name: ALERT_ROUTING.onCall.secret.name,
      group: 'monitoring',
      namespace: SECRET_NAMESPACES.monitoring,
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
