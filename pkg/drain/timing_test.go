package drain

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// job adds a Job and its running pod on node.
func (w *world) job(name, nodeName, cpu string) {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: batchv1.JobSpec{Template: podTemplate(name, cpu)}}
	w.in.Workloads.Jobs = append(w.in.Workloads.Jobs, j)
	p := w.pod(name+"-x", nodeName, j, "Job", true)
	p.OwnerReferences[0].APIVersion = "batch/v1"
	p.Labels, p.Spec.Containers = j.Spec.Template.Labels, j.Spec.Template.Spec.Containers
}

func replacementFor(t *testing.T, r *Result, pod string) Replacement {
	t.Helper()
	for _, x := range r.Replacements {
		if x.For == "default/"+pod {
			return x
		}
	}
	t.Fatalf("no replacement for %s in %+v", pod, r.Replacements)
	return Replacement{}
}

// The Job controller creates its replacement after a back-off, so the
// ReplicaSet's replacement of the same round takes the only room, though
// kubectl lists the Job's pod first.
func TestJobReplacementComesAfterItsBackOff(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "1"))
	w.in.Options.Force = true
	w.job("batch", "n1", "1")
	w.pod("web-a", "n1", w.rs("web", 1, "1"), "ReplicaSet", true)
	r := w.predict("n1")
	web, batch := replacementFor(t, r, "web-a"), replacementFor(t, r, "batch-x")
	if web.Node != "n2" || !web.Certain || batch.Node != "" || !batch.Certain || !r.Certain {
		t.Fatalf("web %+v, batch %+v, certain %v %v", web, batch, r.Certain, r.Uncertain)
	}
}

// The Job's pod leaves the first node and the ReplicaSet's the second:
// whether the back-off ends before the second node's replacement is
// created is timing, so neither placement is certain.
func TestJobBackOffAcrossNodesIsUncertain(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"), node("n3", "1"))
	w.in.Options.Force = true
	w.job("batch", "n1", "1")
	w.pod("web-a", "n2", w.rs("web", 1, "1"), "ReplicaSet", true)
	r := w.predict("n1", "n2")
	web, batch := replacementFor(t, r, "web-a"), replacementFor(t, r, "batch-x")
	if r.Certain || web.Certain || batch.Certain {
		t.Fatalf("web %+v, batch %+v, certain %v", web, batch, r.Certain)
	}
}

// kubectl deletes a node's pods in parallel: replacements that compete for
// room are uncertain; with room for all they are certain.
func TestParallelDeletionsRace(t *testing.T) {
	for _, tc := range []struct {
		room    string
		certain bool
	}{{"2", false}, {"3", true}} {
		w := newWorld(node("n1", "4"), node("n2", tc.room))
		w.in.Options.DisableEviction = true
		for _, name := range []string{"a", "b", "c"} {
			w.pod(name+"-x", "n1", w.rs(name, 1, "1"), "ReplicaSet", true)
		}
		r := w.predict("n1")
		if r.Certain != tc.certain {
			t.Errorf("room %s: certain %v, want %v (%+v)", tc.room, r.Certain, tc.certain, r.Replacements)
		}
		for _, x := range r.Replacements {
			if x.Certain != tc.certain {
				t.Errorf("room %s: %+v certain, want %v", tc.room, x, tc.certain)
			}
		}
	}
}

// b's replacement fits only on the node a's left empty: one feasible node
// in every run, but which one differs, so it is not certain on a node.
func TestReplacementNodeComparedAcrossRuns(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "2"), node("n3", "2"))
	w.pod("a-x", "n1", w.rs("a", 1, "1"), "ReplicaSet", true)
	w.pod("b-x", "n1", w.rs("b", 1, "2"), "ReplicaSet", true)
	r := w.predict("n1")
	if b := replacementFor(t, r, "b-x"); b.Node == "" || b.Certain {
		t.Fatalf("b: %+v", b)
	}
	if !r.Certain {
		t.Fatalf("both are placed in every run, yet uncertain: %v", r.Uncertain)
	}
}

// A pod that becomes Ready replaces its Ready=False condition; a drain
// without --timeout that blocks on a budget returns.
func TestUnreadyPodsUnderFullBudgetEnd(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	web := w.rs("web", 4, "100m")
	for _, name := range []string{"web-a", "web-b"} {
		p := w.pod(name, "n1", web, "ReplicaSet", false)
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	}
	w.pod("web-c", "n2", web, "ReplicaSet", true)
	w.pod("web-d", "n2", web, "ReplicaSet", true)
	w.pdb("web", intOr(4), nil)
	done := make(chan *Result, 1)
	go func() { done <- w.predict("n1") }()
	select {
	case r := <-done:
		if n := onlyNode(t, r); n.Outcome != OutcomeBlocked || len(n.Remaining) != 2 || len(n.Evicted) != 0 {
			t.Fatalf("%+v", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the drain never returned")
	}
	p := withReady(w.in.Pods[0])
	if len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Fatalf("conditions %+v", p.Status.Conditions)
	}
}

// A lone pod that is starting may or may not become Ready while kubectl
// retries an earlier node: under an AlwaysAllow budget that decides
// whether it is evicted, so the later node is uncertain.
func TestStartingPodReadinessIsUncertain(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"), node("n3", "4"))
	web1 := w.rs("web1", 2, "100m")
	w.pod("web1-a", "n1", web1, "ReplicaSet", true)
	w.pod("web1-b", "n2", web1, "ReplicaSet", true)
	w.pdb("web1", intOr(2), nil)
	p := w.pod("web0-a", "n3", w.rs("web0", 1, "100m"), "ReplicaSet", false)
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	b := w.pdb("web0", nil, intOr(0))
	always := policyv1.AlwaysAllow
	b.Spec.UnhealthyPodEvictionPolicy = &always
	w.in.Options.Timeout = 18 * time.Second
	r := w.predict("n1", "n3")
	if r.Certain || r.Nodes[1].Certain || !r.Nodes[0].Certain || r.Nodes[0].Outcome != OutcomeBlocked {
		t.Fatalf("certain %v, nodes %+v", r.Certain, r.Nodes)
	}
}
