import type { Construct } from 'constructs';
import { CANARY, FLAGGER_LOAD_TESTER, PORTS } from '../constants';
import {
  Canary,
  CanarySpecAnalysisWebhooksType,
  CanarySpecIngressRefKind,
  CanarySpecProvider,
  CanarySpecTargetRefKind,
} from '../imports/flagger-canary-flagger.app';

export interface CanaryReleaseProps {
  /** Application name: the Canary, its target Deployment and the Ingress share it. */
  readonly application: string;
  /** Namespace of the Canary and its target. */
  readonly namespace: string;
  /** Labels of the Canary object. */
  readonly labels: Readonly<Record<string, string>>;
  /** Host the load tester calls during analysis. */
  readonly host: string;
  /**
   * Drive synthetic traffic through Flagger's load tester during each analysis step.
   * @default false
   */
  readonly loadTest?: boolean;
}

/**
 * Canary (1.4, 2.3): a Flagger Canary for the application Deployment, routed by
 * ingress-nginx. Flagger creates and owns the `<app>`, `<app>-primary` and
 * `<app>-canary` Services, so the chart renders none; a new image tag on the target
 * Deployment starts an analysis.
 */
export class CanaryRelease extends Canary {
  constructor(scope: Construct, id: string, props: CanaryReleaseProps) {
    const { analysis, metrics } = CANARY;
    const { gates } = FLAGGER_LOAD_TESTER;
    const loadTester = `http://${FLAGGER_LOAD_TESTER.service}.${FLAGGER_LOAD_TESTER.namespace}`;
    super(scope, id, {
      metadata: { name: props.application, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        provider: CanarySpecProvider.NGINX, // Flagger routes through ingress-nginx
        targetRef: { apiVersion: 'apps/v1', kind: CanarySpecTargetRefKind.DEPLOYMENT, name: props.application },
        ingressRef: {
          apiVersion: 'networking.k8s.io/v1',
          kind: CanarySpecIngressRefKind.INGRESS,
          name: props.application,
        },
        progressDeadlineSeconds: CANARY.progressDeadlineSeconds,
        service: { port: PORTS.service, targetPort: PORTS.application },
        analysis: {
          interval: analysis.interval,
          threshold: analysis.threshold,
          maxWeight: analysis.maxWeight,
          stepWeight: analysis.stepWeight,
          metrics: [
            {
              name: metrics.requestSuccessRate.name,
              thresholdRange: { min: metrics.requestSuccessRate.thresholdMin },
              interval: metrics.requestSuccessRate.interval,
            },
            {
              name: metrics.requestDuration.name,
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
