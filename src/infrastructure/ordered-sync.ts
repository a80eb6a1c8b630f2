import { WAITS_SECONDS } from '../contract/contract';
import { DELIVERY_STAGES } from '../contract/platform-charts';

/**
 * The contract's waits along the root's walk of the delivery (1.3), in seconds: Argo CD's
 * operation timeout (`controller.sync.timeout.seconds`, argoCdValues).
 *
 * The root syncs one stage per wave and waits, before the next, for that stage's Application
 * to be healthy (argo-cd-health.ts); `infrastructure` does the same for its releases, one
 * wave after another. Each Application may take as long as the contract's wait for it, which
 * its retries span (`retryBudgetSeconds`, 8: 300 s, 600 s for the database and the broker).
 * The walk is the sum, wave by wave, of the longest such wait in the wave: the contract's
 * nominal waits, not an upper bound of every attempt (an application's attempt may wait on
 * its migrations hook, its rollout and its smoke hook in turn; the root's own retries start
 * the walk again within the same operation).
 *
 * Argo CD ends any operation older than its timeout, the retries of its sync included
 * (controller/appcontroller.go of v3.5.1, which the platform installs, and of v3.6.1, which
 * the e2e runs: `state.StartedAt.Add(ctrl.syncTimeout)`, "operation is terminating due to
 * timeout"), retries none it ended (`!terminating &&` before a retry) and
 * starts no automated sync of that revision again ("Skipping auto-sync: failed previous sync
 * attempt"). A timeout shorter than the walk would leave a first install half-done until the
 * next commit: on the e2e cluster, two runs sharing two cores took the root's sync past 300 s.
 * The contract's 300 s sync timeout (1.3.3, 8) is the span of each Application's retries'
 * waits, each Sync hook Job's deadline (`activeDeadlineSeconds`) and every wait of
 * `npm run ops`; Argo CD ends an operation only after this longer timeout.
 */
export function orderedSyncSeconds(releases: readonly { readonly syncWave: number }[]): number {
  // Every release waits for its pods (8: 300 s; the broker operator's is the same 300 s).
  const releaseWaves = new Set(releases.map((release) => release.syncWave));
  const infrastructure = releaseWaves.size * Math.max(WAITS_SECONDS.infrastructurePodsReady, WAITS_SECONDS.brokerOperatorReady);
  return DELIVERY_STAGES.map((stage) =>
    stage.id === 'infrastructure' ? infrastructure : 'retryBudgetSeconds' in stage ? stage.retryBudgetSeconds : WAITS_SECONDS.controllerSync,
  ).reduce((sum, seconds) => sum + seconds, 0);
}
