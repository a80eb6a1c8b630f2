import type { Construct } from 'constructs';
import type { Application } from '../environments';
import { blueGreen } from './blue-green';
import { canary } from './canary';
import type { CommittedChart } from './committed-chart';
import type { DeliveryStrategy, DeliveryWorkloads, StrategyWorkloadProps } from './delivery-strategy';
import { rolling } from './rolling';
import type { StrategyType } from '../environments/strategy-registry';

/**
 * The registry of the delivery strategies, its rendering half: every strategy's
 * `src/strategies/<strategy>/index.ts`, by its `type`. Its configuration half, the values
 * modules the schema is built from, is src/environments/strategy-registry.ts (why
 * two files: see there); the type below makes TypeScript refuse a strategy listed there and
 * not here, or here and not there.
 */
const DELIVERY_STRATEGIES: { readonly [Type in StrategyType]: DeliveryStrategy<Type> } = {
  rolling,
  'blue-green': blueGreen,
  canary,
};

/** A strategy as the code that serves every strategy calls it: with an application the strategy was chosen for. */
interface AnyDeliveryStrategy {
  workloads(scope: Construct, props: StrategyWorkloadProps): DeliveryWorkloads;
  stepProblems?(application: Application, committed: CommittedChart | undefined, label: string): string[];
}

function deliveryStrategyOf(application: Application): AnyDeliveryStrategy {
  return DELIVERY_STRATEGIES[application.strategy.type];
}

/** Render the workloads of `props.application` in its own strategy; the caller routes to them once its Gateway exists. */
export function renderWorkloads(scope: Construct, props: StrategyWorkloadProps): DeliveryWorkloads {
  return deliveryStrategyOf(props.application).workloads(scope, props);
}

/** Whether the application's strategy judges a change against the chart committed before it (see stepProblems). */
export function checksCommittedSteps(application: Application): boolean {
  return deliveryStrategyOf(application).stepProblems !== undefined;
}

/**
 * Why the application's values may not follow its committed chart (`committed`, undefined
 * when there is none; `label` names it in messages): a step of its strategy's procedure skipped.
 */
export function stepProblems(application: Application, committed: CommittedChart | undefined, label: string): string[] {
  return deliveryStrategyOf(application).stepProblems?.(application, committed, label) ?? [];
}

export type { DeliveryStrategy, DeliveryWorkloads, StrategyTrafficProps, StrategyWorkloadProps } from './delivery-strategy';
