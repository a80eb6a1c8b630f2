import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { APPLICATION_USER, CHART_WAVES, DATABASE } from '../contract/choices';
import { WAITS_SECONDS } from '../contract/contract';
import { SYNC_WAVE_ANNOTATION } from '../contract/upstream';
import type { Resources } from '../environments';
import type { SecretKeyReference } from './application-workload';
import { resourceRequirements } from './resource-requirements';
import { restrictedContainer, restrictedPod } from '../contract/security-context';

/** The container of the migrations Job's pod. */
export const MIGRATIONS_CONTAINER = 'migrations';

export interface SchemaMigrationProps {
  /** Name of the Job and its pods' label `app`. */
  readonly name: string;
  /** The application's namespace (its pull secret and connection string live there). */
  readonly namespace: string;
  /** The migration image, `<registry>/<project>/<app>-migrations:<tag>`, the application's tag. */
  readonly image: string;
  /** Secret with the registry credentials (5.3). */
  readonly imagePullSecret: string;
  /** The application's connection string (the migrations run as the application's login). */
  readonly connectionString: SecretKeyReference;
  /** Requests and limits of the migration container. */
  readonly resources: Resources;
}

/**
 * The ordered schema migrations (1.3 step 5, 9.4) as an Argo CD Sync hook of the
 * application, in the wave after its Secrets (CHART_WAVES): they run on every sync of the
 * application chart, after the database chart (an earlier sync wave, healthy when the
 * server answers queries), once the connection string and registry Secrets exist, and
 * before any Deployment of the new version rolls out (wave 0). A failed migration fails the sync, so the new
 * version never starts against an old schema. The image applies pending migrations and
 * records each in the migration history table.
 */
export class SchemaMigration extends Construct {
  constructor(scope: Construct, id: string, props: SchemaMigrationProps) {
    super(scope, id);
    const labels = { app: props.name };
    new k8s.KubeJob(this, 'job', {
      metadata: {
        name: props.name,
        namespace: props.namespace,
        labels,
        annotations: {
          'argocd.argoproj.io/hook': 'Sync',
          [SYNC_WAVE_ANNOTATION]: String(CHART_WAVES.migrations),
          // Kept until the next sync replaces it, so its logs can be read.
          'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
        },
      },
      spec: {
        backoffLimit: DATABASE.migrations.backoffLimit,
        activeDeadlineSeconds: WAITS_SECONDS.controllerSync,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            automountServiceAccountToken: false,
            imagePullSecrets: [{ name: props.imagePullSecret }],
            securityContext: restrictedPod(),
            containers: [
              {
                name: MIGRATIONS_CONTAINER,
                image: props.image,
                env: [
                  {
                    name: 'DATABASE_CONNECTION_STRING',
                    valueFrom: { secretKeyRef: { name: props.connectionString.secret, key: props.connectionString.key } },
                  },
                ],
                resources: resourceRequirements(props.resources),
                securityContext: restrictedContainer(APPLICATION_USER),
              },
            ],
          },
        },
      },
    });
  }
}
