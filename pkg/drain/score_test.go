package drain

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Where the scheduler's scores decide among several feasible nodes, the
// replacement is bound there and certain: the least allocated node wins
// (NodeResourcesFit's LeastAllocated; the default spreading counts the
// ReplicaSet's pods, none elsewhere). Without the ReplicaSet's selector the
// spreading is unknown and the choice stays open.
func TestScoresDecideReplacementNode(t *testing.T) {
	for _, withSelector := range []bool{true, false} {
		w := newWorld(node("node-1", "8"), node("node-2", "8"), node("node-3", "8"))
		w.pod("filler-2", "node-2", w.rs("filler", 1, "4"), "ReplicaSet", true)
		a := w.rs("a", 1, "1")
		if withSelector {
			a.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
		}
		w.pod("a-0", "node-1", a, "ReplicaSet", true)
		r := w.predict("node-1")
		rep := r.Replacements[0]
		if withSelector && (rep.Node != "node-3" || !rep.Certain || !r.Certain) {
			t.Errorf("with the selector: %+v (certain %v)", rep, r.Certain)
		}
		if !withSelector && rep.Certain {
			t.Errorf("without the selector: %+v", rep)
		}
	}
}

// Two replacements reach the scheduler in an order kubectl's parallel
// evictions leave to timing; the first one's binding moves the second's
// best score (b alone goes to node-2, after a to node-3): a race, each
// order as likely, so b's node is node-2 or node-3 at 50% each.
func TestScoresRace(t *testing.T) {
	w := newWorld(node("node-1", "8"), node("node-2", "8"), node("node-3", "8"))
	w.pod("filler-2", "node-2", w.rs("filler2", 1, "2"), "ReplicaSet", true)
	w.pod("filler-3", "node-3", w.rs("filler3", 1, "3"), "ReplicaSet", true)
	for _, o := range []struct{ name, cpu string }{{"a", "2"}, {"b", "1"}} {
		rs := w.rs(o.name, 1, o.cpu)
		rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": o.name}}
		w.pod(o.name+"-0", "node-1", rs, "ReplicaSet", true)
	}
	r := w.predict("node-1")
	for _, rep := range r.Replacements {
		if rep.For == "default/b-0" && (rep.Certain || len(rep.Placements) != 2) {
			t.Errorf("b's replacement: %+v (in one order node-2, in the other node-3)", rep)
		}
	}
}
