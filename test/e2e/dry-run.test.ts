import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startApiServer, startEtcd } from '../../e2e/control-plane';
import { dryRunEnvironment } from '../../e2e/dry-run';
import type { KubeClient } from '../../e2e/kube-client';
import { Pki } from '../../e2e/pki';
import { Supervisor } from '../../e2e/processes';
import { ensureToolchain } from '../../toolchain';
import { podSecurityLabels } from '../../src/contract/security-context';
import { ROOT } from '../support';

// The e2e's server-side dry-run on a real kube-apiserver (toolchain/build.sh): etcd and
// one API server, no controllers. Pod Security admission enforces on Pods only (for a
// Deployment it answers with a warning), so the dry-run also sends the Pod each pod
// template would become, in a namespace applied with the labels the render gives it.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-dry-run-'));
const supervisor = new Supervisor(path.join(dir, 'logs'), dir);
let client: KubeClient;

beforeAll(async () => {
  const toolchain = ensureToolchain(['kubernetes', 'etcd'], ROOT);
  const pki = new Pki(path.join(dir, 'pki')).cluster();
  const etcd = await startEtcd({ toolchain, supervisor, dir });
  ({ client } = await startApiServer({ toolchain, supervisor, dir, pki, etcd, name: 'kube-apiserver', etcdPrefix: '/registry' }));
}, 120_000);

afterAll(async () => {
  client?.close();
  await supervisor.stopAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

const namespace = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

/** A Deployment whose one container runs as root with every capability: the baseline level admits it, restricted does not. */
const rootDeployment = (ns: string, serviceAccountName?: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'webapp', namespace: ns },
  spec: {
    selector: { matchLabels: { app: 'webapp' } },
    template: {
      metadata: { labels: { app: 'webapp' } },
      spec: { ...(serviceAccountName ? { serviceAccountName } : {}), containers: [{ name: 'webapp', image: 'registry.example.com/webapp:1.0.0' }] },
    },
  },
});

/** A dist/ with one environment, `env`, holding `objects` in one file. */
function dist(objects: readonly object[]): string {
  const root = fs.mkdtempSync(path.join(dir, 'dist-'));
  fs.mkdirSync(path.join(root, 'env'));
  fs.writeFileSync(path.join(root, 'env', 'webapp.yaml'), objects.map((o) => stringify(o)).join('---\n'));
  return root;
}

describe('the server-side dry-run on a real API server', () => {
  it('refuses a pod template the namespace\'s rendered Pod Security level forbids, naming the Pod, its workload and the file', async () => {
    const result = await dryRunEnvironment(client, 'env', dist([namespace('restricted-app', podSecurityLabels('restricted')), rootDeployment('restricted-app')]));
    expect(result.objects).toBe(2);
    expect(result.pods).toBe(1);
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0]).toMatch(/^webapp\.yaml: Pod restricted-app\/webapp \(from Deployment restricted-app\/webapp's template\): .*violates PodSecurity "restricted:latest"/);
    // The namespace was applied with the rendered labels, not created bare.
    expect((await client.get('v1', 'Namespace', 'restricted-app'))?.metadata.labels).toMatchObject(podSecurityLabels('restricted'));
  });

  it('admits the same template where the rendered level is baseline, with the ServiceAccount it names made first', async () => {
    const result = await dryRunEnvironment(client, 'env', dist([namespace('baseline-app', podSecurityLabels('baseline')), rootDeployment('baseline-app', 'webapp')]));
    expect(result.failures).toEqual([]);
    expect(await client.get('v1', 'ServiceAccount', 'webapp', 'baseline-app')).toBeDefined();
  });

  it('gives a StatefulSet\'s Pod the volume of each claim template, as its controller does', async () => {
    const container = {
      name: 'db',
      image: 'registry.example.com/db:1.0.0',
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
      securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
    };
    const statefulSet = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'stateful' },
      spec: {
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { containers: [container] } },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    };
    const result = await dryRunEnvironment(client, 'env', dist([namespace('stateful', podSecurityLabels('restricted')), statefulSet]));
    expect(result.failures).toEqual([]);
    expect(result.pods).toBe(1);
  });

  it('gives a namespace of the same name exactly the labels of the environment being dry-run', async () => {
    await dryRunEnvironment(client, 'env', dist([namespace('shared', podSecurityLabels('baseline'))]));
    const result = await dryRunEnvironment(client, 'env', dist([namespace('shared', podSecurityLabels('restricted')), rootDeployment('shared')]));
    expect(result.failures.join('\n')).toMatch(/violates PodSecurity "restricted:latest"/);
  });
});
