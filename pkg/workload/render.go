package workload

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// podEntry copies the facts the rules read into the output.
func podEntry(p *engine.Pod, c *engine.Comparator) prediction.Pod {
	out := prediction.Pod{
		Name:                p.Name,
		UID:                 p.UID,
		Node:                p.Node,
		Phase:               string(p.Phase),
		Ready:               p.Ready,
		Created:             p.Created,
		DeletionCost:        p.Cost,
		DeletionCostRaw:     p.CostRaw,
		DeletionCostInvalid: p.CostInvalid,
		Rank:                p.Rank,
		Restarts:            p.Restarts,
		SidecarRestarts:     p.SidecarRestarts,
	}
	if p.Source != nil {
		out.Owner = ownerText(p.Source)
	}
	if p.Ready && !p.ReadyTime.IsZero() {
		t := p.ReadyTime
		out.ReadySince = &t
		b := engine.Bucket(t, c.Now)
		out.ReadyBucket = &b
	}
	if !p.Created.IsZero() {
		b := engine.Bucket(p.Created, c.Now)
		out.CreatedBucket = &b
	}
	return out
}

func flip(d engine.Decision) engine.Decision {
	d.A, d.B = d.B, d.A
	d.AFirst = !d.AFirst && d.Rule != engine.Tie
	return d
}

// decision renders a comparison of this pod against other, from this pod's
// side: d.A is this pod's value.
func decision(this, other *engine.Pod, d engine.Decision) *prediction.Decision {
	out := &prediction.Decision{
		Rule:    d.Rule.ID(),
		Name:    d.Rule.Name(),
		How:     string(d.How),
		Against: other.Name,
		This:    d.A,
		Other:   d.B,
	}
	out.Text = explain(this.Name, other.Name, d)
	return out
}

// explain says in words why one pod goes before (or after) the other.
func explain(a, b string, d engine.Decision) string {
	first, second := a, b
	fv, sv := d.A, d.B
	if !d.AFirst {
		first, second, fv, sv = b, a, d.B, d.A
	}
	vs := fmt.Sprintf("%s %s vs %s %s", first, fv, second, sv)
	switch d.Rule {
	case engine.Unassigned:
		return "R1 unassigned pods go first: " + vs
	case engine.Phase:
		return "R2 earlier phase goes first (Pending < Unknown < Running): " + vs
	case engine.Readiness:
		return "R3 not-ready pods go first: " + vs
	case engine.DeletionCost:
		return "R4 lower pod-deletion-cost goes first: " + vs
	case engine.Colocation:
		return "R5 pods on more crowded nodes go first (related pods on the node): " + vs
	case engine.ReadyTime, engine.CreationTime:
		what := "ready"
		if d.Rule == engine.CreationTime {
			what = "created"
		}
		switch d.How {
		case engine.ByZero:
			return fmt.Sprintf("%s a missing %s time counts as newest: %s", d.Rule.ID(), what, vs)
		case engine.ByLinear:
			return fmt.Sprintf("%s more recently %s goes first (exact times): %s", d.Rule.ID(), what, vs)
		case engine.ByBucket:
			return fmt.Sprintf("%s more recently %s goes first (log2 age buckets): %s", d.Rule.ID(), what, vs)
		case engine.ByUID:
			return fmt.Sprintf("%s %s in the same log2 age bucket: lower UID goes first: %s", d.Rule.ID(), what, vs)
		}
	case engine.Restarts:
		if d.How == engine.BySidecar {
			return "R7 more sidecar restarts go first (regular restarts equal): " + vs
		}
		return "R7 more container restarts go first: " + vs
	case engine.Tie:
		return fmt.Sprintf("no rule separates %s and %s: a full tie, the unstable sort decides", a, b)
	}
	return vs
}

// summary is the one-line message of a prediction.
func summary(p *prediction.Prediction, deleting bool) string {
	switch {
	case deleting:
		return fmt.Sprintf("%s %s is being deleted: no pod would be deleted by a scale", p.Target.Kind, p.Target.Name)
	case p.DesiredReplicas > p.CurrentReplicas:
		return fmt.Sprintf("scale-up (%d -> %d): no pod would be deleted", p.CurrentReplicas, p.DesiredReplicas)
	case p.DesiredReplicas == p.CurrentReplicas && len(p.Victims) == 0:
		return fmt.Sprintf("no change (%d replicas): no pod would be deleted", p.CurrentReplicas)
	case len(p.Victims) == 0:
		return "no pod would be deleted"
	}
	names := p.Victims
	more := ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(" and %d more", len(p.Victims)-10)
	}
	s := fmt.Sprintf("%d pod(s) would be deleted: %s%s", len(p.Victims), strings.Join(names, ", "), more)
	if !p.Certain {
		s += " (most likely outcome; some fates are left to chance)"
	}
	return s
}

// Explain is the WHY text of one comparison in which a goes before b (a
// rollout's deletions are ranked by the same controller).
func Explain(a, b string, d engine.Decision) string { return explain(a, b, d) }

// EqualIgnoreHash is deploymentutil.EqualIgnoreHash: the templates are
// equal but for the pod-template-hash label (which ReplicaSet is new).
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool { return equalIgnoreHash(a, b) }
