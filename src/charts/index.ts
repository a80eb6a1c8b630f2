import type { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { PlatformChartId } from '../contract/platform-charts';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';
import { BrokerChart } from './broker-chart';
import { DatabaseChart } from './database-chart';
import { InfrastructureChart } from './infrastructure-chart';
import { IssuersChart } from './issuers-chart';
import { MonitoringChart } from './monitoring-chart';

/** What every platform chart is built from. */
export interface PlatformChartContext {
  /** The validated environment to render. */
  readonly environment: Environment;
  /** Platform-wide settings. */
  readonly platform: Platform;
}

/**
 * The builder of each platform chart of DELIVERY_STAGES (src/contract/platform-charts.ts),
 * by id: a row of that table without a builder here does not compile.
 */
export const PLATFORM_CHART_BUILDERS: { readonly [id in PlatformChartId]: (scope: Construct, id: string, context: PlatformChartContext) => Chart } = {
  infrastructure: (scope, id, { environment, platform }) => new InfrastructureChart(scope, id, { environment, platform }),
  issuers: (scope, id, { environment }) => new IssuersChart(scope, id, { environment }),
  database: (scope, id, { environment }) => new DatabaseChart(scope, id, { environment }),
  broker: (scope, id, { environment }) => new BrokerChart(scope, id, { environment }),
  monitoring: (scope, id, { environment }) => new MonitoringChart(scope, id, { environment }),
};
