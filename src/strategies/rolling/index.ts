import type { DeliveryStrategy } from '../delivery-strategy';
import { throughService } from '../service-route';
import { singleUnitWorkload } from '../single-unit';

/**
 * Rolling update (1.4, 8: maxUnavailable 1, maxSurge 1): one Deployment named after the
 * application at `image.tag`, `replicas` pods, and the Service selecting it.
 */
export const rolling: DeliveryStrategy<'rolling'> = {
  type: 'rolling',
  workloads(scope, props) {
    singleUnitWorkload(scope, props);
    return { route: throughService(props.application, props.labels, props.labels) };
  },
};
