package cmd

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// alikeCluster is issue 40's 5,000-node cluster in small: 120 alike nodes
// (so the scheduler samples 100 from a random offset, as it samples 500
// there), 360 Deployments, and on each node the 6 batch pods it loses
// belong to other Deployments than on the node before (12 sets of owners;
// 100 there). Each Deployment has 10 pods, so its budget allows one
// disruption and no victim breaks a budget, as there.
var alikeCluster = sourcetest.ClusterSpec{Nodes: 120, AppsPerClass: 120}

func writeAlikeCluster(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := sourcetest.WriteClusterJSON(f, alikeCluster); err != nil {
		t.Fatal(err)
	}
	return path
}

// Alike nodes whose victims differ only in their Deployments print as one
// section, short enough to read (the drain of the 5,000-node cluster is
// about 60 lines); -o wide prints each set of owners and every node; the
// JSON still lists every outcome.
func TestPodPreemptionAlikeNodesGrouped(t *testing.T) {
	file := writeAlikeCluster(t)
	args := []string{"-f", file, "pod/" + sourcetest.PendingPod, "-n", sourcetest.ClusterNamespace}
	r := cliRun(t, nil, nil, args...)
	wantLayout(t, r, "preemption_alike_nodes", 120)
	if n := strings.Count(r.stdout, "\n"); n > 60 {
		t.Errorf("%d lines, want at most 60", n)
	}
	if strings.Count(r.stdout, "NOMINATED NODE") != 1 {
		t.Errorf("want one section for the alike nodes:\n%s", r.stdout)
	}

	r = cliRun(t, nil, nil, append(args, "-o", "wide")...)
	wantExit(t, r, ExitOK)
	if got := strings.Count(r.stdout, "  On node-"); got != 12 {
		t.Errorf("-o wide prints %d sets of owners, want 12", got)
	}
	for i := range alikeCluster.Nodes {
		if node := fmt.Sprintf("node-%05d", i); !strings.Contains(r.stdout, node) {
			t.Errorf("-o wide does not name %s", node)
		}
	}
	if strings.Contains(r.stdout, "more") {
		t.Errorf("-o wide leaves something out:\n%s", r.stdout)
	}

	r = cliRun(t, nil, nil, append(args, "-o", "json")...)
	wantExit(t, r, ExitOK)
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, o := range p.Preemption.Outcomes {
		sum += o.Probability
		if len(o.Victims) != 6 || o.PDBViolations != 0 {
			t.Errorf("%s: %d victims, %d violations; want 6 and 0", o.Node, len(o.Victims), o.PDBViolations)
		}
	}
	if len(p.Preemption.Outcomes) != alikeCluster.Nodes || math.Abs(sum-1) > 1e-9 {
		t.Errorf("JSON: %d outcomes summing to %v, want %d summing to 1", len(p.Preemption.Outcomes), sum, alikeCluster.Nodes)
	}
}
