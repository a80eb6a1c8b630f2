// network-policy-verdict: whether Kubernetes NetworkPolicies allow connections between pods,
// judged by cyclonus's policy engine (github.com/mattfenwick/cyclonus/pkg/matcher), the model
// of the NetworkPolicy API its conformance tests check CNIs against. The e2e harness asks it
// before it plays a connection one pod makes to another (e2e/network-policy.ts).
//
// stdin: {"policies": [NetworkPolicy...], "namespaces": {"<name>": {labels}}, "connections":
// [{"from": {"namespace", "labels", "ip"}, "to": {...}, "port": 1433, "portName": "tds",
// "protocol": "TCP"}]}; stdout: one verdict per connection, in order: allowed, and for each
// direction the policies (namespace/name) that select its pod and allow it, or deny it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

type endpoint struct {
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels"`
	IP        string            `json:"ip,omitempty"`
}

type connection struct {
	From     endpoint `json:"from"`
	To       endpoint `json:"to"`
	Port     int      `json:"port"`
	PortName string   `json:"portName,omitempty"`
	Protocol string   `json:"protocol,omitempty"`
}

type input struct {
	Policies    []*networkingv1.NetworkPolicy `json:"policies"`
	Namespaces  map[string]map[string]string  `json:"namespaces"`
	Connections []connection                  `json:"connections"`
}

type direction struct {
	Allowed   bool     `json:"allowed"`
	AllowedBy []string `json:"allowedBy"`
	DeniedBy  []string `json:"deniedBy"`
}

type verdict struct {
	Allowed bool      `json:"allowed"`
	Ingress direction `json:"ingress"`
	Egress  direction `json:"egress"`
}

// policyNames: the NetworkPolicies a target was built from, as namespace/name, sorted.
func policyNames(targets []*matcher.Target) []string {
	seen := map[string]bool{}
	names := []string{}
	for _, target := range targets {
		for _, policy := range target.SourceRules {
			name := policy.Namespace + "/" + policy.Name
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

func judged(result *matcher.DirectionResult) direction {
	return direction{Allowed: result.IsAllowed(), AllowedBy: policyNames(result.AllowingTargets), DeniedBy: policyNames(result.DenyingTargets)}
}

// defaulted: a policy as the API server stores it (k8s.io/kubernetes v1.36.3
// pkg/apis/networking/v1/defaults.go SetDefaults_NetworkPolicy, SetDefaults_NetworkPolicyPort):
// without policyTypes, Ingress, and Egress when it has egress rules; a port without a protocol,
// TCP. The live objects already are; one given as rendered (a test's) is made so.
func defaulted(p *networkingv1.NetworkPolicy) {
	if len(p.Spec.PolicyTypes) == 0 {
		p.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(p.Spec.Egress) != 0 {
			p.Spec.PolicyTypes = append(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	tcp := v1.ProtocolTCP
	for i := range p.Spec.Ingress {
		for j := range p.Spec.Ingress[i].Ports {
			if p.Spec.Ingress[i].Ports[j].Protocol == nil {
				p.Spec.Ingress[i].Ports[j].Protocol = &tcp
			}
		}
	}
	for i := range p.Spec.Egress {
		for j := range p.Spec.Egress[i].Ports {
			if p.Spec.Egress[i].Ports[j].Protocol == nil {
				p.Spec.Egress[i].Ports[j].Protocol = &tcp
			}
		}
	}
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintf(os.Stderr, "network-policy-verdict: reading the input: %v\n", err)
		os.Exit(2)
	}
	for _, p := range in.Policies {
		defaulted(p)
	}
	policy := matcher.BuildNetworkPolicies(false, in.Policies)
	peer := func(e endpoint) *matcher.TrafficPeer {
		labels := e.Labels
		if labels == nil {
			labels = map[string]string{}
		}
		namespaceLabels := in.Namespaces[e.Namespace]
		if namespaceLabels == nil {
			namespaceLabels = map[string]string{}
		}
		return &matcher.TrafficPeer{Internal: &matcher.InternalPeer{PodLabels: labels, NamespaceLabels: namespaceLabels, Namespace: e.Namespace}, IP: e.IP}
	}
	verdicts := make([]verdict, 0, len(in.Connections))
	for _, c := range in.Connections {
		protocol := v1.Protocol(c.Protocol)
		if protocol == "" {
			protocol = v1.ProtocolTCP
		}
		result := policy.IsTrafficAllowed(&matcher.Traffic{Source: peer(c.From), Destination: peer(c.To), ResolvedPort: c.Port, ResolvedPortName: c.PortName, Protocol: protocol})
		verdicts = append(verdicts, verdict{Allowed: result.IsAllowed(), Ingress: judged(result.Ingress), Egress: judged(result.Egress)})
	}
	if err := json.NewEncoder(os.Stdout).Encode(verdicts); err != nil {
		fmt.Fprintf(os.Stderr, "network-policy-verdict: %v\n", err)
		os.Exit(1)
	}
}
