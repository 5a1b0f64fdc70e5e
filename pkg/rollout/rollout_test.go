package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func node(name, cpu string) *corev1.Node {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: res, Capacity: res,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

// fixture: a Deployment "web" of n ready pods, pod i on nodes[i%len].
func fixture(n int32, surge, unavail string, nodes ...*corev1.Node) Input {
	s, u := intstr.Parse(surge), intstr.Parse(unavail)
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "v1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "d-uid"},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl,
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &s, MaxUnavailable: &u}}},
		Status: appsv1.DeploymentStatus{Replicas: n}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", UID: "rs-uid", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
		Annotations:     map[string]string{"deployment.kubernetes.io/desired-replicas": fmt.Sprint(n), "deployment.kubernetes.io/max-replicas": "99"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: d.Spec.Selector, Template: tmpl}}
	in := Input{Deployment: d, ReplicaSets: []*appsv1.ReplicaSet{rs}, Nodes: nodes, Change: Change{Kind: ChangeRestart},
		Rules: rules.Defaults(rules.Newest), Scheduler: rules.Scheduler(rules.Newest, nil), Now: now}
	for i := range int(n) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-1-p%d", i), Namespace: "ns", UID: types.UID(fmt.Sprintf("u%d", i)), Labels: labels,
			CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: *tmpl.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour + time.Duration(i)*time.Minute))}}}}
		p.Spec.NodeName = nodes[i%len(nodes)].Name
		in.Pods = append(in.Pods, p)
	}
	in.Workloads = disruption.Workloads{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{rs}}
	return in
}

func deletedPerStep(r prediction.Rollout) [][]string {
	var out [][]string
	for _, s := range r.Steps {
		out = append(out, s.Deleted)
	}
	return out
}

// 4 replicas, maxSurge 1, maxUnavailable 0, one node with room for all:
// NewRSNewReplicas adds 1; each step deletes one old pod once the new
// one is available. Ready times 57-60 min ago share a log2 bucket, so the
// lower UID goes first (R8 by UID).
func TestRollingOneByOne(t *testing.T) {
	in := fixture(4, "1", "0", node("n1", "10"))
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rollout
	if r.Outcome != prediction.RolloutCompletes {
		t.Fatalf("outcome %s %s", r.Outcome, r.Reason)
	}
	got := fmt.Sprint(deletedPerStep(r))
	want := "[[] [ns/web-1-p0] [ns/web-1-p1] [ns/web-1-p2] [ns/web-1-p3]]"
	if got != want {
		t.Fatalf("deleted per step %s, want %s", got, want)
	}
	if r.Steps[0].AvailableMin != 4 || r.Steps[0].WaitsFor != 1 || r.Steps[0].Created[0].Node != "n1" {
		t.Fatalf("step 1: %+v", r.Steps[0])
	}
	if w := r.Steps[1].Why[0]; !strings.Contains(w, "UID") {
		t.Fatalf("why %q", w)
	}
	if fmt.Sprint(r.IfNewPodsFail.Deleted) != "[]" || r.IfNewPodsFail.AvailableMin != 4 {
		t.Fatalf("ifNewPodsFail %+v", r.IfNewPodsFail)
	}
}

// 4 replicas, 25%/25% (surge 1, unavailable 1): step 1 creates 1 and
// deletes 1 at once; a bad release costs exactly that pod.
func TestRollingDefaults(t *testing.T) {
	in := fixture(4, "25%", "25%", node("n1", "10"))
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rollout
	if r.Outcome != prediction.RolloutCompletes || len(r.Steps[0].Deleted) != 1 || len(r.Steps[0].Created) != 2 || r.Steps[0].AvailableMin != 3 {
		t.Fatalf("%+v", r.Steps[0])
	}
	if len(r.IfNewPodsFail.Deleted) != 1 || r.IfNewPodsFail.AvailableMin != 3 {
		t.Fatalf("ifNewPodsFail %+v", r.IfNewPodsFail)
	}
}

