import { k8s } from 'cdk8s-plus-28';
import type { MemoryQuantity, ResourceQuantities, Resources } from '../environments';

/** An environment's requests and limits (validated), or the platform's own (as written), as an L1 container's `resources`. */
export function resourceRequirements(resources: Resources | ResourceQuantities): k8s.ResourceRequirements {
  const quantities = (r: { readonly cpu: string; readonly memory: string | MemoryQuantity }) => ({
    cpu: k8s.Quantity.fromString(r.cpu),
    memory: k8s.Quantity.fromString(typeof r.memory === 'string' ? r.memory : r.memory.text),
  });
  return { requests: quantities(resources.requests), limits: quantities(resources.limits) };
}
