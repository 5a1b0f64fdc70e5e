package inprocess

import (
	"fmt"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// scoreScenario is one random cluster and a pod to place where several
// nodes pass the filters: the Score phase decides.
type scoreScenario struct {
	seed  uint64
	nodes []*corev1.Node
	pods  []*corev1.Pod
	rss   []*appsv1.ReplicaSet
	svcs  []*corev1.Service // the plugin does not read them
	pod   *corev1.Pod
	owner *metav1.LabelSelector
}

var scoreImages = []struct {
	name string
	size int64
}{{"registry.example/app:1", 300 << 20}, {"registry.example/side", 40 << 20}, {"busybox:1.36", 5 << 20}, {"registry.example/big:2", 900 << 20}}

func scoreGenerate(seed uint64) *scoreScenario {
	r := rand.New(rand.NewPCG(seed, seed^0x5c07e))
	sc := &scoreScenario{seed: seed}
	zones := 1 + r.IntN(3)
	for i := range 2 + r.IntN(10) {
		sc.nodes = append(sc.nodes, scoreNode(r, i, zones))
	}
	apps := []string{"a", "b", "c"}
	for _, app := range apps {
		sc.rss = append(sc.rss, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs-" + app, Namespace: "default", UID: types.UID("rs-" + app)},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}}}})
	}
	for i := range r.IntN(25) {
		app := apps[r.IntN(len(apps))]
		p := scorePod(r, fmt.Sprintf("p%d", i), app)
		p.Spec.NodeName = sc.nodes[r.IntN(len(sc.nodes))].Name
		p.Status.Phase = corev1.PodRunning
		if r.IntN(10) == 0 {
			p.DeletionTimestamp = &metav1.Time{}
		}
		sc.pods = append(sc.pods, p)
	}
	app := apps[r.IntN(len(apps))]
	sc.pod = scorePod(r, "incoming", app)
	sc.owner = sc.rss[slicesIndex(apps, app)].Spec.Selector
	scoreIncoming(r, sc.pod, app)
	if r.IntN(3) == 0 { // a Service narrows the default spreading's selector
		sel := map[string]string{"app": app}
		if r.IntN(2) == 0 {
			sel["tier"] = "web"
		}
		sc.svcs = append(sc.svcs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "default"}, Spec: corev1.ServiceSpec{Selector: sel}})
	}
	return sc
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func scoreNode(r *rand.Rand, i, zones int) *corev1.Node {
	name := fmt.Sprintf("n%d", i)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(2000*(1+r.IntN(4))), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(4<<30)*int64(1+r.IntN(4)), resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI)}}}
	if r.IntN(8) != 0 {
		n.Labels[corev1.LabelTopologyZone] = fmt.Sprintf("z%d", r.IntN(zones))
	}
	if r.IntN(2) == 0 {
		n.Labels["disk"] = []string{"ssd", "hdd"}[r.IntN(2)]
	}
	switch r.IntN(6) {
	case 0:
		n.Spec.Taints = []corev1.Taint{{Key: "soft", Value: "x", Effect: corev1.TaintEffectPreferNoSchedule}}
	case 1:
		n.Spec.Taints = []corev1.Taint{{Key: "soft", Value: "x", Effect: corev1.TaintEffectPreferNoSchedule}, {Key: "other", Effect: corev1.TaintEffectPreferNoSchedule}}
	}
	for _, img := range scoreImages {
		if r.IntN(3) == 0 {
			n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{img.name}, SizeBytes: img.size})
		}
	}
	return n
}

func scorePod(r *rand.Rand, name, app string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{"app": app},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + app, UID: types.UID("rs-" + app), Controller: ptrTo(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: scoreImages[r.IntN(len(scoreImages))].name}}}}
	if r.IntN(3) == 0 {
		p.Labels["tier"] = "web"
	}
	req := corev1.ResourceList{}
	if r.IntN(4) != 0 {
		req[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(100*(1+r.IntN(10))), resource.DecimalSI)
	}
	if r.IntN(4) != 0 {
		req[corev1.ResourceMemory] = *resource.NewQuantity(int64(128<<20)*int64(1+r.IntN(12)), resource.BinarySI)
	}
	p.Spec.Containers[0].Resources.Requests = req
	if r.IntN(5) == 0 {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: int32(1 + r.IntN(100)), PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}}}}
	}
	return p
}

// scoreIncoming gives the pod to place the scoring inputs at random.
func scoreIncoming(r *rand.Rand, p *corev1.Pod, app string) {
	if r.IntN(3) == 0 {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "soft", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule}}
	}
	if r.IntN(3) == 0 {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: int32(1 + r.IntN(100)), Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}}}
	}
	if r.IntN(4) == 0 {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: int32(1 + r.IntN(100)), PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelTopologyZone,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": []string{"a", "b", "c"}[r.IntN(3)]}}}}}}
	}
	if r.IntN(4) == 0 {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: int32(1 + r.IntN(3)), TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
	if r.IntN(6) == 0 {
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: scoreImages[r.IntN(len(scoreImages))].name}}
	}
}
