import { afterEach, describe, expect, it } from 'vitest';
import { brokenCopy, expectEnded, removeCopies, RUN_TIMEOUT_MS } from './cases';
import { chartFile } from '../../src/contract/layout';
import { GITOPS_CHART_ID, type PlatformChartId } from '../../src/contract/platform-charts';
import { SYNC_WAVE_ANNOTATION } from '../../src/contract/upstream';
import { INFRASTRUCTURE_RELEASES, RELEASE_ROWS } from '../../src/infrastructure/releases';
import type { E2eReport } from '../../e2e/harness';
import { breakRendered, dropApplications, runE2eOn } from './e2e-copy';

/** Every release of the infrastructure but `kept`: the Applications a case does without. */
function releasesBut(...kept: string[]): string[] {
  return RELEASE_ROWS.map((release) => release.name).filter((name) => !kept.includes(name));
}

const ISSUERS: PlatformChartId = 'issuers';
const DATABASE: PlatformChartId = 'database';

/** What the one run of this file broke, and how it ended. */
interface AdmissionRun {
  readonly certificate: string;
  readonly cronJob: string;
  readonly status: number | null;
  readonly output: string;
  readonly report: E2eReport;
}

/**
 * Both refusals in one run (each whole run costs the convergence of the infrastructure): a
 * Certificate of the issuers with a 1024-bit RSA key, which cert-manager's own webhook
 * (e2e/cert-manager.ts) judges at admission as on a cluster, and the database's backup CronJob
 * with an hour that does not exist, which the API server refuses. The database comes after the
 * issuers in the root's waves, and a refused issuers' sync would keep the root from ever
 * reaching it: in this copy the database is in the issuers' wave (it needs nothing of theirs),
 * so the two are synced side by side. The infrastructure is cut to what they need: the issuers
 * cert-manager (its webhook judges the Certificate, in a later wave of the issuers' sync than
 * their GatewayClass) and Envoy Gateway with the Gateway API CRDs (the GatewayClass is
 * Progressing until its controller accepts it); the database prometheus-operator's CRDs (its
 * PrometheusRule). Nothing after their wave is reached. With `--settle`, the stop for the
 * first refusal waits until the other Application has ended or kept its state.
 */
async function admissionRun(): Promise<AdmissionRun> {
  const copy = brokenCopy();
  const { certManager, envoyGateway, gatewayApiCrds, kubePrometheusStack } = INFRASTRUCTURE_RELEASES;
  dropApplications(copy, 'local', releasesBut(gatewayApiCrds.name, certManager.name, envoyGateway.name, kubePrometheusStack.name), 'the issuers need cert-manager, Envoy Gateway and the Gateway API CRDs; the database the PrometheusRule CRD');
  breakRendered(copy, chartFile('local', GITOPS_CHART_ID), (objects) => {
    const issuersWave = objects.find((o) => o.kind === 'Application' && o.metadata.name === ISSUERS)!.metadata.annotations[SYNC_WAVE_ANNOTATION];
    return objects.map((o) => {
      if (o.kind !== 'Application' || o.metadata.name !== DATABASE) return o;
      o.metadata.annotations[SYNC_WAVE_ANNOTATION] = issuersWave;
      return o;
    });
  }, "the database in the issuers' wave");
  let certificate = '';
  breakRendered(copy, chartFile('local', ISSUERS), (objects) =>
    objects.map((o) => {
      if (o.kind !== 'Certificate') return o;
      certificate = o.metadata.name;
      return { ...o, spec: { ...o.spec, privateKey: { algorithm: 'RSA', size: 1024 } } };
    }), 'a Certificate with a 1024-bit RSA key');
  let cronJob = '';
  breakRendered(copy, chartFile('local', DATABASE), (objects) =>
    objects.map((o) => {
      if (o.kind !== 'CronJob') return o;
      cronJob = o.metadata.name;
      return { ...o, spec: { ...o.spec, schedule: '0 25 * * *' } };
    }), 'an hour that does not exist');
  // The dry-run as well: it must name the CronJob too.
  const { status, output, report } = await runE2eOn(copy, ['--env', 'local', '--settle', '30']);
  return { certificate, cronJob, status, output, report };
}

let broken: Promise<AdmissionRun> | undefined;
const brokenRun = (): Promise<AdmissionRun> => (broken ??= admissionRun());

afterEach(removeCopies);

describe("e2e: objects refused at admission (the API server, cert-manager's webhook) stop the run", () => {
  it(
    'stops the run for one of the two refusals, which no retry mends',
    async () => {
      const run = await brokenRun();
      expect(run.certificate).not.toBe('');
      expect(run.cronJob).not.toBe('');
      expect(run.status).toBe(1);
      // Whichever was final first; the other had ended too, or kept its state (--settle).
      expectEnded(run, 'stopped', new RegExp(`(webhook\\.cert-manager\\.io" denied the request|refused for \\d+ s: .*${run.cronJob}.*is invalid)`));
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails the Application whose Certificate cert-manager\'s webhook refuses (an RSA key of 1024 bits)',
    async () => {
      const { report } = await brokenRun();
      // internal/apis/certmanager/validation/certificate.go (v1.21.2): 2048 to 8192 bits for RSA.
      const denial = /admission webhook "webhook\.cert-manager\.io" denied the request: spec\.privateKey\.size: Invalid value: 1024: must be between 2048 and 8192 for rsa keyAlgorithm/;
      const refused = report.applications.find((a) => denial.test(a.message));
      expect(refused?.name, JSON.stringify(report.applications, null, 2)).toBe(ISSUERS);
      expect(refused?.sync).not.toBe('Synced');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails an invalid CronJob schedule, refused by the API server in the sync and in the dry-run',
    async () => {
      const { report, cronJob } = await brokenRun();
      // The API server refuses the object for good (HTTP 422, Invalid).
      const refused = report.applications.find((a) => a.message.includes(cronJob) && /schedule/i.test(a.message));
      expect(refused?.name, JSON.stringify(report.applications, null, 2)).toBe(DATABASE);
      expect(refused?.sync).not.toBe('Synced');
      const local = report.dryRun.find((r) => r.environment === 'local')!;
      expect(local.failures.some((f) => f.includes('CronJob') && f.includes(cronJob) && /schedule/i.test(f))).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );
});
