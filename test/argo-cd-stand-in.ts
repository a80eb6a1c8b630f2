import { REFRESH_ANNOTATION, REFRESH_TIMESTAMP_ANNOTATION } from '../src/cluster/argo-cd';
import { ARGO_CD } from '../src/contract/upstream';

/**
 * What Argo CD's application controller does with an Application, played on the fake API
 * server's objects for the ops verbs' unit tests. The real controller doing it is tested on
 * the e2e cluster (test/e2e/converge.test.ts, the live operations).
 */

/**
 * The controller compares an Application that asks for a refresh, and at the end of that
 * comparison removes the refresh annotation and its timestamp (argo-cd v3.6.1
 * controller/appcontroller.go, persistReconciliationStatus, removeRefreshAnnotationCombo).
 */
export function argoCdCompares(kind: string, app: any): void {
  if (kind !== 'Application' || app.metadata.annotations?.[REFRESH_ANNOTATION] === undefined) return;
  delete app.metadata.annotations[REFRESH_ANNOTATION];
  delete app.metadata.annotations[REFRESH_TIMESTAMP_ANNOTATION];
}

/**
 * The controller ends an operation a client asked to terminate (status.operationState.phase
 * Terminating), which it processes only while `operation` is set (shouldProcessOperation):
 * Failed, "Operation terminated", `operation` removed, no retry (processRequestedAppOperation;
 * gitops-engine pkg/sync/sync_context.go, Terminate).
 */
export function argoCdTerminates(kind: string, app: any): void {
  if (kind !== 'Application' || app.operation === undefined || app.status?.operationState?.phase !== 'Terminating') return;
  app.status.operationState = { ...app.status.operationState, phase: 'Failed', message: 'Operation terminated', finishedAt: '2026-02-01T00:00:00Z' };
  delete app.operation;
}

/** A ready pod of Argo CD's application controller in `namespace`, labelled as the chart labels it (contract/upstream.ts ARGO_CD). */
export function applicationControllerPod(namespace: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${ARGO_CD.components.applicationController}-0`, namespace, labels: { [ARGO_CD.nameLabel]: ARGO_CD.components.applicationController } },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}
