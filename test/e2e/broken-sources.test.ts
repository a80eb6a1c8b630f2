import { spawnSync } from 'node:child_process';
import { locateToolchain } from '../../toolchain';
import { DELIVERY_STAGES, ROOT_APPLICATION } from '../../src/contract/platform-charts';
import { ROOT } from '../support';
import { afterAll, describe, expect, it } from 'vitest';
import { besideCopy, brokenCopy, expectEnded, removeCopies, RUN_TIMEOUT_MS } from './cases';
import { breakRendered, dropApplications, runE2eOn } from './e2e-copy';

// The copies go once every case has ended: the cases run side by side.
afterAll(removeCopies);

// Side by side (describe.concurrent; the runs are asynchronous): each run stops at the root's
// first sync or soon after, so it mostly waits (for an error to stay FAIL_FAST_SECONDS, or for
// its --timeout) and installs next to nothing. One after the other, the three took 274 s of a
// lane in npm run test:e2e (2026-11-29).
describe.concurrent('e2e: sources Argo CD cannot sync (keys, branches, order) stop the run', () => {
  it(
    'fails the Applications whose Secrets do not decrypt with the key given, showing the decryption error',
    async () => {
      const copy = brokenCopy();
      // Without the stages before the first that decrypts (the infrastructure, the issuers): a
      // manifest that does not decrypt fails before anything is applied, so the root reaches it at
      // its first sync instead of after every release of the infrastructure.
      const firstDecrypting = DELIVERY_STAGES.findIndex((stage) => 'secrets' in stage && stage.secrets);
      dropApplications(copy, 'local', DELIVERY_STAGES.slice(0, firstDecrypting).map((stage) => stage.id), 'nothing before the first stage that decrypts');
      const wrongKey = besideCopy(copy, 'wrong.key');
      spawnSync(locateToolchain(ROOT).bin('age', 'age-keygen'), ['-o', wrongKey]);
      // The default timeout: the run stops once the decryption error has stayed (FAIL_FAST_SECONDS).
      const run = await runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--age-key', wrongKey]);
      const { status, report } = run;
      expect(status).toBe(1);
      expectEnded(run, 'stopped', /ComparisonError for \d+ s: .*(sops|decrypt|data key)/i);
      const undecrypted = report.applications.filter((a) => /sops|decrypt|data key/i.test(a.message));
      expect(undecrypted.length, JSON.stringify(report.applications, null, 2)).toBeGreaterThan(0);
      for (const app of undecrypted) expect(app.sync).not.toBe('Synced');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails the Application that syncs a custom resource before the Application that installs its CRD',
    async () => {
      const copy = brokenCopy();
      breakRendered(copy, 'local/gitops.yaml', (objects) => [
        ...objects,
        { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'e2e-too-early' }, spec: { selfSigned: {} } },
      ], 'a ClusterIssuer in the root, before cert-manager is installed');
      // A CRD a later wave installs may mend this until the sync's retries are spent (300 s), so
      // nothing stops the run early: bounded here. The refusal shows at the root's first sync,
      // within about 40 s of the start with another case beside it.
      const { status, report } = await runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--timeout', '90']);
      expect(status).toBe(1);
      const root = report.applications.find((a) => a.message.includes('ClusterIssuer'));
      expect(root?.name).toBe(ROOT_APPLICATION);
      expect(root?.sync).not.toBe('Synced');
      expect(root?.message).toMatch(/ClusterIssuer.*(could not find|not found|no matches|CRD)/i);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fails Applications that follow a branch the repository does not have',
    async () => {
      const copy = brokenCopy();
      const renamed = new Set<string>();
      for (const file of ['gitops.yaml', 'infrastructure.yaml']) {
        breakRendered(copy, `local/${file}`, (objects) =>
          objects.map((o) => {
            if (o.kind !== 'Application') return o;
            for (const source of [o.spec.source, ...(o.spec.sources ?? [])]) {
              if (source?.path !== undefined) {
                source.targetRevision = 'no-such-branch';
                renamed.add(o.metadata.name);
              }
            }
            return o;
          }), `Applications follow no-such-branch (${file})`);
      }
      const run = await runE2eOn(copy, ['--env', 'local', '--no-dry-run']);
      const { status, report } = run;
      expect(status).toBe(1);
      expectEnded(run, 'stopped', /ComparisonError for \d+ s: .*no-such-branch/);
      const unresolved = report.applications.filter((a) => /no-such-branch/.test(a.message));
      expect(unresolved.length, JSON.stringify(report.applications, null, 2)).toBeGreaterThan(0);
      for (const app of unresolved) {
        expect(renamed.has(app.name)).toBe(true);
        expect(app.sync).not.toBe('Synced');
      }
    },
    RUN_TIMEOUT_MS,
  );
});
