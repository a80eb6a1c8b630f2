import { spawnSync } from 'node:child_process';
import { escapeRegExp } from '../../src/base/regexp';
import { locateToolchain } from '../../toolchain';
import { DELIVERY_STAGES, GITOPS_CHART_ID, type PlatformChartId, ROOT_APPLICATION } from '../../src/contract/platform-charts';
import { chartFile } from '../../src/contract/layout';
import { SYNC_WAVE_ANNOTATION } from '../../src/contract/upstream';
import { INFRASTRUCTURE_RELEASES, RELEASE_ROWS } from '../../src/infrastructure/releases';
import { ROOT } from '../support';
import { afterAll, describe, expect, it } from 'vitest';
import { besideCopy, brokenCopy, expectEnded, removeCopies, RUN_TIMEOUT_MS } from './cases';
import { breakRendered, commitAll, dropApplications, runE2eOn } from './e2e-copy';
import { stringify } from 'yaml';
import { loadEnvironments } from '../../src/environments';
import { initEnvironment } from '../../src/secrets/init';
import { Sops, sopsTools } from '../../src/secrets/sops';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// The copies go once every case has ended: the cases run side by side.
afterAll(removeCopies);

// Side by side (describe.concurrent; the runs are asynchronous): each run stops at the root's
// first sync or soon after, so it mostly waits (for an error to stay FAIL_FAST_SECONDS, or for
// its --timeout) and installs next to nothing. One after the other, the three took 274 s of a
// lane in npm run test:e2e (2026-11-29).
describe.concurrent('e2e: sources Argo CD cannot sync (keys, chart values, branches, order) stop the run', () => {
  it(
    "fails the Applications whose Secrets do not decrypt with the key given, and the one whose Helm values the real chart's schema refuses, naming each",
    async () => {
      const copy = brokenCopy();
      // Without the stages before the first that decrypts but the infrastructure's (the issuers): a
      // manifest that does not decrypt fails before anything is applied, so the root reaches it at
      // its first sync instead of after every release of the infrastructure.
      const stages = DELIVERY_STAGES.map((stage) => stage.id);
      const firstDecrypting = DELIVERY_STAGES.findIndex((stage) => 'secrets' in stage && stage.secrets);
      const infrastructure: PlatformChartId = 'infrastructure';
      // The infrastructure holds only cert-manager, the real chart with a values schema
      // (values.schema.json, additionalProperties: false), moved into the first decrypting
      // stage's wave: the root syncs both at its first sync, and the schema's refusal stops
      // nothing the decryption errors need. One run for both breaks (docs/e2e.md).
      const { certManager } = INFRASTRUCTURE_RELEASES;
      dropApplications(
        copy,
        'local',
        [...stages.slice(0, firstDecrypting).filter((id) => id !== infrastructure), ...RELEASE_ROWS.map((release) => release.name).filter((name) => name !== certManager.name)],
        'nothing before the first stage that decrypts but cert-manager',
      );
      breakRendered(copy, chartFile('local', GITOPS_CHART_ID), (objects) => {
        const wave = objects.find((o) => o.kind === 'Application' && o.metadata.name === stages[firstDecrypting])!.metadata.annotations[SYNC_WAVE_ANNOTATION];
        return objects.map((o) => {
          if (o.kind === 'Application' && o.metadata.name === infrastructure) o.metadata.annotations[SYNC_WAVE_ANNOTATION] = wave;
          return o;
        });
      }, `the infrastructure in the wave of ${stages[firstDecrypting]}`);
      // A boolean of cert-manager's values given as a string, as a quoted YAML "true" would be:
      // the chart's schema types every key of `crds` (cert-manager v1.21 values.schema.json).
      let refused = '';
      breakRendered(copy, chartFile('local', infrastructure), (objects) =>
        objects.map((o) => {
          if (o.kind !== 'Application' || o.metadata.name !== certManager.name) return o;
          const crds = o.spec.source.helm.valuesObject.crds as Record<string, unknown>;
          const key = Object.keys(crds).find((k) => typeof crds[k] === 'boolean');
          if (key === undefined) throw new Error(`${certManager.name}'s values give no boolean under crds: ${JSON.stringify(crds)}`);
          crds[key] = String(crds[key]);
          refused = `at '/crds/${key}': got string, want boolean`;
          return o;
        }), `${certManager.name}: a boolean of its values given as a string`);
      const wrongKey = besideCopy(copy, 'wrong.key');
      spawnSync(locateToolchain(ROOT).bin('age', 'age-keygen'), ['-o', wrongKey]);
      // Whichever is final first stops the run; with --settle, once the other is final too.
      const run = await runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--settle', '30', '--age-key', wrongKey]);
      const { status, report, output } = run;
      expect(status).toBe(1);
      const schemaRefusal = `${certManager.name}: ComparisonError: the chart refuses its values: values don't meet the specifications of the schema(s) in the following chart(s): ${certManager.chart.chart}: - ${refused}`;
      expectEnded(run, 'stopped', new RegExp(`^(\\S+: ComparisonError for \\d+ s: .*(sops|decrypt|data key)|${escapeRegExp(schemaRefusal)})`, 'i'), certManager.name);
      // Each final, named in the run's log.
      expect(output).toContain(`final: ${schemaRefusal}`);
      expect(output).toMatch(/final: \S+: ComparisonError for \d+ s: .*(sops|decrypt|data key)/i);
      const undecrypted = report.applications.filter((a) => /sops|decrypt|data key/i.test(a.message));
      expect(undecrypted.length, JSON.stringify(report.applications, null, 2)).toBeGreaterThan(0);
      for (const app of undecrypted) expect(app.sync).not.toBe('Synced');
      const chart = report.applications.find((a) => a.name === certManager.name);
      expect(chart?.message, JSON.stringify(report.applications, null, 2)).toContain(refused);
      expect(chart?.sync).not.toBe('Synced');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'refuses, in the repository server\'s sops plugin, a ClusterRoleBinding hidden in an encrypted Secret\'s file',
    async () => {
      const copy = brokenCopy();
      // Write access without any private key: the environment's public key encrypts anything.
      // Here the case's own key, so that the run decrypts what was written (--age-key).
      const key = besideCopy(copy, 'own.key');
      const local = loadEnvironments().find((environment) => environment.name === 'local')!;
      const tools = sopsTools(ROOT);
      initEnvironment({ root: copy, environment: local, keyFile: key, rotateKey: true, tools });
      const file = 'secrets/local/monitoring/chat-webhook.sops.yaml';
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-sops-'));
      try {
        const binding = {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'chat-webhook' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'monitoring' }],
        };
        fs.writeFileSync(path.join(copy, file), new Sops(tools, copy, fs.readFileSync(key, 'utf8'), home).encrypt(file, stringify(binding)));
      } finally {
        fs.rmSync(home, { recursive: true, force: true });
      }
      commitAll(copy, 'local: a ClusterRoleBinding saved as the chat webhook\'s encrypted Secret');
      // The monitoring Application first: its manifest generation is refused at the root's first sync.
      const monitoring = DELIVERY_STAGES.findIndex((stage) => stage.id === 'monitoring');
      dropApplications(copy, 'local', DELIVERY_STAGES.slice(0, monitoring).map((stage) => stage.id), 'the monitoring Application first');
      const run = await runE2eOn(copy, ['--env', 'local', '--no-dry-run', '--age-key', key]);
      expect(run.status).toBe(1);
      expectEnded(run, 'stopped', /ComparisonError for \d+ s: .*sops plugin: chat-webhook\.sops\.yaml: "apiVersion" is "rbac\.authorization\.k8s\.io\/v1", expected "v1"/, 'monitoring');
      const refused = run.report.applications.find((application) => application.name === 'monitoring');
      expect(refused?.sync, JSON.stringify(run.report.applications, null, 2)).not.toBe('Synced');
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
