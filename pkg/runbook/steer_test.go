package runbook

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/scale-preview/scale-preview/pkg/deployment"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// A request that does not fit the scale-in is a *RequestError that says
// what the candidates are.
func TestSteerRequestErrors(t *testing.T) {
	cases := []struct {
		req  Request
		want []string
	}{
		{Request{Target: []string{"zz"}}, []string{"pod zz: not among the candidates", "which are a, b, c, d, e"}},
		{Request{Spare: []string{"a", "yy"}, Target: []string{"zz", "yy"}}, []string{"pods yy, zz: not among"}},
		{Request{Spare: []string{"a", "b"}, Target: []string{"b"}}, []string{"--spare and --target both name b"}},
		{Request{TargetNode: "n9"}, []string{"--target-node n9: no candidate pod runs on that node; candidates run on n1, n2, n3"}},
	}
	for _, tc := range cases {
		s := fixture()
		p, o := predict(t, s, 3, rules.Default())
		st, err := Steer(s, ref, 3, o, p, tc.req)
		var re *RequestError
		if st != nil || !errors.As(err, &re) {
			t.Errorf("%+v: steering %+v, error %v; want a *RequestError", tc.req, st, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q, want %q", tc.req, err, w)
			}
		}
	}
}

// midRollout is a paused Deployment scaled 10 -> 5 mid-rollout: v1 (old) 8
// pods and v2 (new) 5, every pod ready on its own node, ready ages in
// distinct log2 buckets (p1 most recent). The split takes 4 from v1 and 2
// from v2; paused, the rollout does not continue, so no controller timing
// changes the answer (a running rollout's follow-up sync depends on how
// fresh the ReplicaSet statuses are, which no steering can fix).
func midRollout() *snapshot.Snapshot {
	surge, unavail := intstr.FromString("25%"), intstr.FromString("25%")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "dep", CreationTimestamp: metav1.NewTime(now.Add(-90 * 24 * time.Hour))},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(10)), Paused: true,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}},
			Template: podTemplate("web:2", "")},
		Status: appsv1.DeploymentStatus{Replicas: 13},
	}
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}}
	ages := []time.Duration{10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 5 * time.Hour, 12 * time.Hour, 24 * time.Hour}
	for _, v := range []struct {
		hash, image string
		n           int
		age         time.Duration
	}{{"v1", "web:1", 8, 10 * 24 * time.Hour}, {"v2", "web:2", 5, 24 * time.Hour}} {
		sel := map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: v.hash}
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web-" + v.hash, Namespace: "ns", UID: types.UID("uid-" + v.hash), Labels: sel,
				CreationTimestamp: metav1.NewTime(now.Add(-v.age)),
				Annotations:       map[string]string{deployment.DesiredReplicasAnnotation: "10", deployment.MaxReplicasAnnotation: "13"},
				OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(d, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})}},
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(v.n)), Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: podTemplate(v.image, v.hash)},
			Status: appsv1.ReplicaSetStatus{Replicas: int32(v.n), FullyLabeledReplicas: int32(v.n), ReadyReplicas: int32(v.n), AvailableReplicas: int32(v.n)},
		}
		s.ReplicaSets = append(s.ReplicaSets, rs)
		for i := 0; i < v.n; i++ {
			ready := now.Add(-ages[i])
			s.Pods = append(s.Pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-p%d", rs.Name, i+1), Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%s-%d", v.hash, i)),
					Labels: sel, CreationTimestamp: metav1.NewTime(ready.Add(-time.Minute)),
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"})}},
				Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("%s-n%d", v.hash, i+1)},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)}}},
			})
		}
	}
	return s
}

func podTemplate(image, hash string) corev1.PodTemplateSpec {
	l := map[string]string{"app": "web"}
	if hash != "" {
		l[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}}}
}

var depRef = snapshot.Ref{Kind: snapshot.Deployment, Namespace: "ns", Name: "web"}

