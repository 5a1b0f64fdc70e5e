package sourcetest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The large cluster of issue 34: identical nodes of 4 CPUs, each full with
// the same apps' pods, and a pending pod that must preempt.
const (
	// ClusterNamespace holds every app and the pending pod.
	ClusterNamespace = "apps"
	// PendingPod is the pending pod of priority class "critical" that
	// needs 1 CPU: on every node it preempts the 6 lowest-priority pods.
	PendingPod = "urgent"
	// ClusterApps is how many pods each node holds, one per slot; with the
	// default ClusterSpec.AppsPerClass also how many Deployments there are,
	// each with one pod on every node (pod j of a node belongs to app j).
	ClusterApps = 30
)

// ClusterSize is the snapshot: 5,000 nodes, 150,000 pods.
var ClusterSize = ClusterSpec{Nodes: 5000}

// ClusterSpec sizes the cluster: Nodes identical nodes with ClusterApps
// pods each, 10 of each priority class.
type ClusterSpec struct {
	Nodes int
	// AppsPerClass is how many Deployments each priority class has (0: 10,
	// one per slot, so every node holds the same 30 apps). With more, slot
	// s of a class on node i holds app (10i+s) mod AppsPerClass of that
	// class: nodes stay alike but their victims belong to other
	// Deployments (issue 40's 5,000 nodes with 1,000 apps per class).
	AppsPerClass int
	// Zones splits the nodes into that many zones in node order (node i in
	// zone region-1 plus letter i*Zones/Nodes: region-1a, region-1b, ...),
	// for issue 42's outage of a zone. 0 or 1: every node in region-1a.
	Zones int
}

// Zone is node i's zone label.
func (s ClusterSpec) Zone(i int) string {
	z := 0
	if s.Zones > 1 {
		z = i * s.Zones / s.Nodes
	}
	return "region-1" + string(rune('a'+z))
}

// Pods is how many pods are bound to the nodes.
func (s ClusterSpec) Pods() int { return s.Nodes * ClusterApps }

func (s ClusterSpec) perClass() int { return max(s.AppsPerClass, 10) }

// apps is how many Deployments there are.
func (s ClusterSpec) apps() int { return 3 * s.perClass() }

// slotApp is the app of slot j (0 to ClusterApps-1) on node i.
func (s ClusterSpec) slotApp(i, j int) int {
	class, a := j/10, s.perClass()
	return class*a + (10*i+j%10)%a
}

// replicas is how many pods app has: 10i+s covers 0 to 10·Nodes-1 once.
func (s ClusterSpec) replicas(app int) int32 {
	k := app % s.perClass()
	if k >= 10*s.Nodes {
		return 0
	}
	return int32((10*s.Nodes-1-k)/s.perClass() + 1)
}

var classes = []struct {
	name  string
	value int32
}{{"batch", 0}, {"standard", 1000}, {"important", 100000}, {"critical", 1000000}}

// appClass: with 10 apps per class, apps 0-9 are batch, 10-19 standard,
// 20-29 important.
func (s ClusterSpec) appClass(app int) int { return app / s.perClass() }

func appName(app int) string   { return fmt.Sprintf("app-%02d", app) }
func appHash(app int) string   { return fmt.Sprintf("%08x", 0x5f3c9a00+app) }
func nodeName(node int) string { return fmt.Sprintf("node-%05d", node) }

// EachClusterObject calls fn with every object of the cluster, in the
// order `kubectl get namespaces,priorityclasses,nodes,deployments,
// replicasets,poddisruptionbudgets,pods -A -o json` lists them. Objects
// are made one at a time, so that writing a large cluster holds none.
func EachClusterObject(spec ClusterSpec, fn func(runtime.Object) error) error {
	for _, ns := range []string{"default", ClusterNamespace} {
		if err := fn(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, UID: uid("ns", 0, len(ns)), Labels: map[string]string{corev1.LabelMetadataName: ns},
				CreationTimestamp: metav1.NewTime(Now.Add(-365 * 24 * time.Hour))},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}); err != nil {
			return err
		}
	}
	for _, c := range classes {
		if err := fn(&schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: c.name, UID: uid("pc", 0, int(c.value))}, Value: c.value}); err != nil {
			return err
		}
	}
	for i := range spec.Nodes {
		if err := fn(clusterNode(i, spec.Zone(i))); err != nil {
			return err
		}
	}
	for app := range spec.apps() {
		d, rs, pdb := appObjects(spec, app)
		for _, o := range []runtime.Object{d, rs, pdb} {
			if err := fn(o); err != nil {
				return err
			}
		}
	}
	for i := range spec.Nodes {
		for j := range ClusterApps {
			if err := fn(clusterPod(spec, i, spec.slotApp(i, j))); err != nil {
				return err
			}
		}
	}
	return fn(pendingPod())
}

