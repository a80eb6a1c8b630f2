import type { Construct } from 'constructs';
import { HTTP_PORT_NAME } from '../contract/choices';
import { METRICS } from '../contract/contract';
import { PodMonitor } from '../imports/podmonitor-monitoring.coreos.com';

export interface ApplicationPodMonitorProps {
  /** Name of the PodMonitor: the application name. */
  readonly name: string;
  /** Namespace of the application. */
  readonly namespace: string;
  /** Labels of the PodMonitor, including the one the monitoring stack selects by. */
  readonly labels: Readonly<Record<string, string>>;
  /** The label key the application's pods are told apart by (`app`). */
  readonly podLabelKey: string;
  /**
   * Values of `podLabelKey` whose pods are scraped: the application's own, plus the
   * `<app>-primary` of Flagger's primary Deployment in canary mode.
   */
  readonly podLabelValues: readonly string[];
}

/**
 * Prometheus scrapes the application's pods on `:8080/metrics` (4) through the container
 * port named `http`. A PodMonitor rather than a ServiceMonitor: in canary mode Flagger
 * owns three Services over the same pods, and blue-green's Service selects only the active
 * unit, while every running pod should be scraped exactly once.
 */
export class ApplicationPodMonitor extends PodMonitor {
  constructor(scope: Construct, id: string, props: ApplicationPodMonitorProps) {
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        selector: { matchExpressions: [{ key: props.podLabelKey, operator: 'In', values: [...props.podLabelValues] }] },
        podMetricsEndpoints: [{ port: HTTP_PORT_NAME, path: METRICS.path }],
      },
    });
  }
}
