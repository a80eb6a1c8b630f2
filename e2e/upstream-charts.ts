/**
 * The upstream charts the e2e serves for real, by chart name: each one's folder is packaged
 * from its pinned release's Go module (toolchain/build.sh UPSTREAM_CHARTS, at every version the
 * release table knows), so Argo CD renders the platform's values with the real templates and
 * values.schema.json. Every other chart of src/infrastructure/releases.ts is a stand-in
 * (e2e/stand-in-charts.ts).
 */
export const REAL_CHARTS: readonly string[] = ['cert-manager', 'gateway-crds-helm', 'gateway-helm', 'flagger', 'loadtester'];

/** Whether the e2e serves the real chart of this name. */
export function isRealChart(chart: string): boolean {
  return REAL_CHARTS.includes(chart);
}

/** The real charts Argo CD is served on the e2e cluster in place of stand-ins: every one. */
export const SERVED_REAL_CHARTS: readonly string[] = REAL_CHARTS;

/** Whether Argo CD is served the real chart of this name on the e2e cluster. */
export function isServedRealChart(chart: string): boolean {
  return SERVED_REAL_CHARTS.includes(chart);
}
