package drain

import (
	"slices"
	"strings"
	"testing"
)

// The walk-through of https://kubernetes.io/docs/concepts/workloads/pods/disruptions/
// ("How Disruption Budgets work"): web has 3 replicas under a PDB with
// minAvailable 2; pod-x has no budget. Each node has room for 2 pods.
func docsWorld(t *testing.T) (*world, func(name, node string, ready bool)) {
	t.Helper()
	w := newWorld(node("node-1", "2"), node("node-2", "2"), node("node-3", "2"))
	web := w.rs("web", 3, "1")
	x := w.rs("x", 1, "1")
	add := func(name, nodeName string, ready bool) {
		owner := web
		if name == "pod-x" || name == "pod-y" {
			owner = x
		}
		w.pod(name, nodeName, owner, "ReplicaSet", ready)
	}
	return w, add
}

// docsStart is the walk-through's first state: pod-a and pod-x on node-1,
// pod-b on node-2, pod-c on node-3 (examples/disruptions.yaml).
func docsStart(t *testing.T) *world {
	w, add := docsWorld(t)
	add("pod-a", "node-1", true)
	add("pod-x", "node-1", true)
	add("pod-b", "node-2", true)
	add("pod-c", "node-3", true)
	w.pdb("web", intOr(2), nil)
	return w
}

func TestDocsWalkthroughNode1(t *testing.T) {
	w := docsStart(t)
	r := w.predict("node-1")
	n := r.Nodes[0]
	if n.Outcome != OutcomeDrained || !slices.Equal(n.Evicted, []string{"default/pod-a", "default/pod-x"}) || !r.Certain {
		t.Fatalf("node-1: %+v certain=%v %v", n, r.Certain, r.Uncertain)
	}
	for _, p := range n.Pods {
		if p.Action != ActionEvicted {
			t.Errorf("%s: %s, want evicted at once", p.Pod, p.Action)
		}
	}
	// pod-d and pod-y race for node-2 and node-3: whichever the scheduler
	// gets first takes one (a tie), the other the other node. Each lands
	// on either, with even chances, in every order.
	if len(r.Replacements) != 2 {
		t.Fatalf("replacements: %+v", r.Replacements)
	}
	for _, rep := range r.Replacements {
		if rep.Certain || !slices.Equal(rep.Candidates, []string{"node-2", "node-3"}) || len(rep.Placements) != 2 ||
			rep.Placements[0].P != 0.5 || rep.Placements[1].P != 0.5 || rep.Node != rep.Placements[0].Value {
			t.Errorf("replacement of %s: node %q, candidates %v, placements %+v", rep.For, rep.Node, rep.Candidates, rep.Placements)
		}
	}
}

// Draining node-1 and node-2 in one command cordons both first: pod-d and
// pod-y race for the one free place, on node-3. When pod-d wins, node-2
// drains after pod-d is Ready (pod-e then fits nowhere); when pod-y wins,
// pod-d fits nowhere and pod-b blocks: each branch half the time.
func TestDocsWalkthroughNode1Node2(t *testing.T) {
	w := docsStart(t)
	r := w.predict("node-1", "node-2")
	if n1 := r.Nodes[0]; n1.Outcome != OutcomeDrained || !n1.Certain || n1.Outcomes != nil {
		t.Errorf("node-1: %+v", n1)
	}
	n2 := r.Nodes[1]
	want := []Chance{{Value: OutcomeDrained, P: 0.5}, {Value: OutcomeBlocked, P: 0.5}}
	if n2.Outcome != OutcomeDrained || n2.Certain || r.Certain || len(n2.Outcomes) != 2 ||
		n2.Outcomes[0].Value != want[0].Value || n2.Outcomes[0].P != 0.5 || n2.Outcomes[1].Value != want[1].Value || n2.Outcomes[1].P != 0.5 {
		t.Fatalf("node-2: %+v", n2)
	}
	if why := n2.Outcomes[1].Reason; !strings.Contains(why, "never leave: default/pod-b") || !strings.Contains(why, "unblock: the replacement of default/pod-a fits on no node") {
		t.Errorf("blocked branch: %q", why)
	}
	got := map[string][]Chance{}
	for _, rep := range r.Replacements {
		got[rep.For] = rep.Placements
	}
	for pod, want := range map[string][]Chance{
		"default/pod-a": {{Value: "node-3", P: 0.5}, {Value: "", P: 0.5}},
		"default/pod-x": {{Value: "", P: 0.5}, {Value: "node-3", P: 0.5}},
		"default/pod-b": {{Value: "", P: 0.5}}, // created only when node-2 drains
	} {
		if !slices.EqualFunc(got[pod], want, func(a, b Chance) bool { return a.Value == b.Value && a.P == b.P }) {
			t.Errorf("replacement of %s: %+v, want %+v", pod, got[pod], want)
		}
	}
	if !slices.Equal(r.Victims, []string{"default/pod-a", "default/pod-x", "default/pod-b"}) || r.Unweighed {
		t.Errorf("victims %v (the likeliest branch's), unweighed %v", r.Victims, r.Unweighed)
	}
}

