package rollout

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// A 2,000-pod Deployment at 25%/25% over 100 nodes, restarted.
func BenchmarkRollout2000(b *testing.B) {
	var nodes []*corev1.Node
	for i := range 100 {
		nodes = append(nodes, node(fmt.Sprintf("n%03d", i), "64"))
	}
	in := fixture(2000, "25%", "25%", nodes...)
	b.ResetTimer()
	for range b.N {
		if _, err := Predict(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRolloutLargeCluster restarts app-00 (5,000 pods at 25%/25%,
// one on each node) on issue 34's cluster: 5,000 full nodes, 150,000
// pods, a budget per Deployment (-short: 200 nodes).
func BenchmarkRolloutLargeCluster(b *testing.B) {
	spec := sourcetest.ClusterSize
	if testing.Short() {
		spec.Nodes = 200
	}
	c := sourcetest.Cluster(spec)
	var d *appsv1.Deployment
	for _, x := range c.Deployments {
		if x.Name == "app-00" {
			d = x
		}
	}
	in := Input{Deployment: d, ReplicaSets: c.ReplicaSets, Pods: c.Pods, Nodes: c.Nodes, PDBs: c.PDBs,
		Workloads: disruption.Workloads{Deployments: c.Deployments, ReplicaSets: c.ReplicaSets},
		Change:    Change{Kind: ChangeRestart}, Rules: rules.Defaults(rules.Newest), Scheduler: rules.Scheduler(rules.Newest, nil), Now: sourcetest.Now}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Predict(in)
		if err != nil || len(res.Victims) != int(*d.Spec.Replicas) {
			b.Fatalf("%v: %d victims", err, len(res.Victims))
		}
	}
}
