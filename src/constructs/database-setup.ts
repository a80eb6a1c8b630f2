import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { DATABASE } from '../contract/choices';
import { WAITS_SECONDS } from '../contract/contract';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import type { SecretKeyReference } from './application-workload';
import { resourceRequirements } from './resource-requirements';
import { HOOK_ANNOTATION, HOOK_DELETE_POLICY_ANNOTATION } from './smoke-hook';
import { ADMIN_PASSWORD_ENV, sqlcmdJobPod } from './sql-server';

/** One application's database on the server and the SQL login that owns it. */
export interface DatabaseLogin {
  /** The application's database, created when missing. */
  readonly database: string;
  /** The application's SQL login, created when missing, and its user in the database. */
  readonly login: string;
  /** The login's password, the one in the application's connection string. */
  readonly password: SecretKeyReference;
}

export interface DatabaseSetupProps {
  /** The server's namespace (the administrator and login Secrets live there). */
  readonly namespace: string;
  /** Host the job connects to: the server's Service. */
  readonly server: string;
  /** Each application's database and login, created when missing, in this order. */
  readonly applications: readonly DatabaseLogin[];
  /**
   * Name of the Job and its pods' label `app`.
   * @default `${DATABASE.serverName}-setup`
   */
  readonly name?: string;
}

/** The setup hook Job's name, and its pods' label `app`, unless its props name another. */
export const DATABASE_SETUP_NAME = `${DATABASE.serverName}-setup`;

/**
 * What the applications need in SQL Server before their migrations run (1.3 step 5, 7): for
 * each, its login, its database and a user for the login in it, as an Argo CD Sync hook Job in the wave
 * after the server (DATABASE.setup.syncWave), so it runs once the server answers queries, on
 * every sync. Idempotent: each object is created only when missing (`IF ... IS NULL`); the
 * login's password is set again each run, so rotating it (`npm run secrets -- init --rotate`)
 * reaches the server with the next sync. The server image's own sqlcmd, as the administrator
 * (SQLCMDPASSWORD, 5.4); the login's password is a sqlcmd scripting variable, never part of
 * the manifest.
 */
export class DatabaseSetup extends Construct {
  /** Labels of the Job's pods, which the server's NetworkPolicy admits. */
  public readonly podLabels: Readonly<Record<string, string>>;
  /** The hook Job. */
  public readonly job: k8s.KubeJob;

  constructor(scope: Construct, id: string, props: DatabaseSetupProps) {
    super(scope, id);
    const name = props.name ?? DATABASE_SETUP_NAME;
    this.podLabels = { app: name };
    const sqlcmd = `${DATABASE.sqlcmd} -S ${props.server} -U ${DATABASE.administrator} -C -b`;
    const env: k8s.EnvVar[] = [{ name: 'SQLCMDPASSWORD', valueFrom: ADMIN_PASSWORD_ENV.valueFrom! }];
    const lines = ['set -eu'];
    props.applications.forEach(({ login, database, password }, index) => {
      const variable = (name: string) => `${name}_${index}`;
      // Identifiers come from validated names, always bracketed; the password never contains a quote (src/secrets/values.ts).
      // `$$(` is Kubernetes' escape for `$(`: the container sees sqlcmd's `$(LOGIN_PASSWORD)`, not a
      // value Kubernetes substituted from the env list.
      const serverSql = [
        `IF SUSER_ID(N'${login}') IS NULL CREATE LOGIN [${login}] WITH PASSWORD = N'$$(LOGIN_PASSWORD)', CHECK_POLICY = ON`,
        `ELSE ALTER LOGIN [${login}] WITH PASSWORD = N'$$(LOGIN_PASSWORD)';`,
        `IF DB_ID(N'${database}') IS NULL CREATE DATABASE [${database}];`,
      ].join(' ');
      // A second connection into the database: USE of a database created in the same batch fails to compile.
      const databaseSql = [
        `IF USER_ID(N'${login}') IS NULL CREATE USER [${login}] FOR LOGIN [${login}];`,
        `ALTER ROLE [${DATABASE.setup.role}] ADD MEMBER [${login}];`,
      ].join(' ');
      env.push(
        { name: variable('LOGIN_PASSWORD'), valueFrom: { secretKeyRef: { name: password.secret, key: password.key } } },
        { name: variable('SERVER_SQL'), value: serverSql },
        { name: variable('DATABASE_SQL'), value: databaseSql },
      );
      lines.push(
        `${sqlcmd} -v LOGIN_PASSWORD="$${variable('LOGIN_PASSWORD')}" -Q "$${variable('SERVER_SQL')}"`,
        `${sqlcmd} -d "${database}" -Q "$${variable('DATABASE_SQL')}"`,
        `echo "login ${login} and database ${database} are ready"`,
      );
    });
    const script = lines.join('\n');

    this.job = new k8s.KubeJob(this, 'job', {
      metadata: {
        name,
        namespace: props.namespace,
        labels: { ...this.podLabels },
        annotations: {
          [HOOK_ANNOTATION]: 'Sync',
          [SYNC_WAVE_ANNOTATION]: String(DATABASE.setup.syncWave),
          // Kept until the next sync replaces it, so its logs can be read.
          [HOOK_DELETE_POLICY_ANNOTATION]: 'BeforeHookCreation',
        },
      },
      spec: {
        backoffLimit: DATABASE.setup.backoffLimit,
        activeDeadlineSeconds: WAITS_SECONDS.controllerSync,
        template: sqlcmdJobPod(this.podLabels, {
          name: 'setup',
          command: ['/bin/sh', '-c', script],
          env,
          resources: resourceRequirements(DATABASE.setup.resources),
        }),
      },
    });
  }
}
