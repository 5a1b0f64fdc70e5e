package inprocess

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// preemptScenario is one random cluster and a pending pod.
type preemptScenario struct {
	seed      uint64
	nodes     []*corev1.Node
	pods      []*corev1.Pod
	pdbs      []*policyv1.PodDisruptionBudget
	preemptor *corev1.Pod
	what      string
}

var preemptT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const preemptGPU = corev1.ResourceName("example.com/gpu")

var preemptApps = []string{"web", "api", "db", "batch"}

// preemptGenerate draws a cluster: 3-200 nodes in 1-3 zones, some tainted,
// unschedulable or small; pods of several priorities (equal ones too),
// requests and a GPU extended resource, host ports, anti-affinity; PDBs;
// nominated pods; a preemptor with a mix of constraints.
func preemptGenerate(seed uint64) *preemptScenario {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	sc := &preemptScenario{seed: seed}
	var nNodes int
	switch x := r.IntN(10); {
	case x < 5:
		nNodes = 3 + r.IntN(8)
	case x < 8:
		nNodes = 10 + r.IntN(40)
	default:
		nNodes = 101 + r.IntN(100)
	}
	zones := 1 + r.IntN(3)
	prios := []int32{0, 10, 10, 100, 100, 1000}
	var features []string
	for i := range nNodes {
		name := fmt.Sprintf("node-%03d", i)
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname:     name,
			corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", r.IntN(zones)),
		}}}
		alloc := corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(2000+1000*r.IntN(3)), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(4+4*r.IntN(2))<<30, resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(int64([]int{110, 110, 110, 4}[r.IntN(4)]), resource.DecimalSI),
		}
		if r.IntN(4) == 0 {
			alloc[preemptGPU] = *resource.NewQuantity(int64(1+r.IntN(2)), resource.DecimalSI)
		}
		n.Status.Allocatable, n.Status.Capacity = alloc, alloc
		if r.IntN(8) == 0 {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}}
		}
		if r.IntN(15) == 0 {
			n.Spec.Unschedulable = true
		}
		if r.IntN(3) == 0 {
			n.Labels["disk"] = "ssd"
		}
		sc.nodes = append(sc.nodes, n)
	}
	useStart := r.IntN(6) != 0
	podN := 0
	mkPod := func(node string, prio int32) *corev1.Pod {
		podN++
		app := preemptApps[r.IntN(len(preemptApps))]
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%04d", podN), Namespace: "default",
			UID: types.UID(fmt.Sprintf("uid-%04d", podN)), Labels: map[string]string{"app": app},
			CreationTimestamp: metav1.NewTime(preemptT0)},
			Spec: corev1.PodSpec{NodeName: node, Priority: &prio, SchedulerName: corev1.DefaultSchedulerName,
				Containers: []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(100*(1+r.IntN(15))), resource.DecimalSI),
					corev1.ResourceMemory: *resource.NewQuantity(int64(256*(1+r.IntN(8)))<<20, resource.BinarySI),
				}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		if node == "" {
			p.Status.Phase = corev1.PodPending
		}
		if useStart || r.IntN(3) != 0 {
			// Minutes apart, with some equal start times.
			st := metav1.NewTime(preemptT0.Add(time.Duration(r.IntN(60)) * time.Minute))
			p.Status.StartTime = &st
		}
		if r.IntN(6) == 0 {
			p.Spec.Containers[0].Resources.Requests[preemptGPU] = resource.MustParse("1")
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{preemptGPU: resource.MustParse("1")}
		}
		if r.IntN(8) == 0 {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		}
		if r.IntN(10) == 0 {
			key := corev1.LabelHostname
			if r.IntN(3) == 0 {
				key = corev1.LabelTopologyZone
			}
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": preemptApps[r.IntN(len(preemptApps))]}}, TopologyKey: key}}}}
		}
		if r.IntN(20) == 0 {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
		}
		if r.IntN(15) == 0 {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []corev1.Container{{Name: "sidecar", Image: "x", RestartPolicy: &always, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}}}
		}
		if r.IntN(25) == 0 {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}
		return p
	}
	// Fill nodes by a request budget so that most are nearly full.
	for _, n := range sc.nodes {
		if n.Spec.Unschedulable && r.IntN(2) == 0 {
			continue
		}
		cpu := n.Status.Allocatable.Cpu().MilliValue()
		maxPods := n.Status.Allocatable.Pods().Value()
		var used int64
		for k := int64(0); k < maxPods; k++ {
			p := mkPod(n.Name, prios[r.IntN(len(prios))])
			req := p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			if used+req > cpu {
				break
			}
			if g, ok := p.Spec.Containers[0].Resources.Requests[preemptGPU]; ok {
				if have, ok := n.Status.Allocatable[preemptGPU]; !ok || have.Value() <= 0 || r.IntN(2) == 0 {
					delete(p.Spec.Containers[0].Resources.Requests, preemptGPU)
					p.Spec.Containers[0].Resources.Limits = nil
				} else {
					_ = g
				}
			}
			used += req
			sc.pods = append(sc.pods, p)
		}
	}
	// A finished pod is invisible to the scheduler.
	if len(sc.pods) > 0 && r.IntN(4) == 0 {
		sc.pods[r.IntN(len(sc.pods))].Status.Phase = corev1.PodSucceeded
	}
	prePrio := []int32{100, 1000, 1000, 1000, 10}[r.IntN(5)]
	// Nominated pods that already hold room.
	for range r.IntN(3) {
		if r.IntN(2) == 0 {
			continue
		}
		p := mkPod("", []int32{prePrio, prePrio + 1, 10}[r.IntN(3)])
		p.Status.NominatedNodeName = sc.nodes[r.IntN(len(sc.nodes))].Name
		sc.pods = append(sc.pods, p)
		features = append(features, "nominated")
	}
	for i, app := range preemptApps {
		if r.IntN(3) != 0 {
			continue
		}
		b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb-" + app, Namespace: "default"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &intstr.IntOrString{IntVal: 1},
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: int32(r.IntN(3))}}
		if i == 3 && r.IntN(2) == 0 {
			b.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nothing"}}
		}
		sc.pdbs = append(sc.pdbs, b)
		features = append(features, "pdb")
	}

	pre := mkPod("", prePrio)
	pre.Name, pre.UID = "preemptor", "uid-preemptor"
	pre.Status = corev1.PodStatus{Phase: corev1.PodPending}
	pre.Spec.Affinity = nil
	pre.Spec.Containers[0].Ports = nil
	pre.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(500+250*r.IntN(8)), resource.DecimalSI)
	if r.IntN(5) == 0 {
		pre.Spec.Containers[0].Resources.Requests[preemptGPU] = resource.MustParse("1")
		pre.Spec.Containers[0].Resources.Limits = corev1.ResourceList{preemptGPU: resource.MustParse("1")}
		features = append(features, "gpu")
	}
	if r.IntN(5) == 0 {
		pre.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		features = append(features, "hostport")
	}
	if r.IntN(5) == 0 {
		key := corev1.LabelHostname
		if r.IntN(3) == 0 {
			key = corev1.LabelTopologyZone
		}
		pre.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": preemptApps[r.IntN(len(preemptApps))]}}, TopologyKey: key}}}}
		features = append(features, "anti-affinity")
	}
	if r.IntN(8) == 0 {
		if pre.Spec.Affinity == nil {
			pre.Spec.Affinity = &corev1.Affinity{}
		}
		pre.Spec.Affinity.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": preemptApps[r.IntN(len(preemptApps))]}}, TopologyKey: corev1.LabelTopologyZone}}}
		features = append(features, "affinity")
	}
	if r.IntN(5) == 0 {
		key := corev1.LabelHostname
		if r.IntN(2) == 0 {
			key = corev1.LabelTopologyZone
		}
		c := corev1.TopologySpreadConstraint{MaxSkew: int32(1 + r.IntN(2)), TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": pre.Labels["app"]}}}
		if r.IntN(3) == 0 {
			md := int32(2 + r.IntN(3))
			c.MinDomains = &md
		}
		pre.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		features = append(features, "spread")
	}
	if r.IntN(5) == 0 {
		pre.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		features = append(features, "selector")
	}
	if r.IntN(6) == 0 {
		pre.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "infra", Effect: corev1.TaintEffectNoSchedule}}
		features = append(features, "toleration")
	}
	if r.IntN(12) == 0 {
		never := corev1.PreemptNever
		pre.Spec.PreemptionPolicy = &never
		features = append(features, "never")
	}
	if r.IntN(10) == 0 {
		// Nominated before, with a victim still terminating there.
		n := sc.nodes[r.IntN(len(sc.nodes))].Name
		pre.Status.NominatedNodeName = n
		for _, p := range sc.pods {
			if p.Spec.NodeName == n && *p.Spec.Priority < prePrio && r.IntN(2) == 0 {
				now := metav1.NewTime(preemptT0.Add(time.Hour))
				p.DeletionTimestamp = &now
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler}}
				break
			}
		}
		features = append(features, "renominated")
	}
	sc.preemptor = pre
	sc.what = fmt.Sprintf("%d nodes, %d pods, priority %d %v", nNodes, len(sc.pods), prePrio, features)
	return sc
}
