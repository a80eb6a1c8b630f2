import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { INFRASTRUCTURE_PROJECT } from '../contract/platform-charts';
import { ArgoCdApplication } from '../constructs/argo-cd-application';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';
import { RELEASE_ROWS, releaseNamespace } from '../infrastructure/releases';

export interface InfrastructureChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
  /** Platform-wide settings (Argo CD namespace and project). */
  readonly platform: Platform;
}

/**
 * The infrastructure of one environment (1.3.4, 1.3.7): an Argo CD Application per row of
 * the infrastructure release table (src/infrastructure/releases.ts), each upstream Helm
 * chart at its pinned version in its namespace (created on install) and sync wave.
 */
export class InfrastructureChart extends Chart {
  /** The Helm releases' Applications, in the order they are synced. */
  public readonly releases: readonly ArgoCdApplication[];

  constructor(scope: Construct, id: string, props: InfrastructureChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const context = { environment: props.environment, platform: props.platform };

    this.releases = RELEASE_ROWS.map(
      (release) =>
        new ArgoCdApplication(this, release.name, {
          name: release.name,
          controllerNamespace: props.platform.controller.namespace,
          // The Helm releases create cluster-scoped RBAC, CRDs and webhooks: only this project allows them.
          project: INFRASTRUCTURE_PROJECT,
          sources: [{ kind: 'helm', chart: release.chart, releaseName: release.name, values: release.values(context) }],
          destinationNamespace: releaseNamespace(release, context),
          syncWave: release.syncWave,
          automated: props.environment.autoSync,
          createNamespace: true,
          syncOptions: release.syncOptions,
          ignoreDifferences: release.ignoreDifferences,
        }),
    );
  }
}
