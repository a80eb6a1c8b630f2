import type { Construct } from 'constructs';
import { ALERT_ROUTING } from '../contract/choices';
import {
  AlertmanagerConfig,
  AlertmanagerConfigSpecRouteMatchersMatchType as MatchType,
} from '../imports/alertmanagerconfig-monitoring.coreos.com';

export interface AlertRoutingProps {
  /** Namespace of the monitoring stack; the receivers' Secrets live there. */
  readonly namespace: string;
  /** Labels of the AlertmanagerConfig, including the one the monitoring stack selects by. */
  readonly labels: Readonly<Record<string, string>>;
  /** The alerts this routing handles (`alertname` values). */
  readonly alertNames: readonly string[];
  /** `severity` label of the alerts that page the on-call engineer. */
  readonly criticalSeverity: string;
  /** `severity` label of the alerts posted to the team chat. */
  readonly warningSeverity: string;
}

/**
 * Alert routing (6): every alert of the platform reaches the team chat webhook (escalation
 * level 1, seen by the team); a critical one also pages the on-call receiver (level 2): its
 * route continues to the chat's. Levels 3 and 4 are people, not receivers: the runbook's
 * escalation contacts. Both addresses come from Secrets
 * that SOPS delivers (5.3), never from git. The route matches only the platform's own
 * alerts, so the monitoring stack's other alerts (Watchdog, ...) keep their own routing.
 */
export class AlertRouting extends AlertmanagerConfig {
  constructor(scope: Construct, id: string, props: AlertRoutingProps) {
    const { onCall, teamChat } = ALERT_ROUTING;
    const severity = (value: string) => [{ name: 'severity', matchType: MatchType.VALUE_EQUALS, value }];
    super(scope, id, {
      metadata: { name: ALERT_ROUTING.name, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        route: {
          receiver: teamChat.receiver,
          matchers: [{ name: 'alertname', matchType: MatchType.VALUE_EQUAL_TILDE, value: props.alertNames.join('|') }],
          groupBy: ['alertname', 'namespace'],
          groupWait: ALERT_ROUTING.groupWait,
          groupInterval: ALERT_ROUTING.groupInterval,
          repeatInterval: ALERT_ROUTING.repeatInterval,
          routes: [
            // `continue`: a critical alert pages on-call and goes on to the chat's route.
            { receiver: onCall.receiver, matchers: severity(props.criticalSeverity), continue: true },
            {
              receiver: teamChat.receiver,
              matchers: [{ name: 'severity', matchType: MatchType.VALUE_EQUAL_TILDE, value: [props.criticalSeverity, props.warningSeverity].join('|') }],
            },
          ],
        },
        receivers: [
          { name: onCall.receiver, webhookConfigs: [{ urlSecret: { ...onCall.secret }, sendResolved: true }] },
          // Slack-compatible incoming webhook: posts a text message (6: outage communication).
          { name: teamChat.receiver, slackConfigs: [{ apiUrl: { ...teamChat.secret }, sendResolved: true }] },
        ],
      },
    });
  }
}
