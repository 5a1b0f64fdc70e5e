package scheduling

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

var ownerSel = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

func owned(p *corev1.Pod) *corev1.Pod {
	p.Labels = map[string]string{"app": "web"}
	t := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "web", Controller: &t}}
	return p
}

func choose(t *testing.T, minor int, nodes []*corev1.Node, pods []*corev1.Pod, p *corev1.Pod, sel *metav1.LabelSelector) Choice {
	t.Helper()
	v, err := NewView(nodes, pods, nil, rules.Scheduler(minor, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, ch, err := v.Choose(p, ScoreInput{OwnerSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// Alike nodes tie: since 1.35 the heap's evaluation order picks (no
// chance), before selectHost picked uniformly. A used node loses to a
// free one; a replica already on a node pushes the next one away
// (default spreading); an untolerated PreferNoSchedule taint loses.
func TestChoose(t *testing.T) {
	nodes := []*corev1.Node{node("a", "4", false), node("b", "4", false)}
	p := owned(pod("new", "", "500m"))
	if ch := choose(t, rules.Newest, nodes, nil, p, ownerSel); ch.Node != "" || len(ch.Top) != 2 || ch.Chance != 0 {
		t.Errorf("1.37 tie: %+v", ch)
	}
	if ch := choose(t, 34, nodes, nil, p, ownerSel); ch.Node != "" || len(ch.Top) != 2 || ch.Chance != 0.5 {
		t.Errorf("1.34 tie: %+v", ch)
	}
	busy := pod("other", "a", "2")
	if ch := choose(t, rules.Newest, nodes, []*corev1.Pod{busy}, p, ownerSel); !ch.Determined() || ch.Node != "b" {
		t.Errorf("a used node: %+v", ch)
	}
	for _, n := range nodes {
		n.Labels = map[string]string{corev1.LabelHostname: n.Name}
	}
	replica := owned(pod("web-1", "b", "0"))
	if ch := choose(t, rules.Newest, nodes, []*corev1.Pod{replica}, p, ownerSel); ch.Node != "a" {
		t.Errorf("spreading: %+v", ch)
	}
	tainted := []*corev1.Node{node("a", "4", false), node("b", "4", false)}
	tainted[0].Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}}
	if ch := choose(t, rules.Newest, tainted, nil, p, ownerSel); ch.Node != "b" {
		t.Errorf("PreferNoSchedule: %+v", ch)
	}
}

// What the plugin cannot see leaves the choice open: the default
// spreading of a pod without a controller depends on Services, of one
// whose controller's selector was not read on that selector; above
// numFeasibleNodesToFind the scheduler scores a subset.
func TestChooseUndetermined(t *testing.T) {
	nodes := []*corev1.Node{node("a", "4", false), node("b", "4", false)}
	busy := pod("other", "a", "2")
	if ch := choose(t, rules.Newest, nodes, []*corev1.Pod{busy}, pod("new", "", "500m"), nil); ch.Determined() || len(ch.Unmodelled) == 0 {
		t.Errorf("no controller: %+v", ch)
	}
	if ch := choose(t, rules.Newest, nodes, []*corev1.Pod{busy}, owned(pod("new", "", "500m")), nil); ch.Determined() || len(ch.Unmodelled) == 0 {
		t.Errorf("no selector: %+v", ch)
	}
	var many []*corev1.Node
	for i := range 150 {
		many = append(many, node(fmt.Sprintf("n%03d", i), "4", false))
	}
	if ch := choose(t, rules.Newest, many, nil, owned(pod("new", "", "500m")), ownerSel); !ch.Sampled || len(ch.Top) != 150 || ch.Node != "" {
		t.Errorf("150 nodes: Sampled %v, %d nodes, node %q", ch.Sampled, len(ch.Top), ch.Node)
	}
}

// numFeasibleNodesToFind with the adaptive percentage.
func TestNumFeasibleNodesToFind(t *testing.T) {
	for _, c := range [][2]int{{50, 50}, {100, 100}, {199, 100}, {1000, 420}, {5000, 500}, {20000, 1000}} {
		if got := numFeasibleNodesToFind(c[0]); got != c[1] {
			t.Errorf("%d nodes: %d, want %d", c[0], got, c[1])
		}
	}
}

// BenchmarkChooseLargeCluster scores one new pod on issue 34's cluster
// (5,000 nodes, 150,000 pods): "choose" is the whole call (more than
// numFeasibleNodesToFind nodes fit, so the scheduler samples and nothing
// is scored); "score" is the Score phase over the 500 nodes the scheduler
// scores at most on 5,000 nodes.
func BenchmarkChooseLargeCluster(b *testing.B) {
	in := largeCluster()
	p := in.Pods[0].DeepCopy()
	p.Name, p.UID, p.Spec.NodeName = "new", "new", ""
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"], "pod-template-hash": p.Labels["pod-template-hash"]}}
	v, err := NewView(in.Nodes, in.Pods, nil, in.Rules)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("choose", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := v.Choose(p, ScoreInput{OwnerSelector: sel}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("score", func(b *testing.B) {
		c, err := v.cluster(p)
		if err != nil {
			b.Fatal(err)
		}
		v.staticFilters(p, c, "")
		pl := c.place()
		pl.Feasible = slices.Clone(pl.Feasible[:min(len(pl.Feasible), numFeasibleNodesToFind(len(c.Nodes)))])
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if ch := c.Choose(pl, ScoreInput{OwnerSelector: sel}); len(ch.Top) == 0 {
				b.Fatal("no top node")
			}
		}
	})
}

// The default profile's weights changed in 1.23 (config v1beta3): a
// preferred node (NodeAffinity) under an untolerated PreferNoSchedule
// taint (TaintToleration) against a busier plain node: the taint's
// weight 3 against the affinity's 2 sends the pod to the busy node in
// 1.37; at 1 each, the free node's LeastAllocated decides in 1.22.
func TestChooseWeightsByVersion(t *testing.T) {
	a, b := node("a", "4", false), node("b", "4", false)
	a.Labels = map[string]string{corev1.LabelHostname: "a", "disk": "ssd"}
	b.Labels = map[string]string{corev1.LabelHostname: "b"}
	a.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}}
	busy := pod("busy", "b", "3500m")
	p := owned(pod("new", "", "250m"))
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
		Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}}}
	for minor, want := range map[int]string{rules.Newest: "b", 22: "a"} {
		if ch := choose(t, minor, []*corev1.Node{a, b}, []*corev1.Pod{busy}, p, ownerSel); ch.Node != want {
			t.Errorf("1.%d: %+v, want %s", minor, ch, want)
		}
	}
}