func uid(kind string, i, j int) types.UID {
	h := 0
	for _, c := range kind {
		h = h*31 + int(c)
	}
	return types.UID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", h&0xffffffff, j&0xffff, i>>12&0xfff, i&0xfff, i*7919+j))
}

// clusterNode is one of the identical nodes, in zone, 4 CPUs, 16 GiB.
func clusterNode(i int, zone string) *corev1.Node {
	name := nodeName(i)
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	ts := metav1.NewTime(Now.Add(-30 * 24 * time.Hour))
	return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid("node", i, 0), ResourceVersion: fmt.Sprint(5000 + i), CreationTimestamp: ts,
			Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
				corev1.LabelInstanceTypeStable: "standard-4", corev1.LabelTopologyRegion: "region-1", corev1.LabelTopologyZone: zone}},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24", ProviderID: "example://" + name},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: ts, LastTransitionTime: ts, Reason: "KubeletHasSufficientMemory"},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: ts, LastTransitionTime: ts, Reason: "KubeletHasNoDiskPressure"},
				{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: ts, LastTransitionTime: ts, Reason: "KubeletHasSufficientPID"},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: ts, LastTransitionTime: ts, Reason: "KubeletReady"}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)},
				{Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.1", ContainerRuntimeVersion: "containerd://2.1.4",
				OperatingSystem: "linux", Architecture: "amd64", OSImage: "Debian GNU/Linux 13 (trixie)", KernelVersion: "6.12.48"}}}
}

// appObjects is app's Deployment, ReplicaSet (one replica per node) and a
// PodDisruptionBudget allowing 10% unavailable.
func appObjects(spec ClusterSpec, app int) (*appsv1.Deployment, *appsv1.ReplicaSet, *policyv1.PodDisruptionBudget) {
	name, n := appName(app), spec.replicas(app)
	sel := map[string]string{"app": name}
	created := metav1.NewTime(Now.Add(-30 * 24 * time.Hour))
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ClusterNamespace, UID: uid("deploy", app, 0), Generation: 1, CreationTimestamp: created},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: appPodSpec(spec, app)}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: n, ReadyReplicas: n, AvailableReplicas: n, UpdatedReplicas: n}}
	rsLabels := map[string]string{"app": name, "pod-template-hash": appHash(app)}
	rs := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + appHash(app), Namespace: ClusterNamespace, UID: uid("rs", app, 0), Labels: rsLabels,
			Generation: 1, CreationTimestamp: created,
			Annotations:     map[string]string{"deployment.kubernetes.io/desired-replicas": fmt.Sprint(n), "deployment.kubernetes.io/revision": "1"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels}, Spec: appPodSpec(spec, app)}},
		Status: appsv1.ReplicaSetStatus{Replicas: n, ReadyReplicas: n, AvailableReplicas: n, FullyLabeledReplicas: n, ObservedGeneration: 1}}
	unavailable := intstr.FromString("10%")
	allowed := n / 10
	pdb := &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ClusterNamespace, UID: uid("pdb", app, 0), Generation: 1, CreationTimestamp: created},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &unavailable, Selector: &metav1.LabelSelector{MatchLabels: sel}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, CurrentHealthy: n,
			DesiredHealthy: n - allowed, ExpectedPods: n}}
	return d, rs, pdb
}

