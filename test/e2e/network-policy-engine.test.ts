import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readObjects } from '../../e2e/dry-run';
import type { KubeObject } from '../../e2e/kube-client';
import { denial, type PodConnection, podConnection, runVerdict } from '../../e2e/network-policy';
import { brokerPodsOf, kafkaNetworkPolicyOf, poolsOf } from '../../e2e/stand-in-strimzi';
import { smokeName } from '../../src/contract/naming';
import { PORTS } from '../../src/contract/contract';
import { GATEWAY, KUBE_PROMETHEUS_STACK } from '../../src/contract/upstream';
import { loadEnvironments } from '../../src/environments';
import { loadPlatform } from '../../src/environments/platform';
import { INFRASTRUCTURE_RELEASES, releaseNamespace } from '../../src/infrastructure/releases';
import { ensureToolchain } from '../../toolchain';
import { ROOT } from '../support';

// cyclonus's engine (toolchain/network-policy), which the harness asks before it plays a
// connection between pods, on local's rendered NetworkPolicies as they are live on the e2e
// cluster (with the one Strimzi's operator adds for the brokers): every connection the platform
// needs is allowed, and one whose port the policies do not open is denied, naming them.

const environment = loadEnvironments().find((env) => env.name === 'local')!;
const objects = readObjects(path.join(ROOT, 'dist', 'local')).map((entry) => entry.object);
const releaseValues = { environment, platform: loadPlatform() };
const STRIMZI_NAMESPACE = releaseNamespace(INFRASTRUCTURE_RELEASES.strimziOperator, releaseValues);

/** A pod address, as kwok gives each running pod one (its default pod CIDR, 10.0.0.0/24). */
let addresses = 0;
const podIP = (): string => `10.0.0.${++addresses}`;

/** A pod of a rendered workload (its template's labels), as kwok runs it. */
function podOf(kind: string, name: string, namespace: string): KubeObject {
  const workload = objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
  if (workload === undefined) throw new Error(`dist/local holds no ${kind} ${namespace}/${name}`);
  const template = workload.spec?.template ?? workload.spec?.jobTemplate?.spec?.template;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${name}-0`, namespace, labels: template.metadata.labels }, spec: template.spec, status: { podIP: podIP() } } as KubeObject;
}

const pod = (namespace: string, name: string, labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { containers: [] }, status: { podIP: podIP() } }) as KubeObject;

/** The live namespaces: each labelled with its name by the API server, and the rendered labels. */
function namespaces(): Record<string, Record<string, string>> {
  const names = new Set([...objects.map((o) => o.metadata.namespace).filter((n): n is string => n !== undefined), 'kube-system']);
  const labels: Record<string, Record<string, string>> = {};
  for (const name of names) labels[name] = { 'kubernetes.io/metadata.name': name, ...(objects.find((o) => o.kind === 'Namespace' && o.metadata.name === name)?.metadata.labels ?? {}) };
  return labels;
}

function judge(policies: readonly KubeObject[], connections: readonly PodConnection[]) {
  const toolchain = ensureToolchain(['network-policy'], ROOT);
  const input = JSON.stringify({ policies, namespaces: namespaces(), connections });
  return runVerdict(toolchain.bin('network-policy', 'network-policy-verdict'), input, connections.length);
}

/** The connections between pods the platform needs of each application, named. */
function needed(): Array<[string, PodConnection]> {
  const kafka = objects.find((o) => o.kind === 'Kafka')!;
  const broker = { ...brokerPodsOf(kafka, poolsOf(kafka, objects.filter((o) => o.kind === 'KafkaNodePool')))[0]!, status: { podIP: podIP() } } as KubeObject;
  const database = podOf('StatefulSet', objects.find((o) => o.kind === 'StatefulSet' && o.metadata.namespace === environment.database.namespace)!.metadata.name, environment.database.namespace);
  const monitoring = releaseNamespace(INFRASTRUCTURE_RELEASES.kubePrometheusStack, releaseValues);
  const prometheus = pod(monitoring, 'prometheus-0', { [KUBE_PROMETHEUS_STACK.nameLabel]: KUBE_PROMETHEUS_STACK.prometheus });
  return environment.applications.flatMap((application) => {
    const namespace = application.namespace;
    const app = podOf('Deployment', application.name, namespace);
    const smoke = podOf('Job', smokeName(application.name), namespace);
    const gateway = pod(releaseNamespace(INFRASTRUCTURE_RELEASES.envoyGateway, releaseValues), 'envoy-0', {
      ...GATEWAY.proxyPodLabels,
      [GATEWAY.owningGatewayNameLabel]: objects.find((o) => o.kind === 'Gateway' && o.metadata.namespace === namespace)!.metadata.name,
      [GATEWAY.owningGatewayNamespaceLabel]: namespace,
    });
    return [
      [`${application.name} to the database`, podConnection(app, database, PORTS.database)],
      [`${application.name} to a broker`, podConnection(app, broker, 9092)],
      [`the gateway to ${application.name}`, podConnection(gateway, app, PORTS.application)],
      [`Prometheus to ${application.name}'s /metrics`, podConnection(prometheus, app, PORTS.application)],
      [`${application.name}'s smoke hook to ${application.name}`, podConnection(smoke, app, PORTS.application)],
      [`${application.name}'s smoke hook to the database`, podConnection(smoke, database, PORTS.database)],
      [`${application.name}'s smoke hook to a broker`, podConnection(smoke, broker, 9092)],
    ] as Array<[string, PodConnection]>;
  });
}