// Full nodes and maxUnavailable 0: the surge pod fits nowhere, the
// rollout stalls with every old pod left.
func TestRollingStallsNoRoom(t *testing.T) {
	in := fixture(2, "1", "0", node("n1", "1"), node("n2", "1"))
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rollout
	if r.Outcome != prediction.RolloutStalls || len(r.Remaining) != 2 || len(res.Victims) != 0 {
		t.Fatalf("%s %s %v", r.Outcome, r.Reason, r.Remaining)
	}
	if r.Steps[0].Created[0].Node != "" || r.Steps[0].Created[0].Reason == "" {
		t.Fatalf("%+v", r.Steps[0].Created)
	}
}

// Recreate: every old pod goes in step 1, then all new pods.
func TestRecreate(t *testing.T) {
	in := fixture(3, "1", "0", node("n1", "10"))
	in.Deployment.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rollout
	if r.Outcome != prediction.RolloutCompletes || len(r.Steps[0].Deleted) != 3 || r.Steps[0].AvailableMin != 0 || len(r.Steps[1].Created) != 3 {
		t.Fatalf("%+v", r)
	}
	if len(r.IfNewPodsFail.Deleted) != 3 || r.IfNewPodsFail.AvailableMin != 0 {
		t.Fatalf("%+v", r.IfNewPodsFail)
	}
}

// A budget of minAvailable 4 on 4 replicas is broken by maxUnavailable 1.
func TestBudgetViolated(t *testing.T) {
	in := fixture(4, "0", "1", node("n1", "10"))
	four := intstr.FromInt32(4)
	in.PDBs = []*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "pdb", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &four, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	b := res.Rollout.Steps[0].Budgets
	if len(b) != 1 || !b[0].Violated || b[0].DesiredHealthy != 4 || b[0].CurrentHealthyMin != 3 {
		t.Fatalf("%+v", b)
	}
}

func TestBadInput(t *testing.T) {
	in := fixture(2, "-1", "0", node("n1", "10"))
	if _, err := Predict(in); err == nil {
		t.Fatal("negative maxSurge accepted")
	}
	in = fixture(2, "1", "0", node("n1", "10"))
	in.Change = Change{Kind: ChangeImage, Images: map[string]string{"nope": "v2"}}
	if _, err := Predict(in); err == nil {
		t.Fatal("unknown container accepted")
	}
	in.Change = Change{Kind: ChangeResume}
	if _, err := Predict(in); err == nil {
		t.Fatal("resume of a running Deployment accepted")
	}
	in = fixture(2, "1", "0", node("n1", "10"))
	in.ReplicaSets = nil
	if _, err := Predict(in); err == nil {
		t.Fatal("missing ReplicaSet accepted")
	}
}

func podQuota(hard, used string, status bool) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(hard)}}}
	if status {
		q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(used)}}
	}
	return q
}

// A pods quota at its limit: the surge pod is a FailedCreate; with
// maxUnavailable 0 nothing frees quota and the rollout stalls.
func TestQuotaStalls(t *testing.T) {
	in := fixture(3, "1", "0", node("n1", "10"))
	in.Quotas = []*corev1.ResourceQuota{podQuota("3", "3", true)}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rollout
	if r.Outcome != prediction.RolloutStalls || !strings.Contains(r.Reason, "exceeded quota: q") || len(r.Remaining) != 3 {
		t.Fatalf("%s: %s %v", r.Outcome, r.Reason, r.Remaining)
	}
	// The retries' back-off as client-go fixes it, and no duration beyond.
	if !strings.Contains(r.Reason, "5 ms, doubled on each consecutive failed sync, at most 1000 s") {
		t.Errorf("no back-off in the reason: %s", r.Reason)
	}
}