// An impatient drain of node-3 while pod-d is still starting waits on the
// PDB until pod-d is Ready; pod-y goes at once.
func TestDocsWalkthroughImpatient(t *testing.T) {
	w, add := docsWorld(t)
	w.in.Nodes[0] = cordoned(w.in.Nodes[0])
	add("pod-b", "node-2", true)
	add("pod-d", "node-2", false)
	add("pod-c", "node-3", true)
	add("pod-y", "node-3", true)
	w.pdb("web", intOr(2), nil)
	r := w.predict("node-3")
	n := r.Nodes[0]
	if n.Outcome != OutcomeDrained || !r.Certain {
		t.Fatalf("node-3: %+v %v", n, r.Uncertain)
	}
	c := n.Pods[0]
	if c.Pod != "default/pod-c" || c.Action != ActionEvictedAfterWait || !strings.Contains(c.Why, "minAvailable 2, healthy 2 -> 0 disruptions allowed until default/pod-d is Ready") {
		t.Errorf("pod-c: %+v", c)
	}
	if y := n.Pods[1]; y.Action != ActionEvicted {
		t.Errorf("pod-y: %+v", y)
	}
}

// Once pod-d is Ready, draining node-2 evicts pod-b; pod-e (its
// replacement) fits nowhere, so pod-d blocks until a node is added. The
// docs say "in some order, say pod-b first": kubectl sends both evictions
// at once, so which of the two stays is a race, and the answer says so.
func TestDocsWalkthroughNode2(t *testing.T) {
	w, add := docsWorld(t)
	w.in.Nodes[0] = cordoned(w.in.Nodes[0])
	add("pod-b", "node-2", true)
	add("pod-d", "node-2", true)
	add("pod-c", "node-3", true)
	add("pod-y", "node-3", true)
	w.pdb("web", intOr(2), nil)
	w.in.Options.Timeout = 60e9
	r := w.predict("node-2")
	n := r.Nodes[0]
	if n.Outcome != OutcomeBlocked || !slices.Equal(n.Evicted, []string{"default/pod-b"}) || !slices.Equal(n.Remaining, []string{"default/pod-d"}) || r.Certain || n.Certain {
		t.Fatalf("node-2: %+v %v", n, r.Uncertain)
	}
	d := n.Pods[1]
	if !strings.Contains(d.Why, "PDB web: minAvailable 2, healthy 2 -> 0 disruptions allowed; unblock: the replacement of default/pod-b fits on no node (0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.): the drain blocks until capacity is added") {
		t.Errorf("pod-d: %+v", d)
	}
	if len(r.Replacements) != 1 || r.Replacements[0].Node != "" || r.Replacements[0].For != "default/pod-b" {
		t.Errorf("replacements: %+v", r.Replacements)
	}
}

// The docs' impatient drain of node-2 itself, while pod-d starts there: the
// Eviction API lets the unready pod-d go at once (IfHealthyBudget: the
// budget is healthy, 2 >= 2), and pod-b waits on the budget; pod-d's
// replacement fits nowhere (node-1 is still cordoned, node-3 is full), so
// pod-b blocks until capacity is added. The docs only say "the drain
// command will block"; the source also evicts pod-d first.
func TestDocsWalkthroughImpatientNode2(t *testing.T) {
	w, add := docsWorld(t)
	w.in.Nodes[0] = cordoned(w.in.Nodes[0])
	add("pod-b", "node-2", true)
	add("pod-d", "node-2", false)
	add("pod-c", "node-3", true)
	add("pod-y", "node-3", true)
	w.pdb("web", intOr(2), nil)
	w.in.Options.Timeout = 60e9
	r := w.predict("node-2")
	n := r.Nodes[0]
	if n.Outcome != OutcomeBlocked || !slices.Equal(n.Evicted, []string{"default/pod-d"}) || !slices.Equal(n.Remaining, []string{"default/pod-b"}) || !r.Certain {
		t.Fatalf("node-2: %+v %v", n, r.Uncertain)
	}
	if d := n.Pods[1]; !strings.Contains(d.Why, "not Ready, and the budget is healthy (2 >= 2)") {
		t.Errorf("pod-d: %+v", d)
	}
	if b := n.Pods[0]; !strings.Contains(b.Why, "the replacement of default/pod-d fits on no node") {
		t.Errorf("pod-b: %+v", b)
	}
}