function livePolicies(): KubeObject[] {
  const kafka = objects.find((o) => o.kind === 'Kafka')!;
  return [...objects.filter((o) => o.kind === 'NetworkPolicy'), kafkaNetworkPolicyOf({ ...kafka, metadata: { ...kafka.metadata, uid: 'k' } }, STRIMZI_NAMESPACE)];
}

describe("e2e: local's NetworkPolicies on cyclonus's engine (toolchain/network-policy)", () => {
  it('allow every connection the platform makes between pods', async () => {
    const connections = needed();
    const verdicts = await judge(livePolicies(), connections.map(([, connection]) => connection));
    const denied = verdicts.map((verdict, i) => denial(verdict, connections[i]![0])).filter((why) => why !== undefined);
    expect(denied).toEqual([]);
    // Without the brokers' policy Strimzi's operator makes, the broker namespace's default-deny refuses the listener.
    const toBroker = connections.filter(([what]) => what.endsWith('to a broker'));
    const withoutStrimzi = await judge(livePolicies().slice(0, -1), toBroker.map(([, connection]) => connection));
    expect(withoutStrimzi.map((verdict) => verdict.ingress.allowed)).toEqual(toBroker.map(() => false));
  });

  it("deny an application's database port once its policies open another, naming them", async () => {
    const application = environment.applications[0]!;
    const policies = livePolicies().map((policy) => {
      if (policy.metadata.namespace !== application.namespace) return policy;
      const copy = structuredClone(policy);
      for (const rule of copy.spec?.egress ?? []) for (const port of rule.ports ?? []) if (port.port === PORTS.database) port.port = PORTS.database + 1;
      return copy;
    });
    const connection = needed().find(([what]) => what === `${application.name}'s smoke hook to the database`)![1];
    const [verdict] = await judge(policies, [connection]);
    expect(verdict!.allowed).toBe(false);
    expect(verdict!.ingress.allowed).toBe(true);
    const smoke = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === application.namespace && o.spec.podSelector?.matchLabels?.app === smokeName(application.name))!;
    expect(verdict!.egress.deniedBy).toContain(`${application.namespace}/${smoke.metadata.name}`);
    expect(denial(verdict!, 'the database step')).toMatch(new RegExp(`^the database step denied: egress by NetworkPolicy .*${application.namespace}/${smoke.metadata.name}`));
  });
});
