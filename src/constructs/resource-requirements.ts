import { k8s } from 'cdk8s-plus-28';
import type { Resources } from '../environments';

/** An environment's requests and limits as an L1 container's `resources`. */
export function resourceRequirements(resources: Resources): k8s.ResourceRequirements {
  const quantities = (r: { readonly cpu: string; readonly memory: string }) => ({
    cpu: k8s.Quantity.fromString(r.cpu),
    memory: k8s.Quantity.fromString(r.memory),
  });
  return { requests: quantities(resources.requests), limits: quantities(resources.limits) };
}
