import * as kplus from 'cdk8s-plus-28';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { PLATFORM_NAMESPACES } from '../contract/choices';
import { CLUSTER_DNS } from '../contract/upstream';

/** One port of an allowed connection. */
export interface NetworkPort {
  /** Port number on the receiving pod. */
  readonly port: number;
  /**
   * Transport protocol.
   * @default 'TCP'
   */
  readonly protocol?: 'TCP' | 'UDP';
}

/**
 * A requirement on one label of a pod (a LabelSelector's matchExpressions): its value is one
 * of `in`, or (a pod without the label included) none of `notIn`.
 */
export interface LabelRequirement {
  readonly key: string;
  /** The label has one of these values. */
  readonly in?: readonly string[];
  /** The label has none of these values, or is absent. */
  readonly notIn?: readonly string[];
}

/** Pods in another namespace that may talk to ours (ingress) or that ours may call (egress). */
export interface NetworkPeer {
  /** Short name of the peer; names the policy `allow-ingress-from-<name>` / `allow-egress-to-<name>`. */
  readonly name: string;
  /**
   * Namespace of the peer pods, matched by the label Kubernetes puts on every namespace.
   * @default - `ipBlocks`, or any address when there are none
   */
  readonly namespace?: string;
  /**
   * Address ranges (CIDRs) of a peer outside every namespace, such as the API server; not
   * with `namespace`.
   * @default - any address, when `namespace` is not given either
   */
  readonly ipBlocks?: readonly string[];
  /**
   * Labels of the peer pods.
   * @default - every pod of the namespace
   */
  readonly podLabels?: Readonly<Record<string, string>>;
  /**
   * A requirement on a label of the peer pods, besides `podLabels` (e.g. one of several
   * components of the namespace).
   * @default - none
   */
  readonly podsWhere?: LabelRequirement;
  /** Ports the traffic goes to: ours for ingress, the peer's for egress. */
  readonly ports: readonly NetworkPort[];
  /**
   * Pods of our namespace this one allow applies to, when not the same as the others'
   * (e.g. cert-manager's HTTP-01 solver pods).
   * @default - the NetworkPolicies' `podLabels`
   */
  readonly localPodLabels?: Readonly<Record<string, string>>;
  /**
   * A requirement on a label of the pods of our namespace this one allow applies to, besides
   * `localPodLabels` (e.g. several components, or every pod but one kind).
   * @default - none
   */
  readonly localPodsWhere?: LabelRequirement;
}

export interface NetworkPoliciesProps {
  /** Namespace the policies guard. */
  readonly namespace: string;
  /**
   * Labels of the NetworkPolicy objects.
   * @default - none
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Annotations of the NetworkPolicy objects (e.g. a sync wave).
   * @default - none
   */
  readonly annotations?: Readonly<Record<string, string>>;
  /**
   * Pods of the namespace the allows apply to.
   * @default - every pod of the namespace
   */
  readonly podLabels?: Readonly<Record<string, string>>;
  /**
   * Peers allowed to connect to the pods, one NetworkPolicy each.
   * @default - none
   */
  readonly ingress?: readonly NetworkPeer[];
  /**
   * Peers the pods may connect to, one NetworkPolicy each.
   * @default - none
   */
  readonly egress?: readonly NetworkPeer[];
}

/** Name of the policy that denies all traffic the allows do not name. */
export const DEFAULT_DENY_POLICY = 'default-deny';

/** Cluster DNS: every namespace that resolves names needs this egress. */
export const DNS_PEER: NetworkPeer = {
  name: 'dns',
  namespace: PLATFORM_NAMESPACES.kubeSystem,
  podLabels: CLUSTER_DNS.podLabels,
  ports: [
    { port: CLUSTER_DNS.port, protocol: 'UDP' },
    { port: CLUSTER_DNS.port, protocol: 'TCP' },
  ],
};

/**
 * The Kubernetes API server, for operators that watch and write objects. It runs outside
 * every namespace, so the allow names its addresses: the environment's
 * `infrastructure.network.apiServerCidrs` (default: the private ranges, PRIVATE_NETWORKS in
 * src/contract/choices.ts). 443 is the `kubernetes` Service's port, 6443 the API server's
 * own, reached once the Service address is translated.
 */
export function apiServerPeer(cidrs: readonly string[]): NetworkPeer {
  return { name: 'api-server', ipBlocks: cidrs, ports: [{ port: 443 }, { port: 6443 }] };
}

