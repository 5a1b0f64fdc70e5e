package workload

import (
	"fmt"
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
)

// testNow is the fixed reference time of every workload test.
var testNow = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

const testNS = "default"

// podFix builds a test pod fluently. Defaults: namespace default, UID
// "uid-<name>", phase Running, no conditions (not ready), created 30 days
// before testNow, unassigned.
type podFix struct{ p *corev1.Pod }

func mkPod(name string) podFix {
	return podFix{&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(testNow.Add(-30 * 24 * time.Hour))},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

func (b podFix) labels(kv ...string) podFix {
	b.p.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		b.p.Labels[kv[i]] = kv[i+1]
	}
	return b
}

func (b podFix) uid(u string) podFix             { b.p.UID = types.UID(u); return b }
func (b podFix) on(node string) podFix           { b.p.Spec.NodeName = node; return b }
func (b podFix) phase(ph corev1.PodPhase) podFix { b.p.Status.Phase = ph; return b }
func (b podFix) createdAgo(d time.Duration) podFix {
	b.p.CreationTimestamp = metav1.NewTime(testNow.Add(-d))
	return b
}
func (b podFix) restarts(n int32) podFix {
	b.p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: n}}
	return b
}
func (b podFix) terminating() podFix {
	t := metav1.NewTime(testNow.Add(-5 * time.Second))
	b.p.DeletionTimestamp = &t
	return b
}
func (b podFix) ownedBy(kind, name, uid string) podFix {
	b.p.OwnerReferences = []metav1.OwnerReference{ctrlRef(kind, name, uid)}
	return b
}

// readyFor makes the pod ready since d ago, created 30s before that.
func (b podFix) readyFor(d time.Duration) podFix {
	b.p.CreationTimestamp = metav1.NewTime(testNow.Add(-d - 30*time.Second))
	b.p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(testNow.Add(-d))}}
	return b
}

func (b podFix) notReady() podFix {
	b.p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(testNow.Add(-time.Minute))}}
	return b
}

func (b podFix) pod() *corev1.Pod { return b.p }

func ctrlRef(kind, name, uid string) metav1.OwnerReference {
	yes := true
	api := "apps/v1"
	if kind == "ReplicationController" || kind == "Pod" {
		api = "v1"
	}
	return metav1.OwnerReference{APIVersion: api, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes, BlockOwnerDeletion: &yes}
}

// mkRS is a ReplicaSet selecting the given labels; owner == "" makes it
// standalone, otherwise it is controlled by the Deployment with that UID.
func mkRS(name string, replicas int32, ownerUID string, sel ...string) *appsv1.ReplicaSet {
	m := map[string]string{}
	for i := 0; i+1 < len(sel); i += 2 {
		m[sel[i]] = sel[i+1]
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(testNow.Add(-60 * 24 * time.Hour))},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: m},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: m}}},
	}
	if ownerUID != "" {
		rs.OwnerReferences = []metav1.OwnerReference{ctrlRef("Deployment", "owner", ownerUID)}
	}
	return rs
}

func mkRC(name string, replicas int32, ownerUID string, sel map[string]string) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name)},
		Spec:       corev1.ReplicationControllerSpec{Replicas: &replicas, Selector: sel},
	}
	if ownerUID != "" {
		rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.openshift.io/v1", Kind: "DeploymentConfig", Name: "dc", UID: types.UID(ownerUID), Controller: ptr.To(true)}}
	}
	return rc
}

// rsPod is a Running pod controlled by rs, with rs's template labels.
func rsPod(name string, rs *appsv1.ReplicaSet) podFix {
	b := mkPod(name).ownedBy("ReplicaSet", rs.Name, string(rs.UID))
	b.p.Labels = map[string]string{}
	for k, v := range rs.Spec.Template.Labels {
		b.p.Labels[k] = v
	}
	return b
}

func rules37(t testing.TB) rules.RuleSet { return ruleSetFor(t, 37) }

func ruleSetFor(t testing.TB, minor int) rules.RuleSet {
	t.Helper()
	r, err := rules.For(minor, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func predictOK(t *testing.T, s *snapshot.Snapshot, kind, name string, replicas int32, r rules.RuleSet) *prediction.Prediction {
	t.Helper()
	p, err := Predict(s, snapshot.Ref{Kind: kind, Namespace: testNS, Name: name}, replicas, Options{Rules: r, Now: testNow, Seed: 1})
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	return p
}

func podsOf(pbs ...podFix) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pbs))
	for i, b := range pbs {
		out[i] = b.p
	}
	return out
}

