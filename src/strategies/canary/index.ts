import { LABELS } from '../../contract/contract';
import { CanaryMetricTemplates } from '../../constructs/canary-metric-templates';
import { CanaryRelease } from '../../constructs/canary-release';
import { PROMETHEUS_URL } from '../../infrastructure/helm-values';
import { primaryName } from '../../contract/naming';
import type { DeliveryStrategy } from '../delivery-strategy';
import { singleUnitWorkload } from '../single-unit';

/**
 * Canary (1.4, 2.3): the Deployment Flagger takes as its target, and the Canary with its
 * MetricTemplates on the Gateway's https listener. No Service and no HTTPRoute: Flagger
 * generates and owns them, and serves the traffic from its `<application>-primary` copy.
 */
export const canary: DeliveryStrategy<'canary'> = {
  type: 'canary',
  workloads(scope, { application, labels, serviceAccount, environment }) {
    const { strategy } = application;
    // The traffic is served by Flagger's primary copy (`app: <app>-primary`), which the disruption budget protects.
    singleUnitWorkload(scope, { application, labels, serviceAccount, environment }, { disruptionBudgetLabels: { [LABELS.app]: primaryName(application.name) } });
    return {
      route(routeScope, { host, gatewayName }) {
        const templates = new CanaryMetricTemplates(routeScope, 'canary-metrics', {
          namespace: application.namespace,
          labels,
          prometheusAddress: PROMETHEUS_URL,
        });
        new CanaryRelease(routeScope, 'canary', {
          application: application.name,
          namespace: application.namespace,
          labels,
          host,
          gatewayName,
          metricTemplates: { namespace: application.namespace, successRate: templates.successRate.name, duration: templates.duration.name },
          loadTest: strategy.canary?.loadTest ?? false,
        });
      },
    };
  },
};
