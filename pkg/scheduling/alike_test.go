package scheduling

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Alike gives exactly View.Place's answer (and its likeliest node) for
// alike pods placed one after another while pods land, leave and are
// nominated, over random clusters and rule sets: its kept verdicts never
// go stale.
func TestAlikeEqualsPlace(t *testing.T) {
	ruleSets := []rules.SchedulerRules{rules.Scheduler(rules.Newest, nil), rules.Scheduler(23, nil)}
	placed, kept := 0, 0
	for seed := range uint64(300) {
		rc := newRandCluster(seed)
		r := rand.New(rand.NewPCG(seed, 36))
		var ns []*corev1.Namespace
		if seed%2 == 0 {
			ns = rc.ns
		}
		view, err := NewView(rc.nodes, rc.pods, ns, ruleSets[int(seed)%len(ruleSets)])
		if err != nil {
			t.Fatal(err)
		}
		alike := NewAlike(view)
		templates := []*corev1.Pod{rc.pod(false), rc.pod(false), rc.pod(false)}
		var bound []*corev1.Pod
		for step := range 30 {
			k := r.IntN(len(templates))
			pod := *templates[k]
			pod.Name = fmt.Sprintf("%s-%d", pod.Name, step)
			if r.IntN(8) == 0 { // an owner's pods of another priority
				prio := int32(r.IntN(3) * 100)
				pod.Spec.Priority = &prio
			}
			want, wantErr := view.Place(&pod)
			got, node, gotErr := alike.Place(&pod, fmt.Sprint(k))
			likeliest := want.Likeliest()
			want.LeastAllocated = nil
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) || !reflect.DeepEqual(want, got) || node != likeliest {
				t.Fatalf("seed %d step %d: alike %+v %q %v, place %+v %v", seed, step, got, node, gotErr, want, wantErr)
			}
			if wantErr != nil {
				continue
			}
			if len(want.Feasible) > 0 {
				b := pod
				b.Spec.NodeName, b.Status.Phase = want.Feasible[r.IntN(len(want.Feasible))], corev1.PodRunning
				if r.IntN(2) == 0 {
					b.Spec.NodeName = node
				}
				if err := view.Add(&b); err != nil {
					t.Fatal(err)
				}
				bound, placed = append(bound, &b), placed+1
			}
			switch r.IntN(5) {
			case 0: // a pod leaves
				if len(bound) > 0 {
					i := r.IntN(len(bound))
					view.Remove(bound[i])
					bound = slices.Delete(bound, i, i+1)
				}
			case 1: // another lands or is nominated, with terms of its own
				p := rc.pod(true)
				if err := view.Add(p); err != nil {
					t.Fatal(err)
				}
				bound = append(bound, p)
			case 2: // a pod of the highest priority is nominated
				p := rc.pod(false)
				prio := int32(200)
				p.Spec.Priority, p.Status.NominatedNodeName = &prio, rc.nodes[r.IntN(len(rc.nodes))].Name
				if err := view.Add(p); err != nil {
					t.Fatal(err)
				}
				bound = append(bound, p)
			default:
				kept++
			}
		}
	}
	if placed < 1000 || kept < 1000 {
		t.Fatalf("only %d pods placed, %d placements on a view unchanged but for them", placed, kept)
	}
}
