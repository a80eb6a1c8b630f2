import { afterEach, describe, expect, it } from 'vitest';
import { brokenCopy, expectEnded, removeCopies, RUN_TIMEOUT_MS } from './cases';
import { breakRendered, runE2eOn } from './e2e-copy';

afterEach(removeCopies);

describe("e2e: objects refused at admission (the API server, cert-manager's webhook) stop the run", () => {
  // cert-manager's own webhook (e2e/cert-manager.ts) judges every cert-manager object at
  // admission, as on a cluster: the stand-in that ran before issued this certificate.
  it(
    'fails the Application whose Certificate cert-manager\'s webhook refuses (an RSA key of 1024 bits)',
    () => {
      const copy = brokenCopy();
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
