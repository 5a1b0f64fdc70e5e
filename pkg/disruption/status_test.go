package disruption

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func budget(minA, maxU *intstr.IntOrString) *Budget {
	return Parse([]*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minA, MaxUnavailable: maxU, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}})[0]
}

func pods(owner *metav1.OwnerReference, ready, unready int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range ready + unready {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: string(rune('a' + i)), Labels: map[string]string{"app": "web"}}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		if i < ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		out = append(out, p)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func intOr(i int) *intstr.IntOrString  { v := intstr.FromInt32(int32(i)); return &v }
func pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

// Hand-made cases of the disruption controller's arithmetic
// (getExpectedPodCount, countHealthyPods, updatePdbStatus).
func TestCompute(t *testing.T) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d"}, Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(5))}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "r",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d", Controller: ptr(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(4))}}
	rs2 := rs.DeepCopy()
	rs2.Name, rs2.UID = "web-2", "r2"
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "j"}}
	owners := NewOwners(Workloads{Deployments: []*appsv1.Deployment{dep}, ReplicaSets: []*appsv1.ReplicaSet{rs, rs2}, Jobs: []*batchv1.Job{job}})
	rs2Ref := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-2", UID: "r2", Controller: ptr(true)}
	rsRef := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "r", Controller: ptr(true)}
	jobRef := &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "j", Controller: ptr(true)}
	goneRef := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "gone", UID: "g", Controller: ptr(true)}
	cases := []struct {
		name                              string
		b                                 *Budget
		pods                              []*corev1.Pod
		expected, desired, healthy, allow int32
		syncFailed, unknown               bool
	}{
		// minAvailable as an integer counts the selected pods, not the scale.
		{"minAvailable int", budget(intOr(2), nil), pods(rsRef, 3, 1), 4, 2, 3, 1, false, false},
		// A percentage is of the Deployment's replicas (5), rounded up: 50% -> 3.
		{"minAvailable percent rounds up", budget(pct("50%"), nil), pods(rsRef, 3, 0), 5, 3, 3, 0, false, false},
		// maxUnavailable 30% of 5 rounds up to 2: desired 3.
		{"maxUnavailable percent", budget(nil, pct("30%")), pods(rsRef, 4, 0), 5, 3, 4, 1, false, false},
		{"maxUnavailable int", budget(nil, intOr(1)), pods(rsRef, 5, 0), 5, 4, 5, 1, false, false},
		// Mid-rollout: the pods of two ReplicaSets count their Deployment
		// once (getExpectedScale keys the scale by the Deployment's UID):
		// 25% of 5 rounds up to 2, desired 3.
		{"maxUnavailable percent, two ReplicaSets", budget(nil, pct("25%")), append(pods(rsRef, 5, 0), pods(rs2Ref, 0, 3)...), 5, 3, 5, 2, false, false},
		// desired never goes below 0.
		{"maxUnavailable above scale", budget(nil, intOr(9)), pods(rsRef, 1, 0), 5, 0, 1, 1, false, false},
		// No pods: expected 0 allows nothing.
		{"no pods", budget(intOr(0), nil), nil, 0, 0, 0, 0, false, false},
		// Unmanaged pods are skipped by getExpectedScale.
		{"bare pods, percent", budget(pct("50%"), nil), pods(nil, 2, 0), 0, 0, 2, 0, false, false},
		// A Job has no scale: the controller fails to sync, for certain.
		{"job owner", budget(nil, intOr(1)), pods(jobRef, 2, 0), 0, 0, 0, 0, true, false},
		// An owner missing from the input: the status is unknown.
		{"missing owner", budget(nil, intOr(1)), pods(goneRef, 2, 0), 0, 0, 0, 0, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Compute(tc.b, tc.pods, owners, now)
			if st.ExpectedPods != tc.expected || st.DesiredHealthy != tc.desired || st.CurrentHealthy != tc.healthy || st.DisruptionsAllowed != tc.allow {
				t.Errorf("got expected %d desired %d healthy %d allowed %d, want %d %d %d %d", st.ExpectedPods, st.DesiredHealthy, st.CurrentHealthy, st.DisruptionsAllowed, tc.expected, tc.desired, tc.healthy, tc.allow)
			}
			if (st.SyncFailed != "") != tc.syncFailed || (st.Unknown != "") != tc.unknown {
				t.Errorf("syncFailed %q unknown %q", st.SyncFailed, st.Unknown)
			}
		})
	}
}

// A pod in disruptedPods within DeletionTimeout is not healthy; a
// terminating pod never is.
func TestHealthyCount(t *testing.T) {
	b := budget(intOr(1), nil)
	ps := pods(nil, 3, 0)
	ps[0].DeletionTimestamp = &metav1.Time{Time: now}
	b.PDB.Status.DisruptedPods = map[string]metav1.Time{"b": {Time: now.Add(-time.Minute)}, "c": {Time: now.Add(-3 * time.Minute)}}
	st := Compute(b, ps, NewOwners(Workloads{}), now)
	if st.CurrentHealthy != 1 || len(st.DisruptedPods) != 1 {
		t.Fatalf("%+v", st)
	}
}

// The Eviction API and the scheduler match differently: an empty
// selector selects every pod for the Eviction API, none for the scheduler.
func TestSelects(t *testing.T) {
	b := Parse([]*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "all"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{}}}})[0]
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", Labels: map[string]string{"a": "b"}, UID: types.UID("x")}}
	if !b.EvictionSelects(p) || b.SchedulerSelects(p) {
		t.Fatal("empty selector")
	}
	bad := Parse([]*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bad"}, Spec: policyv1.PodDisruptionBudgetSpec{
		Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}}}})[0]
	if bad.Err == nil || bad.EvictionSelects(p) {
		t.Fatal("invalid selector")
	}
}
