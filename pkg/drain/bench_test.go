package drain

import (
	"testing"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
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
