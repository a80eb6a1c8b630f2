import type { LiveObject } from './connection';

/**
 * When a core Event last happened, as `kubectl get events` orders them: its `lastTimestamp`,
 * else its `eventTime` (events.k8s.io writers), else when it was created; '' when none is set.
 */
export function eventTime(event: LiveObject): string {
  return String(event['lastTimestamp'] ?? event['eventTime'] ?? event.metadata['creationTimestamp'] ?? '');
}
