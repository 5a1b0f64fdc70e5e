package drain

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// BenchmarkPredictExample drains two nodes of examples/drain.yaml.
func BenchmarkPredictExample(b *testing.B) {
	cl, err := source.ReadClusterFiles([]string{"../../examples/drain.yaml"}, nil, "default")
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Nodes: cl.Nodes, Drain: []string{"node-1", "node-2"}, Pods: cl.Pods, PDBs: cl.PDBs, Workloads: cl.Workloads, Now: now,
		Scheduler: rules.Scheduler(rules.Newest, nil), Disruption: rules.Disruption(rules.Newest, nil),
		OwnersRead: map[string]bool{"ReplicaSet": true, "Deployment": true, "DaemonSet": true}, Options: Options{GracePeriodSeconds: -1, IgnoreDaemonSets: true}}
	for b.Loop() {
		if _, err := Predict(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPredictLarge drains one node of 1,000 nodes and 30,000 pods
// (30 per node, 10 Deployments-worth of ReplicaSets, one budget each).
func BenchmarkPredictLarge(b *testing.B) {
	w := newWorld()
	for i := range 1000 {
		w.in.Nodes = append(w.in.Nodes, node(fmt.Sprintf("n%04d", i), "64"))
	}
	var sets []*appsv1.ReplicaSet
	for i := range 10 {
		sets = append(sets, w.rs(fmt.Sprintf("app%d", i), 3000, "100m"))
	}
	for i := range 30000 {
		w.pod(fmt.Sprintf("p%05d", i), fmt.Sprintf("n%04d", i%1000), sets[i%10], "ReplicaSet", true)
	}
	for i := range 10 {
		w.pdb(fmt.Sprintf("app%d", i), nil, intOr(100))
	}
	w.in.Drain = []string{"n0000"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Predict(w.in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPredictLargeCluster drains node-00000 of issue 34's cluster:
// 5,000 full nodes, 150,000 pods, a budget per Deployment (-short: 200
// nodes); pods whole, as generated.
func BenchmarkPredictLargeCluster(b *testing.B) {
	spec := sourcetest.ClusterSize
	if testing.Short() {
		spec.Nodes = 200
	}
	c := sourcetest.Cluster(spec)
	in := Input{Nodes: c.Nodes, Drain: []string{"node-00000"}, Pods: c.Pods, PDBs: c.PDBs, Now: sourcetest.Now,
		Workloads: disruption.Workloads{Deployments: c.Deployments, ReplicaSets: c.ReplicaSets},
		Scheduler: rules.Scheduler(rules.Newest, nil), Disruption: rules.Disruption(rules.Newest, nil),
		OwnersRead: map[string]bool{"ReplicaSet": true, "Deployment": true, "DaemonSet": true}, Options: Options{GracePeriodSeconds: -1, IgnoreDaemonSets: true}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Predict(in)
		if err != nil || len(res.Victims) != sourcetest.ClusterApps {
			b.Fatalf("%v: %d victims", err, len(res.Victims))
		}
	}
}