func findPod(t *testing.T, p *prediction.Prediction, name string) prediction.Pod {
	t.Helper()
	for _, x := range p.Pods {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("pod %s not in the prediction (pods: %v)", name, podNames(p))
	return prediction.Pod{}
}

func hasPod(p *prediction.Prediction, name string) bool {
	for _, x := range p.Pods {
		if x.Name == name {
			return true
		}
	}
	return false
}

func podNames(p *prediction.Prediction) []string {
	var out []string
	for _, x := range p.Pods {
		out = append(out, x.Name+":"+x.Fate)
	}
	return out
}

func wantVictims(t *testing.T, p *prediction.Prediction, want ...string) {
	t.Helper()
	if fmt.Sprint(p.Victims) != fmt.Sprint(want) && (len(p.Victims) != 0 || len(want) != 0) {
		t.Errorf("victims = %v, want %v\npods: %v", p.Victims, want, podNames(p))
	}
	for _, v := range want {
		if f := findPod(t, p, v).Fate; f != prediction.FateDelete {
			t.Errorf("%s: fate %q, want delete", v, f)
		}
	}
	n := 0
	for _, x := range p.Pods {
		if x.Fate == prediction.FateDelete {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("%d pods with fate delete, want %d", n, len(want))
	}
}

// wantDecided checks the rule of the comparison that decided a pod's
// fate (victim vs first survivor, survivor vs last victim).
func wantDecided(t *testing.T, p *prediction.Prediction, pod, rule, against string) {
	t.Helper()
	x := findPod(t, p, pod)
	if x.VsBoundary == nil {
		t.Errorf("%s: no vsBoundary decision", pod)
		return
	}
	if x.VsBoundary.Rule != rule || x.VsBoundary.Against != against {
		t.Errorf("%s: decided by %s against %s (%s), want %s against %s", pod, x.VsBoundary.Rule, x.VsBoundary.Against, x.VsBoundary.Text, rule, against)
	}
}

func wantFate(t *testing.T, p *prediction.Prediction, pod, fate, reasonPart string) {
	t.Helper()
	x := findPod(t, p, pod)
	if x.Fate != fate {
		t.Errorf("%s: fate %q, want %q", pod, x.Fate, fate)
	}
	if !strings.Contains(x.Reason, reasonPart) {
		t.Errorf("%s: reason %q, want it to mention %q", pod, x.Reason, reasonPart)
	}
	if fate == prediction.FateTerminating || fate == prediction.FateIgnored {
		if x.Position != 0 || !x.Certain || x.DeleteProbability != 0 {
			t.Errorf("%s: position %d certain %v p %v, want 0/true/0 for an uncounted pod", pod, x.Position, x.Certain, x.DeleteProbability)
		}
	}
}

// hasWarning looks in the warnings and in the conflicts.
func hasWarning(p *prediction.Prediction, part string) bool {
	for _, w := range p.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	for _, c := range p.Conflicts {
		if strings.Contains(c.Message, part) {
			return true
		}
	}
	return false
}

// --- Deployments ---------------------------------------------------------

const depUID = "uid-dep-web"

func intOrStr(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }

// mkDeploy is Deployment "web" (selector app=web, image web:2) at replicas
// (its current spec.replicas), RollingUpdate with the given surge and
// unavailability.
func mkDeploy(replicas, statusReplicas int32, surge, unavailable string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: testNS, UID: depUID, CreationTimestamp: metav1.NewTime(testNow.Add(-90 * 24 * time.Hour))},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: intOrStr(surge), MaxUnavailable: intOrStr(unavailable)}},
			Template: template("web:2", ""),
		},
		Status: appsv1.DeploymentStatus{Replicas: statusReplicas},
	}
}

func template(image, hash string) corev1.PodTemplateSpec {
	l := map[string]string{"app": "web"}
	if hash != "" {
		l[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}}}
}

// mkDepRS is a ReplicaSet of Deployment web with the given template image
// ("web:2" makes it the new one), replicas, creation age and the
// annotations the controller wrote at deployment size desired/max (0: none).
func mkDepRS(d *appsv1.Deployment, hash, image string, replicas int32, age time.Duration, desired, max int32) *appsv1.ReplicaSet {
	sel := map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: hash}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + hash, Namespace: testNS, UID: types.UID("uid-web-" + hash),
			CreationTimestamp: metav1.NewTime(testNow.Add(-age)), Labels: sel,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})}},
		Spec:   appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: template(image, hash)},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas},
	}
	if desired > 0 {
		rs.Annotations = map[string]string{
			deployment.DesiredReplicasAnnotation: fmt.Sprint(desired),
			deployment.MaxReplicasAnnotation:     fmt.Sprint(max),
		}
	}
	return rs
}

// readyAges are ready ages in distinct log2 buckets (39..47), newest first,
// so rule R6 orders pods of one ReplicaSet exactly.
var readyAges = []time.Duration{
	10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour,
	5 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour,
}

// readyPods are n ready pods of rs named <rs>-p1..pn, each on its own node
// (<nodePrefix>1..n, so every rank is 1), p1 the most recently ready.
func readyPods(rs *appsv1.ReplicaSet, n int, nodePrefix string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		out = append(out, rsPod(fmt.Sprintf("%s-p%d", rs.Name, i+1), rs).on(fmt.Sprintf("%s%d", nodePrefix, i+1)).readyFor(readyAges[i]).pod())
	}
	return out
}

func rsStep(t *testing.T, p *prediction.Prediction, name string) prediction.ReplicaSetStep {
	t.Helper()
	for _, r := range p.ReplicaSets {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no ReplicaSet %s in %+v", name, p.ReplicaSets)
	return prediction.ReplicaSetStep{}
}

func wantStep(t *testing.T, p *prediction.Prediction, name string, want prediction.ReplicaSetStep) {
	t.Helper()
	want.Name = name
	if got := rsStep(t, p, name); got != want {
		t.Errorf("ReplicaSet %s:\n got %+v\nwant %+v", name, got, want)
	}
}

// victimSteps renders victims as "step:replicaSet:name".
func victimSteps(p *prediction.Prediction) []string {
	var out []string
	for _, x := range p.Pods {
		if x.Fate == prediction.FateDelete {
			out = append(out, x.Step+":"+x.ReplicaSet+":"+x.Name)
		}
	}
	return out
}
