/**
 * A failure of the e2e run that a person reads as a finding, not a crash: a process
 * that would not start, a wait that timed out, an Application that did not converge.
 * The CLI prints it without a stack trace and exits 1.
 */
export class E2eError extends Error {
  override readonly name = 'E2eError';
}
