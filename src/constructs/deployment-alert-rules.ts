import type { Construct } from 'constructs';
import { ALERTS } from '../contract/contract';
import { PrometheusRule, PrometheusRuleSpecGroupsRulesExpr } from '../imports/prometheusrule-monitoring.coreos.com';

export interface DeploymentAlertRulesProps {
  /** Namespace of the application; the rules only look at its Deployments and requests. */
  readonly namespace: string;
  /** Labels of the PrometheusRule, including the one the monitoring stack selects by. */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * Name of the PrometheusRule.
   * @default 'deployment-rules'
   */
  readonly name?: string;
}

/** kube-state-metrics: one series per Deployment condition and status, value 1 when it holds. */
const DEPLOYMENT_CONDITION = 'kube_deployment_status_condition';
/** The application's request counter (4: metrics on :8080/metrics), labelled by HTTP status. */
const HTTP_REQUESTS = 'http_requests_total';

/** `10m` -> `10 minutes`: the description says what `for` says. */
function spelledOut(duration: string): string {
  const match = /^(\d+)([smh])$/.exec(duration);
  if (!match) throw new Error(`unsupported duration ${duration}`);
  const unit = { s: 'second', m: 'minute', h: 'hour' }[match[2] as 's' | 'm' | 'h'];
  return `${match[1]} ${unit}${match[1] === '1' ? '' : 's'}`;
}

/**
 * The alert rule group `deployment.rules` (2.4, 3.2): exactly two alerts.
 * DeploymentFailed fires when a Deployment's Progressing condition has been False for
 * 10 minutes (a rollout that passed its progress deadline); HighErrorRateDuringDeployment
 * when more than 5 % of requests have answered 5xx for 2 minutes. Both are scoped to the
 * application's namespace, so each environment's rules judge only its own workload.
 */
export class DeploymentAlertRules extends PrometheusRule {
  constructor(scope: Construct, id: string, props: DeploymentAlertRulesProps) {
    const inNamespace = `namespace="${props.namespace}"`;
    const { deploymentFailed, highErrorRate } = ALERTS;
    const requestRate = (selector: string) =>
      `sum by (namespace) (rate(${HTTP_REQUESTS}{${selector}}[${highErrorRate.rateWindow}]))`;
    super(scope, id, {
      metadata: { name: props.name ?? 'deployment-rules', namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        groups: [
          {
            name: ALERTS.groupName,
            rules: [
              {
                alert: deploymentFailed.name,
                expr: PrometheusRuleSpecGroupsRulesExpr.fromString(
                  `${DEPLOYMENT_CONDITION}{${inNamespace}, condition="Progressing", status="false"} == 1`,
                ),
                for: deploymentFailed.for,
                labels: { severity: deploymentFailed.severity },
                annotations: {
                  summary: 'Deployment {{ $labels.namespace }}/{{ $labels.deployment }} failed',
                  description: `Deployment {{ $labels.deployment }} in {{ $labels.namespace }} has been failing for more than ${spelledOut(deploymentFailed.for)}: its Progressing condition is False.`,
                },
              },
              {
                alert: highErrorRate.name,
                expr: PrometheusRuleSpecGroupsRulesExpr.fromString(
                  `${requestRate(`${inNamespace}, status=~"5.."`)} / ${requestRate(inNamespace)} > ${highErrorRate.ratio}`,
                ),
                for: highErrorRate.for,
                labels: { severity: highErrorRate.severity },
                annotations: {
                  summary: 'Error rate is high during deployment in {{ $labels.namespace }}',
                  description: `{{ $value | humanizePercentage }} of requests in {{ $labels.namespace }} answered 5xx over the last ${highErrorRate.rateWindow} (threshold ${highErrorRate.ratio * 100}%).`,
                },
              },
            ],
          },
        ],
      },
    });
  }
}
