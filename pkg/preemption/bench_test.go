package preemption

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// benchCluster: nodes of 4 CPUs in 3 zones, each full with 30 pods of
// priorities 0-100, and a pending pod of priority 1000 that needs 1 CPU.
func benchCluster(nodes int) Input {
	r := rand.New(rand.NewPCG(1, 2))
	in := Input{Rules: rules.Scheduler(rules.Newest, nil)}
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		in.Nodes = append(in.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname: name, corev1.LabelTopologyZone: fmt.Sprintf("z%d", i%3)}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"),
				corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}}})
		for j := range 30 {
			prio := int32(r.IntN(5) * 25)
			st := metav1.NewTime(time.Date(2026, 1, 1, 0, r.IntN(600), j, 0, time.UTC))
			in.Pods = append(in.Pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%05d-%02d", i, j), Namespace: "default",
				UID: types.UID(fmt.Sprintf("%d-%d", i, j)), Labels: map[string]string{"app": fmt.Sprint("a", j%5)}},
				Spec: corev1.PodSpec{NodeName: name, Priority: &prio, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(int64(100+r.IntN(30)), resource.DecimalSI)}}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &st}})
		}
	}
	prio := int32(1000)
	in.Preemptor = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "default", UID: "pending"},
		Spec: corev1.PodSpec{Priority: &prio, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	return in
}

func benchmarkPredict(b *testing.B, nodes int) {
	in := benchCluster(nodes)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Predict(in)
		if err != nil || len(res.Outcomes) == 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

func BenchmarkPredict500Nodes(b *testing.B)  { benchmarkPredict(b, 500) }
func BenchmarkPredict5000Nodes(b *testing.B) { benchmarkPredict(b, 5000) }

// BenchmarkPredictLargeCluster predicts issue 34's pending pod on its
// cluster: 5,000 identical full nodes, 150,000 pods (-short: 200 nodes),
// pods whole, as generated.
func BenchmarkPredictLargeCluster(b *testing.B) {
	spec := sourcetest.ClusterSize
	if testing.Short() {
		spec.Nodes = 200
	}
	c := sourcetest.Cluster(spec)
	in := Input{Rules: rules.Scheduler(rules.Newest, nil), Nodes: c.Nodes, Pods: c.Pods, PDBs: c.PDBs, Preemptor: c.Pods[len(c.Pods)-1]}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Predict(in)
		if err != nil || len(res.Outcomes) != spec.Nodes {
			b.Fatalf("%v: %d outcomes", err, len(res.Outcomes))
		}
	}
}