func steerDeployment(t *testing.T, s *snapshot.Snapshot, req Request) (*prediction.Steering, *prediction.Prediction) {
	t.Helper()
	o := workload.Options{Rules: rules.Default(), Now: now, Seed: 1}
	base, err := workload.Predict(s, depRef, 5, o)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Steer(s, depRef, 5, o, base, req)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Possible {
		return st, nil
	}
	annot := map[string]int32{}
	for _, a := range st.Annotations {
		annot[a.Pod] = a.Cost
	}
	after, err := workload.Predict(annotated(s, annot), depRef, 5, o)
	if err != nil {
		t.Fatal(err)
	}
	return st, after
}

func sortedNames(names []string) []string { return slices.Sorted(slices.Values(names)) }

// Sparing a pod of the old ReplicaSet swaps it for another pod of the same
// ReplicaSet: the split stays as the Deployment fixes it.
func TestSteerDeploymentWithinShare(t *testing.T) {
	for _, tc := range []struct {
		req  Request
		want []string
	}{
		{Request{Spare: []string{"web-v1-p1"}}, []string{"web-v1-p2", "web-v1-p3", "web-v1-p4", "web-v1-p5", "web-v2-p1", "web-v2-p2"}},
		{Request{Spare: []string{"web-v2-p1"}, Target: []string{"web-v2-p5"}}, []string{"web-v1-p1", "web-v1-p2", "web-v1-p3", "web-v1-p4", "web-v2-p2", "web-v2-p5"}},
		{Request{TargetNode: "v2-n4"}, []string{"web-v1-p1", "web-v1-p2", "web-v1-p3", "web-v1-p4", "web-v2-p1", "web-v2-p4"}},
	} {
		st, after := steerDeployment(t, midRollout(), tc.req)
		if !st.Possible || !st.Verified {
			t.Errorf("%+v: not possible: %s", tc.req, st.Reason)
			continue
		}
		if got := sortedNames(st.Wanted); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: wanted %v, want %v", tc.req, got, tc.want)
		}
		if got := sortedNames(after.Victims); !slices.Equal(got, tc.want) || !after.Certain {
			t.Errorf("%+v: with the annotations the victims are %v (certain %v), want %v", tc.req, got, after.Certain, tc.want)
		}
	}
}

// Impossible only where the split itself forbids it; the reason is the
// same on every run.
func TestSteerDeploymentImpossibleIsDeterministic(t *testing.T) {
	req := Request{Spare: []string{"web-v1-p1", "web-v1-p2", "web-v1-p3", "web-v1-p4", "web-v1-p5"}, Target: []string{"web-v2-p3", "web-v2-p4", "web-v2-p5"}}
	first, _ := steerDeployment(t, midRollout(), req)
	if first.Possible || !strings.Contains(first.Reason, "web-v1") {
		t.Fatalf("possible %v, reason %q", first.Possible, first.Reason)
	}
	t.Log(first.Reason)
	for i := 0; i < 10; i++ {
		if st, _ := steerDeployment(t, midRollout(), req); st.Reason != first.Reason {
			t.Fatalf("reason changed between runs:\n%q\n%q", first.Reason, st.Reason)
		}
	}
}

// A target that rules 1-3 keep (a not-ready pod goes before it) is
// impossible, and the reason names the rule.
func TestSteerTargetKeptByEarlierRule(t *testing.T) {
	s := fixture()
	s.Pods[2].Status.Conditions[0].Status = corev1.ConditionFalse // c not ready: R3 puts it first
	st := steer(t, s, 4, rules.Default(), Request{Target: []string{"e"}})
	if st.Possible || !strings.Contains(st.Reason, "e is a target but the scale-in deletes only 1 pod") || !strings.Contains(st.Reason, "c goes before it by R3 readiness") {
		t.Fatalf("possible %v, reason %q", st.Possible, st.Reason)
	}
}
