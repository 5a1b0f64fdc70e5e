package outage

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// BenchmarkZoneOfLargeCluster fails a third of issue 34's cluster (5,000
// full nodes, 150,000 pods, a budget per Deployment; -short: 200 nodes):
// the zone of 1,667 nodes and 50,000 pods the issue measures.
func BenchmarkZoneOfLargeCluster(b *testing.B) {
	spec := sourcetest.ClusterSize
	if testing.Short() {
		spec.Nodes = 200
	}
	c := sourcetest.Cluster(spec)
	shared := map[string]map[string]string{} // pods of one app share one map of labels, as once read (pkg/source)
	for _, p := range c.Pods {
		k := fmt.Sprint(p.Namespace, p.Labels)
		if shared[k] == nil {
			shared[k] = p.Labels
		}
		p.Labels = shared[k]
	}
	zones := []string{"zone-a", "zone-b", "zone-c"}
	var failed []string
	for i, n := range c.Nodes {
		n.Labels[corev1.LabelTopologyZone] = zones[i*3/len(c.Nodes)]
		if i*3/len(c.Nodes) == 0 {
			failed = append(failed, n.Name)
		}
	}
	in := Input{Nodes: c.Nodes, Failed: failed, Pods: c.Pods, PDBs: c.PDBs, Now: sourcetest.Now,
		Workloads: disruption.Workloads{Deployments: c.Deployments, ReplicaSets: c.ReplicaSets},
		Scheduler: rules.Scheduler(rules.Newest, nil), Settings: Settings{Condition: ConditionUnreachable, OutageRules: rules.Outage(rules.Newest)},
		OwnersRead: map[string]bool{"ReplicaSet": true, "Deployment": true, "DaemonSet": true}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Predict(in)
		if err != nil || len(res.Nodes) != len(failed) {
			b.Fatalf("%v: %d nodes", err, len(res.Nodes))
		}
	}
}
