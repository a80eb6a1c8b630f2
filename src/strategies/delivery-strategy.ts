import type * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import type { EnvironmentValue } from '../constructs/application-workload';
import type { Application, Strategy } from '../environments';

/** What every delivery strategy's workloads share: the chart hands it over once. */
export interface StrategyWorkloadProps<S extends Strategy = Strategy> {
  /** The application, with its strategy of this module's type. */
  readonly application: Application & { readonly strategy: S };
  /** Labels of the application's objects (`app: <application>`). */
  readonly labels: Readonly<Record<string, string>>;
  /** Identity of the pods. */
  readonly serviceAccount: kplus.IServiceAccount;
  /** Plain configuration and Secret references handed to every container (1.3 steps 5-6). */
  readonly environment: Readonly<Record<string, EnvironmentValue>>;
}

/** Where the application's traffic enters: the host and the Gateway the chart renders. */
export interface StrategyTrafficProps {
  /** The application's host. */
  readonly host: string;
  /** Its Gateway's name, in the application's namespace. */
  readonly gatewayName: string;
}

/** The workloads a strategy rendered, and how it then routes the Gateway's traffic to them. */
export interface DeliveryWorkloads {
  /** Route the Gateway's traffic to the workloads (a Service and HTTPRoute, or Flagger's Canary). */
  route(scope: Construct, props: StrategyTrafficProps): void;
}

/**
 * One delivery strategy (1.4) as the application chart calls it: render the workloads,
 * then, once the Gateway exists, route to them. Each strategy is one module
 * (src/strategies/<strategy>.ts) holding everything it decides; the chart never branches
 * on the strategy.
 */
export interface DeliveryStrategy<S extends Strategy = Strategy> {
  /** The strategy's `type` in the values files. */
  readonly type: S['type'];
  /** Render the Deployments of the strategy into `scope`. */
  workloads(scope: Construct, props: StrategyWorkloadProps<S>): DeliveryWorkloads;
}
