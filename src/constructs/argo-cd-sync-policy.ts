import { SYNC_RETRY } from '../contract/choices';
import { WAITS_SECONDS } from '../contract/contract';
import type { ApplicationSpecSyncPolicy, ApplicationSpecSyncPolicyRetry } from '../imports/application-argoproj.io';

/** Argo CD's in-cluster destination: every environment is its own cluster. */
export const IN_CLUSTER = 'https://kubernetes.default.svc';

/**
 * How long Argo CD waits between retries of a failed sync: exponential backoff from
 * SYNC_RETRY, each wait capped at half the budget, as many retries as it takes for the
 * waits to add up to the budget (300 s: 10, 20, 40, 80, 150).
 */
export function backoffWaits(budgetSeconds: number): number[] {
  const cap = Math.floor(budgetSeconds / 2);
  const waits: number[] = [];
  let total = 0;
  let next: number = SYNC_RETRY.firstBackoffSeconds;
  while (total < budgetSeconds) {
    const wait = Math.min(next, cap, budgetSeconds - total);
    waits.push(wait);
    total += wait;
    next *= SYNC_RETRY.factor;
  }
  return waits;
}

/** `syncPolicy.retry` whose backoff spends exactly `budgetSeconds` (1.3.4 / 8: 300 s). */
export function retryPolicy(budgetSeconds: number = WAITS_SECONDS.infrastructurePodsReady): ApplicationSpecSyncPolicyRetry {
  const waits = backoffWaits(budgetSeconds);
  return {
    limit: waits.length,
    backoff: {
      duration: `${SYNC_RETRY.firstBackoffSeconds}s`,
      factor: SYNC_RETRY.factor,
      maxDuration: `${Math.max(...waits)}s`,
    },
  };
}

export interface SyncPolicyOptions {
  /** Sync automatically, pruning and self-healing (live environments only). */
  readonly automated: boolean;
  /** Argo CD sync options such as `CreateNamespace=true`. */
  readonly syncOptions?: readonly string[];
  /**
   * Seconds the retries may span (8: 600 s for the database pod and the broker cluster).
   * @default WAITS_SECONDS.infrastructurePodsReady (300)
   */
  readonly retryBudgetSeconds?: number;
  /**
   * Labels Argo CD sets on the namespace it creates (`CreateNamespace=true`), e.g. Pod
   * Security Admission's (argo-cd v3.5.1 docs/user-guide/sync-options.md, "Namespace
   * Auto-Creation": `managedNamespaceMetadata`).
   * @default - none
   */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
}

/**
 * The sync policy of every Application of the platform: automated with prune and
 * self-heal where the environment syncs itself (1.3: local, testing, staging), manual
 * otherwise (production is planned); retries bounded by the 300 s budget.
 */
export function syncPolicy(options: SyncPolicyOptions): ApplicationSpecSyncPolicy {
  const syncOptions = [...(options.syncOptions ?? [])];
  return {
    ...(options.automated ? { automated: { prune: true, selfHeal: true } } : {}),
    ...(options.namespaceLabels === undefined ? {} : { managedNamespaceMetadata: { labels: { ...options.namespaceLabels } } }),
    retry: retryPolicy(options.retryBudgetSeconds),
    ...(syncOptions.length > 0 ? { syncOptions } : {}),
  };
}