/**
 * Zero-trust networking for one namespace: a default-deny policy (every pod, Ingress and
 * Egress, no rules), then one allow policy per peer, so the rendered diff of a new
 * connection is one small, named object.
 */
export class NetworkPolicies extends Construct {
  /** Denies every connection to and from the namespace's pods that no allow names. */
  public readonly defaultDeny: k8s.KubeNetworkPolicy;
  /** The allow policies, ingress first, in the order given. */
  public readonly allows: readonly k8s.KubeNetworkPolicy[];

  constructor(scope: Construct, id: string, props: NetworkPoliciesProps) {
    super(scope, id);
    const annotations = props.annotations === undefined ? {} : { annotations: { ...props.annotations } };
    const metadata = (name: string) => ({ name, namespace: props.namespace, labels: { ...props.labels }, ...annotations });
    const podSelector = props.podLabels === undefined ? {} : { matchLabels: { ...props.podLabels } };

    this.defaultDeny = new k8s.KubeNetworkPolicy(this, DEFAULT_DENY_POLICY, {
      metadata: metadata(DEFAULT_DENY_POLICY),
      spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] },
    });

    const allow = (name: string, peer: NetworkPeer, spec: Omit<k8s.NetworkPolicySpec, 'podSelector'>) => {
      const selector =
        peer.localPodLabels === undefined && peer.localPodsWhere === undefined ? podSelector : labelSelector(peer.localPodLabels, peer.localPodsWhere);
      return new k8s.KubeNetworkPolicy(this, name, { metadata: metadata(name), spec: { podSelector: selector, ...spec } });
    };
    const allows = [
      ...(props.ingress ?? []).map((peer) =>
        allow(`allow-ingress-from-${peer.name}`, peer, { policyTypes: ['Ingress'], ingress: [{ ...peersOf(peer, 'from'), ports: portsOf(peer) }] }),
      ),
      ...(props.egress ?? []).map((peer) =>
        allow(`allow-egress-to-${peer.name}`, peer, { policyTypes: ['Egress'], egress: [{ ...peersOf(peer, 'to'), ports: portsOf(peer) }] }),
      ),
    ];
    this.allows = allows;
  }
}

/**
 * `from` / `to` of a rule: the peer's pods, its address ranges, or nothing (any address) for
 * a peer with neither.
 */
function peersOf(peer: NetworkPeer, key: 'from' | 'to'): { from?: k8s.NetworkPolicyPeer[]; to?: k8s.NetworkPolicyPeer[] } {
  if (peer.namespace !== undefined && peer.ipBlocks !== undefined) throw new Error(`network peer ${peer.name}: a namespace or address ranges, not both`);
  let selectors: k8s.NetworkPolicyPeer[];
  if (peer.namespace !== undefined) {
    const namespaceSelector = { matchLabels: { [kplus.Namespace.NAME_LABEL]: peer.namespace } };
    selectors = [
      peer.podLabels === undefined && peer.podsWhere === undefined ? { namespaceSelector } : { namespaceSelector, podSelector: labelSelector(peer.podLabels, peer.podsWhere) },
    ];
  } else if (peer.ipBlocks !== undefined) {
    if (peer.ipBlocks.length === 0) throw new Error(`network peer ${peer.name}: no address range (an empty list would allow none)`);
    selectors = peer.ipBlocks.map((cidr) => ({ ipBlock: { cidr } }));
  } else {
    return {};
  }
  return key === 'from' ? { from: selectors } : { to: selectors };
}

/** A LabelSelector of pods: every label of `labels`, and the requirement when there is one. */
function labelSelector(labels: Readonly<Record<string, string>> | undefined, where: LabelRequirement | undefined): k8s.LabelSelector {
  const expressions: k8s.LabelSelectorRequirement[] = [];
  if (where?.in !== undefined) expressions.push({ key: where.key, operator: 'In', values: [...where.in] });
  if (where?.notIn !== undefined) expressions.push({ key: where.key, operator: 'NotIn', values: [...where.notIn] });
  if (where !== undefined && expressions.length === 0) throw new Error(`label requirement on ${where.key}: give \`in\` or \`notIn\``);
  return {
    ...(labels === undefined ? {} : { matchLabels: { ...labels } }),
    ...(expressions.length === 0 ? {} : { matchExpressions: expressions }),
  };
}

function portsOf(peer: NetworkPeer): k8s.NetworkPolicyPort[] {
  return peer.ports.map((port) => ({ port: k8s.IntOrString.fromNumber(port.port), protocol: port.protocol ?? 'TCP' }));
}
