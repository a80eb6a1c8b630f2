import { execFile } from 'node:child_process';
import { E2eError } from '../src/base/errors';
import type { KubeClient, KubeObject } from './kube-client';

/**
 * The cluster's NetworkPolicies judged by an upstream engine: cyclonus's (its pkg/matcher, the
 * model of the NetworkPolicy API its conformance suite checks network plugins against), built
 * as `network-policy-verdict` by toolchain/build.sh (toolchain/network-policy/main.go). The
 * e2e cluster has no network plugin, so nothing enforces a policy: before the harness plays a
 * connection one pod makes to another (a smoke hook's HTTP, database and broker steps), it asks
 * the engine over the live policies, namespaces and pods, and plays a denied one as refused,
 * naming the policies that deny it.
 */

/** One end of a connection: a pod's namespace, labels and address. */
export interface PolicyEndpoint {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ip?: string;
}

/** A connection from one pod to a port of another (the destination's container port, by number and, when it has one, name). */
export interface PodConnection {
  readonly from: PolicyEndpoint;
  readonly to: PolicyEndpoint;
  readonly port: number;
  readonly portName?: string;
  readonly protocol?: 'TCP' | 'UDP' | 'SCTP';
}

/** For one direction: whether the policies selecting that end allow it, which allow it, and which select it and allow none of it (namespace/name). */
export interface DirectionVerdict {
  readonly allowed: boolean;
  readonly allowedBy: readonly string[];
  readonly deniedBy: readonly string[];
}

/** The engine's verdict on a connection: the destination's ingress and the source's egress. */
export interface PolicyVerdict {
  readonly allowed: boolean;
  readonly ingress: DirectionVerdict;
  readonly egress: DirectionVerdict;
}

/** A pod as an end of a connection. */
export function endpointOf(pod: KubeObject): PolicyEndpoint {
  const ip = pod.status?.podIP;
  return { namespace: String(pod.metadata.namespace), labels: pod.metadata.labels ?? {}, ...(typeof ip === 'string' && ip !== '' ? { ip } : {}) };
}

/** A connection from `from` to `port` of `to`, with that port's name when a container of `to` names it. */
export function podConnection(from: KubeObject, to: KubeObject, port: number): PodConnection {
  const name = (to.spec?.containers ?? []).flatMap((c: { ports?: Array<{ name?: string; containerPort: number }> }) => c.ports ?? []).find((p: { containerPort: number }) => p.containerPort === port)?.name;
  return { from: endpointOf(from), to: endpointOf(to), port, ...(name === undefined ? {} : { portName: name }) };
}

/** Why the policies deny a connection, naming them, or undefined when they allow it. */
export function denial(verdict: PolicyVerdict, what: string): string | undefined {
  if (verdict.allowed) return undefined;
  const sides = [
    ...(verdict.egress.allowed ? [] : [`egress by NetworkPolicy ${verdict.egress.deniedBy.join(', ')}`]),
    ...(verdict.ingress.allowed ? [] : [`ingress by NetworkPolicy ${verdict.ingress.deniedBy.join(', ')}`]),
  ];
  return `${what} denied: ${sides.join('; ')} (cyclonus's policy engine over the cluster's policies)`;
}

/** Judges connections with `network-policy-verdict` over the cluster's live NetworkPolicies and namespaces. */
export class NetworkPolicyJudge {
  constructor(
    /** The `network-policy-verdict` binary (toolchain component `network-policy`). */
    private readonly binary: string,
    private readonly client: KubeClient,
  ) {}

  /** One verdict per connection, in order. */
  async judge(connections: readonly PodConnection[]): Promise<PolicyVerdict[]> {
    if (connections.length === 0) return [];
    const [policies, namespaces] = await Promise.all([this.client.list('networking.k8s.io/v1', 'NetworkPolicy'), this.client.list('v1', 'Namespace')]);
    const input = JSON.stringify({
      policies: policies.map(({ apiVersion, kind, metadata, spec }) => ({ apiVersion, kind, metadata: { name: metadata.name, namespace: metadata.namespace }, spec })),
      namespaces: Object.fromEntries(namespaces.map((namespace) => [namespace.metadata.name, namespace.metadata.labels ?? {}])),
      connections,
    });
    return runVerdict(this.binary, input, connections.length);
  }
}

/** Run the engine on `input` and read its `count` verdicts. */
export function runVerdict(binary: string, input: string, count: number): Promise<PolicyVerdict[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(binary, [], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new E2eError(`${binary} failed: ${stderr.trim() || error.message}`));
      let verdicts: PolicyVerdict[];
      try {
        verdicts = JSON.parse(stdout) as PolicyVerdict[];
      } catch {
        return reject(new E2eError(`${binary} answered no JSON: ${stdout.slice(0, 200)}`));
      }
      if (!Array.isArray(verdicts) || verdicts.length !== count) return reject(new E2eError(`${binary} answered ${Array.isArray(verdicts) ? verdicts.length : 'no'} verdicts for ${count} connections`));
      resolve(verdicts);
    });
    child.stdin?.end(input);
  });
}
