import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeClient, KubeObject } from '../e2e/kube-client';
import { denial, NetworkPolicyJudge, podConnection, type PolicyVerdict } from '../e2e/network-policy';

// The harness asks cyclonus's engine (toolchain/network-policy) before it plays a connection
// between pods; test/e2e/network-policy-engine.test.ts runs the engine itself on the platform's
// policies. Here: what the judge sends it and how a denial reads.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const pod = (namespace: string, name: string, labels: Record<string, string>, ports: Array<{ name?: string; containerPort: number }> = []): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels, uid: `${namespace}-${name}` }, spec: { containers: [{ name: 'main', ports }] }, status: { podIP: '10.0.0.7' } }) as unknown as KubeObject;

describe('a connection between pods, as the judge puts it to the engine (e2e/network-policy.ts)', () => {
  it('names the destination port as its container names it, and each end by namespace, labels and address', () => {
    const smoke = pod('webapp', 'webapp-smoke-x', { app: 'webapp-smoke' });
    const server = pod('database', 'mssql-0', { app: 'mssql' }, [{ name: 'tds', containerPort: 1433 }]);
    expect(podConnection(smoke, server, 1433)).toEqual({
      from: { namespace: 'webapp', labels: { app: 'webapp-smoke' }, ip: '10.0.0.7' },
      to: { namespace: 'database', labels: { app: 'mssql' }, ip: '10.0.0.7' },
      port: 1433,
      portName: 'tds',
    });
    expect(podConnection(server, smoke, 8080).portName).toBeUndefined();
  });

  it('sends the live policies, the namespaces\' labels and the connections, and reads one verdict each', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'network-policy-judge-'));
    dirs.push(dir);
    const verdict: PolicyVerdict = { allowed: false, ingress: { allowed: true, allowedBy: [], deniedBy: [] }, egress: { allowed: false, allowedBy: [], deniedBy: ['webapp/default-deny', 'webapp/webapp-smoke'] } };
    const engine = path.join(dir, 'network-policy-verdict');
    fs.writeFileSync(engine, `#!/bin/sh\ncat > ${dir}/input.json\necho '${JSON.stringify([verdict])}'\n`, { mode: 0o755 });
    const policy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny', namespace: 'webapp', uid: 'u', resourceVersion: '7' }, spec: { podSelector: {}, policyTypes: ['Egress'] } };
    const client = {
      list: async (_apiVersion: string, kind: string) =>
        kind === 'NetworkPolicy' ? [policy] : [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'webapp', labels: { 'kubernetes.io/metadata.name': 'webapp' } } }],
    } as unknown as KubeClient;
    const connection = podConnection(pod('webapp', 'smoke', { app: 'webapp-smoke' }), pod('database', 'mssql-0', { app: 'mssql' }, [{ containerPort: 1433 }]), 1433);
    expect(await new NetworkPolicyJudge(engine, client).judge([connection])).toEqual([verdict]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'input.json'), 'utf8'))).toEqual({
      policies: [{ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny', namespace: 'webapp' }, spec: { podSelector: {}, policyTypes: ['Egress'] } }],
      namespaces: { webapp: { 'kubernetes.io/metadata.name': 'webapp' } },
      connections: [connection],
    });
    // No connection, no engine run.
    expect(await new NetworkPolicyJudge(path.join(dir, 'missing'), client).judge([])).toEqual([]);
  });

  it('fails naming the engine when it answers a verdict short', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'network-policy-judge-'));
    dirs.push(dir);
    const engine = path.join(dir, 'network-policy-verdict');
    fs.writeFileSync(engine, '#!/bin/sh\ncat > /dev/null\necho "[]"\n', { mode: 0o755 });
    const client = { list: async () => [] } as unknown as KubeClient;
    const connection = podConnection(pod('a', 'x', {}), pod('b', 'y', {}), 80);
    await expect(new NetworkPolicyJudge(engine, client).judge([connection])).rejects.toThrow(`${engine} answered 0 verdicts for 1 connections`);
  });

  it('says which side denies and names the policies that do', () => {
    const direction = (allowed: boolean, deniedBy: string[] = []) => ({ allowed, allowedBy: [], deniedBy });
    expect(denial({ allowed: true, ingress: direction(true), egress: direction(true) }, 'x')).toBeUndefined();
    expect(denial({ allowed: false, ingress: direction(false, ['database/default-deny']), egress: direction(false, ['webapp/default-deny', 'webapp/webapp-smoke']) }, "the database step's connection")).toBe(
      "the database step's connection denied: egress by NetworkPolicy webapp/default-deny, webapp/webapp-smoke; ingress by NetworkPolicy database/default-deny (cyclonus's policy engine over the cluster's policies)",
    );
  });
});
