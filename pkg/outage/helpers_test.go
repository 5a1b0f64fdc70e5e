package outage

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// node is a Ready node in zone (none when "").
func node(name, zone, cpu string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	if zone != "" {
		n.Labels[corev1.LabelTopologyZone] = zone
	}
	return n
}

// zoneNodes are n nodes named prefix-0.. in zone.
func zoneNodes(prefix, zone string, n int) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, node(prefix+"-"+itoa(i), zone, "4"))
	}
	return out
}

func itoa(i int) string { return resource.NewQuantity(int64(i), resource.DecimalSI).String() }

type world struct{ in Input }

func newWorld(nodes ...*corev1.Node) *world {
	return &world{in: Input{Nodes: nodes, Now: now, Scheduler: rules.Scheduler(rules.Newest, nil),
		Settings:   Settings{Condition: ConditionUnreachable, OutageRules: rules.Outage(rules.Newest)},
		OwnersRead: map[string]bool{"ReplicaSet": true, "Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicationController": true, "Job": true}}}
}

func template(app, cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

func (w *world) rs(name string, replicas int32, cpu string) *appsv1.ReplicaSet {
	r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Template: template(name, cpu)}}
	w.in.Workloads.ReplicaSets = append(w.in.Workloads.ReplicaSets, r)
	return r
}

func (w *world) sts(name string, replicas int32) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Template: template(name, "100m")}}
	w.in.Workloads.StatefulSets = append(w.in.Workloads.StatefulSets, s)
	return s
}

func (w *world) ds(name string) *appsv1.DaemonSet {
	d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
	w.in.Workloads.DaemonSets = append(w.in.Workloads.DaemonSets, d)
	return d
}

// defaults are the tolerations the API server's admission adds.
func defaults(seconds int64) []corev1.Toleration {
	return []corev1.Toleration{
		{Key: TaintNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
		{Key: TaintUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds}}
}

// pod adds an admitted, Ready pod of owner (nil: bare) on node, with the
// admission's 300 s tolerations unless tol is given.
func (w *world) pod(name, nodeName string, owner metav1.Object, kind string, tol ...corev1.Toleration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec:   corev1.PodSpec{NodeName: nodeName, Tolerations: defaults(300)},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if tol != nil {
		p.Spec.Tolerations = tol
	}
	if owner != nil {
		t := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &t}}
		switch o := owner.(type) {
		case *appsv1.ReplicaSet:
			p.Labels, p.Spec.Containers = o.Spec.Template.Labels, o.Spec.Template.Spec.Containers
		case *appsv1.StatefulSet:
			p.Labels, p.Spec.Containers = o.Spec.Template.Labels, o.Spec.Template.Spec.Containers
		}
	}
	w.in.Pods = append(w.in.Pods, p)
	return p
}

func (w *world) pdb(app string, minAvailable int) {
	v := intstr.FromInt32(int32(minAvailable))
	w.in.PDBs = append(w.in.PDBs, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: app, Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &v, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}})
}

func (w *world) predict(nodes ...string) *Result {
	w.in.Failed = nodes
	r, err := Predict(w.in)
	if err != nil {
		panic(err)
	}
	return r
}

func (r *Result) pod(name string) PodResult {
	for _, p := range r.Pods {
		if p.Pod == "default/"+name {
			return p
		}
	}
	panic("no pod " + name)
}

func (r *Result) zone(name string) ZoneResult {
	for _, z := range r.Zones {
		if z.Zone == name {
			return z
		}
	}
	panic("no zone " + name)
}

func secsPtr(v int64) *int64 { return &v }
