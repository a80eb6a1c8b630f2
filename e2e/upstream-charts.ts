/**
 * The upstream charts the e2e serves for real, by chart name: each one's folder is packaged
 * from its pinned release's Go module (toolchain/build.sh UPSTREAM_CHARTS, at every version the
 * release table knows), so Argo CD renders the platform's values with the real templates and
 * values.schema.json. Every other chart of src/infrastructure/releases.ts is a stand-in
 * (e2e/stand-in-charts.ts).
 */
export const REAL_CHARTS: readonly string[] = ['cert-manager', 'gateway-crds-helm', 'gateway-helm', 'flagger', 'loadtester'];

/** Whether Argo CD is served the real chart of this name on the e2e cluster (else a stand-in). */
export function isRealChart(chart: string): boolean {
  return REAL_CHARTS.includes(chart);
}
