import { REFRESH_ANNOTATION } from '../src/cluster/argo-cd';

/**
 * What Argo CD's application controller does with an Application, played on the fake API
 * server's objects for the ops verbs' unit tests. The real controller doing it is tested on
 * the e2e cluster (test/e2e/live-operations.test.ts).
 */

/**
 * The controller compares an Application that asks for a refresh, and removes the annotation
 * at the end of that comparison (argo-cd v3.6.1 controller/appcontroller.go,
 * persistReconciliationStatus).
 */
export function argoCdCompares(kind: string, app: any): void {
  if (kind === 'Application' && app.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined) delete app.metadata.annotations[REFRESH_ANNOTATION];
}

/**
 * The controller ends an operation a client asked to terminate (status.operationState.phase
 * Terminating): Failed, "Operation terminated", `operation` removed, no retry
 * (controller/appcontroller.go, processRequestedAppOperation).
 */
export function argoCdTerminates(kind: string, app: any): void {
  if (kind !== 'Application' || app.status?.operationState?.phase !== 'Terminating') return;
  app.status.operationState = { ...app.status.operationState, phase: 'Failed', message: 'Operation terminated', finishedAt: '2026-02-01T00:00:00Z' };
  delete app.operation;
}
