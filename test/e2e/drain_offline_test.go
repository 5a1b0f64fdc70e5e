package e2e

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestDrainOfflineRecorded repeats, offline with -f, drain scenarios that
// TestDrainE2E found wrong, against the real kubectl drain's recorded
// outcome (see each file's header).
func TestDrainOfflineRecorded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if why := drainPluginMissing(ctx); why != "" {
		needPlugin(t)
		t.Skip(why)
	}
	// Two never-Ready pods under a budget that needs all 4 healthy: the
	// real drain blocks on the node, both pods remain. The plugin once
	// looped forever here (its model appended a second Ready condition to
	// a pod that already had Ready=False, so the pod never counted as
	// Ready and every round "changed" something).
	run, err := runPlugin(ctx, env.pluginPath, "drain", "d18-n1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=24s",
		"-f", "testdata/drain-unready-under-full-budget.yaml", "-o", "json")
	if err != nil || run.exitCode != 0 {
		t.Fatalf("plugin: %v %v", err, run)
	}
	p, err := parseDrainPrediction(run.stdout)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Drain.Nodes) != 1 {
		t.Fatalf("want one node, got %+v", p.Drain.Nodes)
	}
	n := p.Drain.Nodes[0]
	want := []string{"drain-18/web0-85bc59669c-f2w9m", "drain-18/web0-85bc59669c-tdfg7"}
	if boolOr(n.Certain, p.Certain) && (n.Outcome != "blocked" || !slices.Equal(sorted(n.Remaining), want) || len(n.Evicted) != 0) {
		t.Errorf("certain %s, evicted %v, remaining %v; the real drain blocked with %v remaining", n.Outcome, n.Evicted, n.Remaining, want)
	}
	t.Logf("plugin in %s: %s (certain %v)", run.duration.Round(time.Millisecond), n.Outcome, boolOr(n.Certain, p.Certain))
}
