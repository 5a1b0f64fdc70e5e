// Package scheduling is kube-scheduler's default profile Filter plugins
// (node name, unschedulable, taints, node affinity, host ports, resources,
// topology spread, inter-pod affinity) over a snapshot of nodes and pods,
// and the FitError message the scheduler gives when a pod fits nowhere.
// The preemption and drain models share it; it never imports
// k8s.io/kubernetes.
package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Input is the scheduler's view for one pod: every node, every pod (bound
// ones, and pending ones holding a nomination), and the pod to schedule.
type Input struct {
	Nodes []*corev1.Node
	Pods  []*corev1.Pod
	// Namespaces are needed only for namespaceSelectors in inter-pod
	// (anti-)affinity; nil means they were not read.
	Namespaces []*corev1.Namespace
	// Pod is the pod being scheduled, its spec.priority resolved.
	Pod   *corev1.Pod
	Rules rules.SchedulerRules
}

// Placement is where a pod can go: the nodes where every filter passes,
// in the scheduler's node order, or the FitError message when none.
type Placement struct {
	Feasible []string
	// LeastAllocated is NodeResourcesFit's default score (0-100) of each
	// feasible node, in Feasible's order: the free share of CPU and memory
	// once the pod is there. It is one of several scores the scheduler
	// adds up. (A slice, not a map: a zone's replacements each have
	// thousands of feasible nodes.)
	LeastAllocated []int64
	FitError       string
	// Unmodelled names filters the pod needs that this package does not
	// model: the answer is uncertain.
	Unmodelled []string
}

// Place runs the filters for in.Pod on every node.
func Place(in Input) (Placement, error) {
	c, err := NewCluster(in)
	if err != nil {
		return Placement{}, err
	}
	return c.place(), nil
}

// place runs the filters for the cluster's pod on every node.
func (c *Cluster) place() Placement {
	pl := Placement{Unmodelled: append(c.Unmodelled, UnmodelledSpec(c.Pre.Pod)...)}
	var failed []Verdict // kept only while no node fits: the FitError's
	for _, n := range c.Nodes {
		v := c.FilterWithNominated(n)
		switch {
		case v.Code == Fits:
			pl.Feasible = append(pl.Feasible, n.Node.Name)
			pl.LeastAllocated = append(pl.LeastAllocated, c.leastAllocated(n))
		case len(pl.Feasible) == 0:
			failed = append(failed, v)
		}
	}
	if len(pl.Feasible) == 0 {
		pl.FitError = FitError(failed)
	}
	return pl
}

// Likeliest is the feasible node the scheduler most likely picks: the
// least allocated (ties to the first in node order); "" when none fits.
func (pl Placement) Likeliest() string {
	if len(pl.Feasible) == 0 {
		return ""
	}
	best := 0
	for i := range pl.Feasible {
		if pl.LeastAllocated[i] > pl.LeastAllocated[best] {
			best = i
		}
	}
	return pl.Feasible[best]
}

// leastAllocated is the LeastAllocated strategy with CPU and memory
// weighted 1 each (the scheduler also counts 100m CPU and 200Mi for a pod
// that requests none; this does not).
func (c *Cluster) leastAllocated(n *NodeState) int64 {
	score := func(alloc, used int64) int64 {
		if alloc <= 0 || used > alloc {
			return 0
		}
		return (alloc - used) * 100 / alloc
	}
	cpu := score(n.allocatable.milliCPU, n.requested.milliCPU+c.Pre.req.milliCPU)
	mem := score(n.allocatable.memory, n.requested.memory+c.Pre.req.memory)
	return (cpu + mem) / 2
}

// FitError is framework.FitError.Error() without a PostFilter message:
// "0/N nodes are available: " and a sorted histogram of the reasons.
func FitError(verdicts []Verdict) string {
	counts := map[string]int{}
	for _, v := range verdicts {
		if v.Code == Fits {
			continue
		}
		for _, r := range strings.Split(v.Reason, ", ") {
			counts[r]++
		}
	}
	parts := make([]string, 0, len(counts))
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%d nodes are available:", len(verdicts))
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}

// UnmodelledSpec names the parts of the pod's spec whose filters this
// package does not model.
func UnmodelledSpec(p *corev1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.ConfigMap != nil, v.Secret != nil, v.EmptyDir != nil, v.DownwardAPI != nil, v.Projected != nil, v.HostPath != nil, v.Image != nil:
		default:
			out = appendOnce(out, fmt.Sprintf("volume %q: volume limits, binding, zones and restrictions are not modelled", v.Name))
		}
	}
	if len(p.Spec.ResourceClaims) > 0 {
		out = append(out, "resource claims (dynamic resource allocation) are not modelled")
	}
	for _, t := range p.Spec.Tolerations {
		if t.Operator != "" && t.Operator != corev1.TolerationOpEqual && t.Operator != corev1.TolerationOpExists {
			out = append(out, fmt.Sprintf("toleration operator %s is not modelled", t.Operator))
		}
	}
	if p.Spec.RuntimeClassName != nil && p.Spec.Overhead == nil && p.Spec.NodeName == "" && p.UID == "" {
		out = append(out, fmt.Sprintf("runtimeClassName %q: the overhead admission would add is not known offline", *p.Spec.RuntimeClassName))
	}
	if a := p.Spec.Affinity; a != nil {
		for _, t := range slices.Concat(requiredAffinity(p), requiredAntiAffinity(p)) {
			if len(t.MatchLabelKeys) > 0 || len(t.MismatchLabelKeys) > 0 {
				out = appendOnce(out, "matchLabelKeys/mismatchLabelKeys in inter-pod affinity are not modelled")
			}
		}
	}
	if p.Spec.SchedulingGroup != nil {
		out = append(out, "pods of a scheduling group (workload-aware preemption) are not modelled")
	}
	return out
}

func appendOnce(s []string, msg string) []string {
	if slices.Contains(s, msg) {
		return s
	}
	return append(s, msg)
}

func join(s []string) string { return strings.Join(s, ", ") }

func sortedNames(m map[corev1.ResourceName]int64) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(m))
}
