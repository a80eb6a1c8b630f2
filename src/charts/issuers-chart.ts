import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { INFRASTRUCTURE_NAMESPACES, SYNC_WAVES } from '../contract/choices';
import { GATEWAY } from '../contract/upstream';
import { PlatformIssuer } from '../constructs/platform-issuer';
import type { Environment } from '../environments';
import { GatewayClass } from '../imports/gatewayclass-gateway.networking.k8s.io';
import { hostOf } from '../contract/naming';

export interface IssuersChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
}

/**
 * The environment's cluster-wide objects that the infrastructure's CRDs define: the
 * certificate issuers (2.7) and the GatewayClass every application's Gateway names. Rendered
 * once per environment (each application's chart would otherwise render the same
 * cluster-scoped GatewayClass, two Argo CD Applications owning one object), in an
 * Application of their own synced
 * after the `infrastructure` Application: their kinds (cert-manager.io ClusterIssuer,
 * Certificate) exist only once the cert-manager release has installed its CRDs, and
 * Argo CD dry-runs every object of a sync before applying any, refusing the whole sync
 * when a kind is unknown (Argo CD docs, "Sync Options: Skip Dry Run for new custom
 * resources types"). Proven on the e2e cluster (test/e2e/broken-sources.test.ts).
 */
export class IssuersChart extends Chart {
  /** The environment's ClusterIssuer. */
  public readonly issuer: PlatformIssuer;

  constructor(scope: Construct, id: string, props: IssuersChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    this.issuer = new PlatformIssuer(this, 'issuer', {
      issuer: props.environment.infrastructure.issuer,
      certManagerNamespace: INFRASTRUCTURE_NAMESPACES.certificateManager,
      // Each application's Gateway (its chart): same name and namespace as the application.
      gateways: props.environment.applications.map((app) => ({ name: app.name, namespace: app.namespace, host: hostOf(app.url) })),
      syncWave: SYNC_WAVES.issuers,
    });
    // Its CRD comes from the gateway-crds release (wave 0 of the infrastructure).
    new GatewayClass(this, 'gateway-class', {
      metadata: { name: GATEWAY.className },
      spec: { controllerName: GATEWAY.controllerName },
    });
  }
}
