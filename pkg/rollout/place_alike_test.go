package rollout

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// placeAlike gives each new pod what the filters give it: on roomy nodes
// (several pass), on nodes that fill up (one passes, the pod is bound and
// the view changes) and on full ones (none passes).
func TestPlaceAlikeIsPlace(t *testing.T) {
	for _, cpu := range []string{"64", "2", "1"} {
		t.Run(cpu+" CPUs", func(t *testing.T) {
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
			for i := range 6 {
				m := s.createPod("web-2")
				want, err := s.view.Place(m.pod.DeepCopy())
				if err != nil {
					t.Fatal(err)
				}
				s.placeAlike(m)
				got := m.candidates
				if m.pod.Spec.NodeName != "" {
					got = []string{m.pod.Spec.NodeName}
				}
				if !slices.Equal(got, want.Feasible) || (len(want.Feasible) == 0) != (m.fitError != "") {
					t.Fatalf("pod %d: got %v %q, the filters say %v", i, got, m.fitError, want.Feasible)
				}
			}
		})
	}
}
