package drain

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func node(name, cpu string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}}}
}

func cordoned(n *corev1.Node) *corev1.Node {
	n.Spec.Unschedulable = true
	return n
}

// world is a test cluster under construction.
type world struct {
	in Input
}

func newWorld(nodes ...*corev1.Node) *world {
	return &world{in: Input{Nodes: nodes, Now: now, Scheduler: rules.Scheduler(rules.Newest, nil), Disruption: rules.Disruption(rules.Newest, nil),
		Options:    Options{GracePeriodSeconds: -1, IgnoreDaemonSets: true},
		OwnersRead: map[string]bool{"ReplicaSet": true, "Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicationController": true, "Job": true}}}
}

func podTemplate(app, cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// rs adds a ReplicaSet with no Deployment.
func (w *world) rs(name string, replicas int32, cpu string) *appsv1.ReplicaSet {
	r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Template: podTemplate(name, cpu)}}
	w.in.Workloads.ReplicaSets = append(w.in.Workloads.ReplicaSets, r)
	return r
}

// pod adds a pod of owner (nil: a bare pod) on node.
func (w *world) pod(name, nodeName string, owner metav1.Object, kind string, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if owner != nil {
		t := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &t}}
		if r, ok := owner.(*appsv1.ReplicaSet); ok {
			p.Labels = r.Spec.Template.Labels
			p.Spec.Containers = r.Spec.Template.Spec.Containers
		}
		if s, ok := owner.(*appsv1.StatefulSet); ok {
			p.Labels = s.Spec.Template.Labels
			p.Spec.Containers = s.Spec.Template.Spec.Containers
		}
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	w.in.Pods = append(w.in.Pods, p)
	return p
}

// pdb adds a budget over app=name with its status as the controller
// would write it for the pods added so far.
func (w *world) pdb(app string, minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: app, Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	w.in.PDBs = append(w.in.PDBs, b)
	w.sync()
	return b
}

// sync writes every budget's status as the controller would.
func (w *world) sync() {
	owners := disruption.NewOwners(w.in.Workloads)
	for i, b := range disruption.Parse(w.in.PDBs) {
		st := disruption.Compute(b, w.in.Pods, owners, now)
		w.in.PDBs[i].Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, ExpectedPods: st.ExpectedPods,
			DesiredHealthy: st.DesiredHealthy, CurrentHealthy: st.CurrentHealthy, DisruptionsAllowed: st.DisruptionsAllowed}
	}
}

func intOr(i int) *intstr.IntOrString { v := intstr.FromInt32(int32(i)); return &v }

func (w *world) predict(nodes ...string) *Result {
	w.in.Drain = nodes
	r, err := Predict(w.in)
	if err != nil {
		panic(err)
	}
	return r
}