// With maxUnavailable 1, each deleted old pod frees its quota once gone
// (terminating pods stay charged until then): the rollout completes, one
// pod at a time.
func TestQuotaSlows(t *testing.T) {
	in := fixture(3, "1", "1", node("n1", "10"))
	in.Quotas = []*corev1.ResourceQuota{podQuota("3", "3", true)}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rollout
	if r.Outcome != prediction.RolloutCompletes || len(res.Victims) != 3 {
		t.Fatalf("%s: %s", r.Outcome, r.Reason)
	}
	if c := r.Steps[0].Created; len(c) != 1 || !strings.Contains(c[0].Reason, "FailedCreate") || !strings.Contains(c[0].Reason, "at most 1000 s") {
		t.Fatalf("step 1 created %+v", c)
	}
	// The pod the quota refused is created once the old pod is gone, at
	// the ReplicaSet's next sync.
	if c := r.Steps[1].Created; len(c) == 0 || c[0].Node != "n1" || !strings.HasPrefix(c[0].Reason, "created at the ReplicaSet's first sync after the quota freed") {
		t.Fatalf("step 2 created %+v", c)
	}
}

// A quota without status is counted from the pods, and the answer is uncertain.
func TestQuotaWithoutStatus(t *testing.T) {
	in := fixture(3, "1", "0", node("n1", "10"))
	in.Quotas = []*corev1.ResourceQuota{podQuota("3", "", false)}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Certain || res.Rollout.Outcome != prediction.RolloutStalls {
		t.Fatalf("%+v %v", res.Rollout.Outcome, res.Certain)
	}
}

// Paused: nothing starts; --resume then rolls the template already set.
func TestPausedAndResume(t *testing.T) {
	in := fixture(2, "1", "0", node("n1", "10"))
	in.Deployment.Spec.Paused = true
	in.Change = Change{Kind: ChangeImage, Images: map[string]string{"*": "v2"}}
	res, err := Predict(in)
	if err != nil || res.Rollout.Outcome != prediction.RolloutNotStarted || !strings.Contains(res.Rollout.Unblock, "resume") {
		t.Fatalf("%v %+v", err, res)
	}
	in.Change = Change{Kind: ChangeRestart}
	if _, err := Predict(in); err == nil {
		t.Fatal("restart of a paused Deployment accepted (kubectl refuses it)")
	}
	// Resume with the template unchanged: nothing to roll out.
	in.Change = Change{Kind: ChangeResume}
	res, err = Predict(in)
	if err != nil || res.Rollout.Outcome != prediction.RolloutNotStarted {
		t.Fatalf("%v %+v", err, res.Rollout)
	}
	// Resume after set image while paused: the whole rollout.
	in.Deployment.Spec.Template = *in.Deployment.Spec.Template.DeepCopy() // the fixture shares the containers
	in.Deployment.Spec.Template.Spec.Containers[0].Image = "v2"
	res, err = Predict(in)
	if err != nil || res.Rollout.Outcome != prediction.RolloutCompletes || len(res.Victims) != 2 {
		t.Fatalf("%v %+v", err, res.Rollout)
	}
}

// Mid-rollout (rollover): an image back to the old ReplicaSet's template
// makes that ReplicaSet the new one again; the half-rolled one is old.
func TestRollover(t *testing.T) {
	in := fixture(2, "1", "0", node("n1", "10"))
	mid := in.ReplicaSets[0].DeepCopy()
	mid.Name, mid.UID = "web-2", "rs2-uid"
	mid.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	mid.Spec.Template.Spec.Containers[0].Image = "v2"
	one := int32(1)
	mid.Spec.Replicas = &one
	in.ReplicaSets = append(in.ReplicaSets, mid)
	in.Deployment.Spec.Template = mid.Spec.Template
	p := in.Pods[0].DeepCopy()
	p.Name, p.UID = "web-2-p0", "u-mid"
	p.OwnerReferences[0].Name, p.OwnerReferences[0].UID = "web-2", "rs2-uid"
	in.Pods = append(in.Pods, p)
	one1 := int32(1)
	in.ReplicaSets[0].Spec.Replicas = &one1
	in.Pods = append(in.Pods[:1], in.Pods[2:]...) // web-1 has one pod left
	in.Change = Change{Kind: ChangeImage, Images: map[string]string{"app": "v1"}}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rollout.Outcome != prediction.RolloutCompletes || fmt.Sprint(res.Victims) != "[ns/web-2-p0]" {
		t.Fatalf("%s %v %+v", res.Rollout.Outcome, res.Victims, res.Rollout.Steps)
	}
}