// appPodSpec: every pod requests 125m CPU, so a node's 30 pods leave 250m
// free and the pending pod's 1 CPU needs 6 of them gone. The pods are
// lean (about 780 bytes of JSON each: 123 MB for 150,000 pods, near the
// issue's 104 MB): what the API server fills in by default is left out.
func appPodSpec(spec ClusterSpec, app int) corev1.PodSpec {
	grace := int64(30)
	return corev1.PodSpec{
		Containers: []corev1.Container{{Name: "main", Image: "example.com/" + appName(app) + ":1.4",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("125m"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
		TerminationGracePeriodSeconds: &grace, PriorityClassName: classes[spec.appClass(app)].name,
	}
}

// clusterPod is app's pod on node i. The pods of one priority on a node
// started in the same second (the node came up with them), so the
// scheduler's choice among them depends on its cache order.
func clusterPod(spec ClusterSpec, i, app int) *corev1.Pod {
	rs := appName(app) + "-" + appHash(app)
	started := metav1.NewTime(Now.Add(-30*24*time.Hour + time.Duration(spec.appClass(app))*time.Minute))
	prio := classes[spec.appClass(app)].value
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", rs, i), Namespace: ClusterNamespace, UID: uid("pod", i, app),
			CreationTimestamp: started, Labels: map[string]string{"app": appName(app), "pod-template-hash": appHash(app)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: uid("rs", app, 0),
				Controller: ptrTo(true)}}},
		Spec: appPodSpec(spec, app),
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}}}
	p.Spec.NodeName = nodeName(i)
	p.Spec.Priority = &prio
	return p
}

// pendingPod: priority class critical, 1 CPU, admitted and unschedulable.
func pendingPod() *corev1.Pod {
	prio := classes[3].value
	policy := corev1.PreemptLowerPriority
	created := metav1.NewTime(Now.Add(-time.Minute))
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: PendingPod, Namespace: ClusterNamespace, UID: uid("pod", 0, 999), CreationTimestamp: created,
			Labels: map[string]string{"app": PendingPod}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/urgent:1.0",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"),
				corev1.ResourceMemory: resource.MustParse("1Gi")}}}},
			RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: corev1.DefaultSchedulerName,
			PriorityClassName: "critical", Priority: &prio, PreemptionPolicy: &policy},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/5000 nodes are available: 5000 Insufficient cpu.", LastTransitionTime: created}}}}
}

func ptrTo[T any](v T) *T { return &v }

// WriteClusterJSON writes the cluster as one v1 List, one item per line.
func WriteClusterJSON(w io.Writer, spec ClusterSpec) error {
	bw := bufio.NewWriterSize(w, 1<<20) // keeps the first write error for Flush
	_, _ = bw.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")
	first := true
	err := EachClusterObject(spec, func(o runtime.Object) error {
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		if !first {
			_, _ = bw.WriteString(",\n")
		}
		first = false
		_, _ = bw.Write(b)
		return nil
	})
	if err != nil {
		return err
	}
	_, _ = bw.WriteString("\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	return bw.Flush()
}

// ClusterObjects are the cluster's objects by kind, whole (as generated,
// not as a reader trims them).
type ClusterObjects struct {
	Nodes       []*corev1.Node
	Pods        []*corev1.Pod // the pending pod last
	PDBs        []*policyv1.PodDisruptionBudget
	Deployments []*appsv1.Deployment
	ReplicaSets []*appsv1.ReplicaSet
}

// Cluster makes every object of the cluster.
func Cluster(spec ClusterSpec) *ClusterObjects {
	c := &ClusterObjects{}
	_ = EachClusterObject(spec, func(o runtime.Object) error {
		switch o := o.(type) {
		case *corev1.Node:
			c.Nodes = append(c.Nodes, o)
		case *corev1.Pod:
			c.Pods = append(c.Pods, o)
		case *policyv1.PodDisruptionBudget:
			c.PDBs = append(c.PDBs, o)
		case *appsv1.Deployment:
			c.Deployments = append(c.Deployments, o)
		case *appsv1.ReplicaSet:
			c.ReplicaSets = append(c.ReplicaSets, o)
		}
		return nil
	})
	return c
}
