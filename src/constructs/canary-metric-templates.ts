import { Construct } from 'constructs';
import { CANARY } from '../contract/contract';
import { MetricTemplate, MetricTemplateSpecProviderType } from '../imports/flagger-metrictemplate-flagger.app';

/** The application's request counter (4, 2.4), labelled by HTTP status. */
export const REQUESTS_METRIC = 'http_requests_total';
/** The application's latency histogram (4: series named `http_request_duration*`), in seconds. */
export const DURATION_BUCKET_METRIC = 'http_request_duration_seconds_bucket';

/**
 * The canary Deployment's pods only: Flagger keeps the target Deployment `<target>` as the
 * canary (pods `<target>-<replicaset hash>-<pod hash>`) and runs `<target>-primary`, whose
 * pods have one more dash-separated part and so do not match (Prometheus anchors `=~`).
 * Flagger's template variables: `{{ namespace }}`, `{{ target }}`, `{{ interval }}`
 * (fluxcd/flagger v1.44.0 docs/gitbook/usage/metrics.md, "Custom metrics").
 */
const CANARY_PODS = 'namespace="{{ namespace }}", pod=~"{{ target }}-[0-9a-zA-Z]+(-[0-9a-zA-Z]+)"';

export interface CanaryMetricTemplatesProps {
  /** Namespace of the templates: the Canary's. */
  readonly namespace: string;
  /** Labels of the templates. */
  readonly labels: Readonly<Record<string, string>>;
  /** Prometheus that scrapes the application's PodMonitor. */
  readonly prometheusAddress: string;
}

/**
 * The two canary metrics of 2.3 as Flagger MetricTemplates over the application's own
 * series (scraped from :8080/metrics by the PodMonitor), not Flagger's built-ins: for the
 * `gatewayapi` provider those read Envoy's `envoy_cluster_*` series with labels the
 * Prometheus Operator's scrape does not produce.
 * - `request-success-rate`: percentage of the canary's requests not answered 5xx;
 * - `request-duration`: the canary's 99th percentile latency in milliseconds.
 */
export class CanaryMetricTemplates extends Construct {
  /** The success-rate template (percent). */
  public readonly successRate: MetricTemplate;
  /** The duration template (milliseconds). */
  public readonly duration: MetricTemplate;

  constructor(scope: Construct, id: string, props: CanaryMetricTemplatesProps) {
    super(scope, id);
    const { requestSuccessRate, requestDuration } = CANARY.metrics;
    const provider = { type: MetricTemplateSpecProviderType.PROMETHEUS, address: props.prometheusAddress };
    const metadata = (name: string) => ({ name, namespace: props.namespace, labels: { ...props.labels } });
    const requests = (extra: string) => `sum(rate(${REQUESTS_METRIC}{${CANARY_PODS}${extra}}[{{ interval }}]))`;

    this.successRate = new MetricTemplate(this, 'success-rate', {
      metadata: metadata(requestSuccessRate.name),
      spec: { provider, query: `100 * ${requests(', status!~"5.."')} / ${requests('')}` },
    });
    this.duration = new MetricTemplate(this, 'duration', {
      metadata: metadata(requestDuration.name),
      spec: {
        provider,
        query: `1000 * histogram_quantile(0.99, sum by (le) (rate(${DURATION_BUCKET_METRIC}{${CANARY_PODS}}[{{ interval }}])))`,
      },
    });
  }
}
