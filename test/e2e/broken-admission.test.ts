import { afterEach, describe, expect, it } from 'vitest';
import { brokenCopy, expectEnded, removeCopies, RUN_TIMEOUT_MS } from './cases';
import type { PlatformChartId } from '../../src/contract/platform-charts';
import { INFRASTRUCTURE_RELEASES, RELEASE_ROWS } from '../../src/infrastructure/releases';
import { breakRendered, dropApplications, runE2eOn } from './e2e-copy';

/** Every release of the infrastructure but `kept`: the Applications a case does without. */
function releasesBut(...kept: string[]): string[] {
  return RELEASE_ROWS.map((release) => release.name).filter((name) => !kept.includes(name));
}

afterEach(removeCopies);

describe("e2e: objects refused at admission (the API server, cert-manager's webhook) stop the run", () => {
  // cert-manager's own webhook (e2e/cert-manager.ts) judges every cert-manager object at
  // admission, as on a cluster: the stand-in that ran before issued this certificate.
  it(
    'fails the Application whose Certificate cert-manager\'s webhook refuses (an RSA key of 1024 bits)',
    () => {
      const copy = brokenCopy();
      // The issuers need cert-manager (its webhook judges the Certificate, in a later wave of the
      // issuers' sync than their GatewayClass) and Envoy Gateway with the Gateway API CRDs (the
      // GatewayClass is Progressing until its controller accepts it); the rest of the
      // infrastructure is not installed, and nothing after the issuers is reached.
      const { certManager, envoyGateway, gatewayApiCrds } = INFRASTRUCTURE_RELEASES;
      dropApplications(copy, 'local', releasesBut(gatewayApiCrds.name, certManager.name, envoyGateway.name), 'the issuers need cert-manager, Envoy Gateway and the Gateway API CRDs only');
      let certificate = '';
      breakRendered(copy, 'local/issuers.yaml', (objects) =>
        objects.map((o) => {
          if (o.kind !== 'Certificate') return o;
          certificate = o.metadata.name;
          return { ...o, spec: { ...o.spec, privateKey: { algorithm: 'RSA', size: 1024 } } };
        }), 'a Certificate with a 1024-bit RSA key');
      expect(certificate).not.toBe('');
      const run = runE2eOn(copy, ['--env', 'local', '--no-dry-run']);
      const { status, report } = run;
      expect(status).toBe(1);
      // internal/apis/certmanager/validation/certificate.go (v1.21.2): 2048 to 8192 bits for RSA.
      const denial = /admission webhook "webhook\.cert-manager\.io" denied the request: spec\.privateKey\.size: Invalid value: 1024: must be between 2048 and 8192 for rsa keyAlgorithm/;
      expectEnded(run, 'stopped', denial);
      const refused = report.applications.find((a) => denial.test(a.message));
      expect(refused?.name, JSON.stringify(report.applications, null, 2)).toBe('issuers');
      expect(refused?.sync).not.toBe('Synced');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails an invalid CronJob schedule, refused by the API server in the sync and in the dry-run',
    () => {
      const copy = brokenCopy();
      // The database needs prometheus-operator's CRDs (its PrometheusRule) of the infrastructure,
      // and nothing of the issuers: the rest is not installed, and the database comes right after
      // the infrastructure.
      dropApplications(copy, 'local', [...releasesBut(INFRASTRUCTURE_RELEASES.kubePrometheusStack.name), 'issuers' satisfies PlatformChartId], 'the database needs the PrometheusRule CRD only');
      let cronJob = '';
      breakRendered(copy, 'local/database.yaml', (objects) =>
        objects.map((o) => {
          if (o.kind !== 'CronJob') return o;
          cronJob = o.metadata.name;
          return { ...o, spec: { ...o.spec, schedule: '0 25 * * *' } };
        }), 'an hour that does not exist');
      expect(cronJob).not.toBe('');
      const run = runE2eOn(copy, ['--env', 'local']);
      const { status, report } = run;
      expect(status).toBe(1);
      // The API server refuses the object for good (HTTP 422, Invalid): the run stops.
      expectEnded(run, 'stopped', new RegExp(`refused for ${'\\d+'} s: .*${cronJob}.*is invalid`));
      const refused = report.applications.find((a) => a.message.includes(cronJob) && /schedule/i.test(a.message));
      expect(refused, JSON.stringify(report.applications, null, 2)).toBeDefined();
      const local = report.dryRun.find((r) => r.environment === 'local')!;
      expect(local.failures.some((f) => f.includes(`CronJob`) && f.includes(cronJob) && /schedule/i.test(f))).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );
});
