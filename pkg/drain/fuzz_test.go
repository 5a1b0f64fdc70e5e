package drain

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// FuzzDrain reads arbitrary files as the drain does and drains the
// first nodes: no input may panic or loop.
func FuzzDrain(f *testing.F) {
	seed, err := os.ReadFile("../../examples/drain.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, uint8(0))
	f.Add([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec: {nodeName: a}\n"), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		path := filepath.Join(t.TempDir(), "in.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cl, err := source.ReadClusterFiles([]string{path}, nil, "default")
		if err != nil || len(cl.Nodes) == 0 {
			return
		}
		in := Input{Nodes: cl.Nodes, Pods: cl.Pods, PDBs: cl.PDBs, Workloads: cl.Workloads, Now: now,
			Scheduler: rules.Scheduler(rules.Newest, nil), Disruption: rules.Disruption(rules.Newest, nil), OwnersRead: map[string]bool{},
			Options: Options{GracePeriodSeconds: -1, Force: flags&1 != 0, IgnoreDaemonSets: flags&2 != 0, DeleteEmptyDirData: flags&4 != 0,
				DisableEviction: flags&8 != 0, Timeout: time.Duration(flags&16) * time.Second}}
		for i, n := range cl.Nodes {
			if i == 3 {
				break
			}
			in.Drain = append(in.Drain, n.Name)
		}
		_, _ = Predict(in)
	})
}
