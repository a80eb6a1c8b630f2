import type { Construct } from 'constructs';
import { FLAGGER_LOAD_TESTER } from '../contract/choices';
import { CANARY, PORTS } from '../contract/contract';
import { GATEWAY } from '../contract/upstream';
import type { ApplicationSpecIgnoreDifferences } from '../imports/application-argoproj.io';
import { Canary, CanarySpecAnalysisWebhooksType, CanarySpecProvider, CanarySpecTargetRefKind } from '../imports/flagger-canary-flagger.app';

/** The parts of a rendered Canary `flaggerOwnedFields` reads. */
export interface RenderedCanary {
  readonly metadata?: { readonly namespace?: string };
  readonly spec?: { readonly targetRef?: { readonly apiVersion?: string; readonly kind?: string; readonly name?: string } };
}

/**
 * What Flagger changes on objects git also renders, as Argo CD `ignoreDifferences`: the
 * target Deployment's `spec.replicas`. Flagger copies the target into `<target>-primary`
 * and scales the target to zero between analyses ("the target deployment is scaled to
 * zero": fluxcd/flagger v1.44.0 docs/gitbook/usage/how-it-works.md), then scales it up for
 * the next one; Argo CD would put git's replicas back at every sync. The Application also
 * needs `RespectIgnoreDifferences=true`, or a sync still applies the ignored field (argo-cd
 * v3.5.1 docs/user-guide/sync-options.md, "Respect ignore differences configs").
 */
export function flaggerOwnedFields(canary: RenderedCanary): ApplicationSpecIgnoreDifferences[] {
  const target = canary.spec?.targetRef;
  if (target?.kind !== CanarySpecTargetRefKind.DEPLOYMENT || target.name === undefined) return [];
  const group = target.apiVersion?.includes('/') ? target.apiVersion.split('/')[0] : '';
  return [
    {
      group,
      kind: target.kind,
      name: target.name,
      ...(canary.metadata?.namespace === undefined ? {} : { namespace: canary.metadata.namespace }),
      jsonPointers: ['/spec/replicas'],
    },
  ];
}

/** The MetricTemplates the Canary's two metrics read (CanaryMetricTemplates). */
export interface CanaryMetricTemplateRefs {
  /** Namespace of both templates. */
  readonly namespace: string;
  /** Template of `request-success-rate` (percent). */
  readonly successRate: string;
  /** Template of `request-duration` (milliseconds). */
  readonly duration: string;
}

export interface CanaryReleaseProps {
  /** Application name: the Canary, its target Deployment and Flagger's HTTPRoute share it. */
  readonly application: string;
  /** Namespace of the Canary and its target. */
  readonly namespace: string;
  /** Labels of the Canary object. */
  readonly labels: Readonly<Record<string, string>>;
  /** The application's host: Flagger's HTTPRoute serves it, the load tester calls it. */
  readonly host: string;
  /** The Gateway Flagger attaches its HTTPRoute to (on the `https` listener), in the Canary's namespace. */
  readonly gatewayName: string;
  /** Where the two metrics' queries are. */
  readonly metricTemplates: CanaryMetricTemplateRefs;
  /**
   * Drive synthetic traffic through Flagger's load tester during each analysis step.
   * @default false
   */
  readonly loadTest?: boolean;
}

/**
 * Canary (1.4, 2.3): a Flagger Canary for the application Deployment with the Gateway API
 * provider (`gatewayapi:v1`). Flagger creates and owns the `<app>`, `<app>-primary` and
 * `<app>-canary` Services and the HTTPRoute `<app>` on the Gateway (its backend weights are
 * the traffic split), so the chart renders none of them; a new image tag on the target
 * Deployment starts an analysis. The metrics read the application's own series through
 * MetricTemplates (fluxcd/flagger v1.44.0 docs/gitbook/tutorials/gatewayapi-progressive-delivery.md).
 */
export class CanaryRelease extends Canary {
  constructor(scope: Construct, id: string, props: CanaryReleaseProps) {
    const { analysis, metrics } = CANARY;
    const { gates } = FLAGGER_LOAD_TESTER;
    const loadTester = `http://${FLAGGER_LOAD_TESTER.service}.${FLAGGER_LOAD_TESTER.namespace}`;
    super(scope, id, {
      metadata: { name: props.application, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        provider: CanarySpecProvider.GATEWAYAPI_V1,
        targetRef: { apiVersion: 'apps/v1', kind: CanarySpecTargetRefKind.DEPLOYMENT, name: props.application },
        progressDeadlineSeconds: CANARY.progressDeadlineSeconds,
        service: {
          port: PORTS.service,
          targetPort: PORTS.application,
          hosts: [props.host],
          gatewayRefs: [{ name: props.gatewayName, namespace: props.namespace, sectionName: GATEWAY.listeners.https }],
        },
        analysis: {
          interval: analysis.interval,
          threshold: analysis.threshold,
          maxWeight: analysis.maxWeight,
          stepWeight: analysis.stepWeight,
          metrics: [
            {
              name: metrics.requestSuccessRate.name,
              templateRef: { name: props.metricTemplates.successRate, namespace: props.metricTemplates.namespace },
              thresholdRange: { min: metrics.requestSuccessRate.thresholdMin },
              interval: metrics.requestSuccessRate.interval,
            },
            {
              name: metrics.requestDuration.name,
              templateRef: { name: props.metricTemplates.duration, namespace: props.metricTemplates.namespace },
              thresholdRange: { max: metrics.requestDuration.thresholdMax },
              interval: metrics.requestDuration.interval,
            },
          ],
          webhooks: [
            // 3.2: promotion and rollback wait for an operator (docs/runbook.md, canary).
            { name: 'promotion-gate', type: CanarySpecAnalysisWebhooksType.CONFIRM_HYPHEN_PROMOTION, url: `${loadTester}${gates.promotion.check}` },
            { name: 'rollback-gate', type: CanarySpecAnalysisWebhooksType.ROLLBACK, url: `${loadTester}${gates.rollback.check}` },
            ...(props.loadTest
              ? [
                  // Through the Gateway: the host resolves to the Gateway's address only.
                  {
                    name: 'load-test',
                    type: CanarySpecAnalysisWebhooksType.ROLLOUT,
                    url: `${loadTester}/`,
                    timeout: FLAGGER_LOAD_TESTER.timeout,
                    metadata: {
                      cmd: `hey -z ${FLAGGER_LOAD_TESTER.duration} -q ${FLAGGER_LOAD_TESTER.queriesPerSecond} -c ${FLAGGER_LOAD_TESTER.concurrency} https://${props.host}/health`,
                    },
                  },
                ]
              : []),
          ],
        },
      },
    });
  }
}
