import type * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import type { EnvironmentValue } from '../constructs/application-workload';
import type { Application, ApplicationOf } from '../environments';
import type { CommittedChart } from './committed-chart';
import type { StrategyType } from '../environments/strategy-registry';

/** What every delivery strategy's workloads share: the chart hands it over once. */
export interface StrategyWorkloadProps<A extends Application = Application> {
  /** The application, in this strategy. */
  readonly application: A;
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
 * One delivery strategy (1.4) as the application chart and synth call it: render the
 * workloads, then, once the Gateway exists, route to them; and judge a change against the
 * chart committed before it. Each strategy is one folder, `src/strategies/<strategy>/`: this
 * (its `index.ts`), and one values module, what it decides about the values files
 * (`src/environments/strategy-<strategy>.ts`, configuration); the chart never branches on
 * the strategy.
 */
export interface DeliveryStrategy<Type extends StrategyType> {
  /** The strategy's `type` in the values files. */
  readonly type: Type;
  /** Render the Deployments of the strategy into `scope`. */
  workloads(scope: Construct, props: StrategyWorkloadProps<ApplicationOf<Type>>): DeliveryWorkloads;
  /**
   * Why the application's values may not follow the chart committed before them (`label`
   * names that chart in messages): a step of the strategy's procedure skipped. `committed` is
   * undefined when there is no committed chart (a first render).
   * @default - every change may follow any committed state: no committed chart is read
   */
  stepProblems?(application: ApplicationOf<Type>, committed: CommittedChart | undefined, label: string): string[];
}
