import type { Application } from '../environments';
import { blueGreen } from './blue-green';
import { canary } from './canary';
import type { DeliveryStrategy, DeliveryWorkloads, StrategyWorkloadProps } from './delivery-strategy';
import { rolling } from './rolling';

/** Every delivery strategy, by its `type` in the values files: one module each. */
export const DELIVERY_STRATEGIES = { rolling, 'blue-green': blueGreen, canary } as const;

/** Render the workloads of `props.application` in its own strategy; the caller routes to them once its Gateway exists. */
export function renderWorkloads(scope: Parameters<DeliveryStrategy['workloads']>[0], props: StrategyWorkloadProps): DeliveryWorkloads {
  const strategy = DELIVERY_STRATEGIES[props.application.strategy.type] as DeliveryStrategy;
  return strategy.workloads(scope, props as StrategyWorkloadProps<Application['strategy']>);
}

export type { DeliveryStrategy, DeliveryWorkloads, StrategyTrafficProps, StrategyWorkloadProps } from './delivery-strategy';
