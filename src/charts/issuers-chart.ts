import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { INFRASTRUCTURE_NAMESPACES, SYNC_WAVES } from '../constants';
import { PlatformIssuer } from '../constructs/platform-issuer';
import type { Environment } from '../environments';

export interface IssuersChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
}

/**
 * The environment's certificate issuers (2.7), in an Application of their own synced
 * after the `infrastructure` Application: their kinds (cert-manager.io ClusterIssuer,
 * Certificate) exist only once the cert-manager release has installed its CRDs, and
 * Argo CD dry-runs every object of a sync before applying any, refusing the whole sync
 * when a kind is unknown (Argo CD docs, "Sync Options: Skip Dry Run for new custom
 * resources types"). Proven on the e2e cluster (test/e2e/convergence.test.ts).
 */
export class IssuersChart extends Chart {
  /** The environment's ClusterIssuer. */
  public readonly issuer: PlatformIssuer;

  constructor(scope: Construct, id: string, props: IssuersChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    this.issuer = new PlatformIssuer(this, 'issuer', {
      issuer: props.environment.infrastructure.issuer,
      certManagerNamespace: INFRASTRUCTURE_NAMESPACES.certificateManager,
      // The application's Gateway (application chart): same name and namespace as the application.
      gateway: { name: props.environment.application.name, namespace: props.environment.application.namespace },
      syncWave: SYNC_WAVES.issuers,
    });
  }
}
