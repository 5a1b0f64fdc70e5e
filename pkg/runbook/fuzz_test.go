package runbook

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// fuzzSnapshot is a standalone ReplicaSet "web" in "ns" with pods p0..p7
// on nodes n0..n2; ages and costs repeat so that ties are common.
func fuzzSnapshot() *snapshot.Snapshot {
	yes := true
	sel := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rs"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}}
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 8; i++ {
		ready := base.Add(-time.Duration(1+i%3) * time.Hour)
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p" + string(rune('0'+i)), Namespace: "ns", UID: types.UID("u" + string(rune('0'+i))), Labels: sel,
				CreationTimestamp: metav1.NewTime(ready.Add(-time.Minute)),
				OwnerReferences:   []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "rs", Controller: &yes}}},
			Spec: corev1.PodSpec{NodeName: "n" + string(rune('0'+i%3))},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)}}},
		}
		if i%4 == 1 {
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "10"}
		}
		s.Pods = append(s.Pods, p)
	}
	return s
}

// FuzzSteer: any request gets a verified answer or a reason, never a panic.
// The request is "spare,spare;target,target;node;replicas".
func FuzzSteer(f *testing.F) {
	f.Add("p0;;;5")
	f.Add(";p1,p2;;6")
	f.Add(";;n1;4")
	f.Add("p3;p3;;2")
	f.Add("nope;;nope;0")
	f.Add("p0,p1,p2,p3,p4,p5,p6;;;1")
	f.Fuzz(func(t *testing.T, req string) {
		parts := strings.SplitN(req, ";", 4)
		for len(parts) < 4 {
			parts = append(parts, "")
		}
		list := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		replicas := int32(0)
		for _, c := range parts[3] {
			if c >= '0' && c <= '9' && replicas < 100 {
				replicas = replicas*10 + int32(c-'0')
			}
		}
		r := Request{Spare: list(parts[0]), Target: list(parts[1]), TargetNode: parts[2]}
		if r.Empty() {
			return
		}
		s := fuzzSnapshot()
		ref := snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: "ns", Name: "web"}
		o := workload.Options{Rules: rules.Default(), Now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), Seed: 1}
		p, err := workload.Predict(s, ref, replicas, o)
		if err != nil {
			t.Fatal(err)
		}
		st, err := steerAny(s, ref, replicas, o, p, r)
		if err != nil {
			// A request the command refuses (exit 2) must say why.
			if err.Error() == "" {
				t.Fatal("refused without a reason")
			}
			return
		}
		if st == nil {
			t.Fatal("no steering answer")
		}
		if !st.Verified && st.Reason == "" {
			t.Fatalf("neither verified nor a reason: %+v", st)
		}
		if st.Verified && !st.Possible {
			t.Fatalf("verified but not possible: %+v", st)
		}
		if len(st.Commands) != len(st.Annotations) {
			t.Fatalf("%d commands for %d annotations", len(st.Commands), len(st.Annotations))
		}
	})
}

// steerAny calls Steer whether it refuses a bad request with an error (the
// steering validation) or answers every request with a reason; the fuzz
// target holds for both until the branches meet.
func steerAny(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o workload.Options, p *prediction.Prediction, r Request) (*prediction.Steering, error) {
	switch f := any(Steer).(type) {
	case func(*snapshot.Snapshot, snapshot.Ref, int32, workload.Options, *prediction.Prediction, Request) (*prediction.Steering, error):
		return f(s, ref, replicas, o, p, r)
	case func(*snapshot.Snapshot, snapshot.Ref, int32, workload.Options, *prediction.Prediction, Request) *prediction.Steering:
		return f(s, ref, replicas, o, p, r), nil
	}
	panic("unexpected Steer signature")
}
