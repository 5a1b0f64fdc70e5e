package rollout

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// placeAlike gives each new pod what placing it afresh gives it: on
// roomy nodes (several pass, the scores pick or tie), on nodes that fill up
// (one passes, the pod is bound and the view changes) and on full ones
// (none passes).
func TestPlaceAlikeIsPlace(t *testing.T) {
	for _, cpu := range []string{"64", "2", "1"} {
		t.Run(cpu+" CPUs", func(t *testing.T) {
			alike, fresh := alikeSim(t, cpu), alikeSim(t, cpu)
			for i := range 6 {
				a, f := alike.createPod("web-2"), fresh.createPod("web-2")
				alike.placeAlike(a)
				fresh.place(f)
				if a.pod.Spec.NodeName != f.pod.Spec.NodeName || !slices.Equal(a.candidates, f.candidates) || a.fitError != f.fitError {
					t.Fatalf("pod %d: alike %q %v %q, afresh %q %v %q", i, a.pod.Spec.NodeName, a.candidates, a.fitError,
						f.pod.Spec.NodeName, f.candidates, f.fitError)
				}
			}
		})
	}
}

func alikeSim(t *testing.T, cpu string) *sim {
	t.Helper()
	nodes := []*corev1.Node{node("n1", cpu), node("n2", cpu), node("n3", "3")}
	in := fixture(3, "2", "0", nodes...)
	view, err := scheduling.NewView(in.Nodes, in.Pods, in.Namespaces, in.Scheduler)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSim(in, &in.Deployment.Spec.Template, false, view)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
