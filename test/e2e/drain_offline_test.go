package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// drainRecorded is a TestDrainE2E scenario saved before its drain, with
// what the real kubectl drain did (each file's header says it).
type drainRecorded struct {
	name  string
	file  string
	args  []string
	check func(t *testing.T, p *drainPrediction)
}

// checkUnreadyBlocked: the real drain blocked on d18-n1, both pods remain.
func checkUnreadyBlocked(t *testing.T, p *drainPrediction) {
	n := p.Drain.Nodes[0]
	want := []string{"drain-18/web0-85bc59669c-f2w9m", "drain-18/web0-85bc59669c-tdfg7"}
	if boolOr(n.Certain, p.Certain) && (n.Outcome != "blocked" || !slices.Equal(sorted(n.Remaining), want) || len(n.Evicted) != 0) {
		t.Errorf("certain %s, evicted %v, remaining %v; the real drain blocked with %v remaining", n.Outcome, n.Evicted, n.Remaining, want)
	}
}

var drainRecordedCases = []drainRecorded{{
	// Two never-Ready pods under a budget that needs all 4 healthy: the
	// real drain blocks on the node, both pods remain. The plugin looped
	// forever here: pkg/drain's becomeReady appends Ready=True after the
	// pod's Ready=False, the first condition still wins, and every round
	// "changes" something. Counting --timeout's retries bounds the loop;
	// without --timeout (kubectl's default) it still never returned.
	name: "unready-under-full-budget", file: "testdata/drain-unready-under-full-budget.yaml",
	args:  []string{"d18-n1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=24s"},
	check: checkUnreadyBlocked,
}, {
	name: "unready-under-full-budget-no-timeout", file: "testdata/drain-unready-under-full-budget.yaml",
	args:  []string{"d18-n1", "--ignore-daemonsets", "--delete-emptydir-data"},
	check: checkUnreadyBlocked,
}, {
	// The Job controller replaces an evicted pod only after its back-off
	// (10 s, pkg/controller/job: isPodFailed counts the deleted pod as
	// failed), so web0's replacement takes d23-n3's room first.
	name: "job-backoff", file: "testdata/drain-job-backoff.yaml",
	args: []string{"d23-n1", "d23-n2", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=24s"},
	check: func(t *testing.T, p *drainPrediction) {
		for _, r := range p.Drain.Replacements {
			if !p.Certain {
				break
			}
			switch {
			case r.For == "drain-23/web0-85bc59669c-j64zk" && r.Node != "d23-n3":
				t.Errorf("certain: %s's replacement on %q; the real one went to d23-n3", r.For, r.Node)
			case strings.HasPrefix(r.For, "drain-23/batch-") && (r.Node != "" || len(r.Candidates) > 0):
				t.Errorf("certain: the Job's replacement placed (%q, %v); the real one fit nowhere after its back-off", r.Node, r.Candidates)
			}
		}
	},
}, {
	// Three deletions at once: which replacements fit on d9-n3 is a race.
	name: "parallel-race", file: "testdata/drain-parallel-race.yaml",
	args: []string{"d9-n1", "d9-n2", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--disable-eviction", "--timeout=18s"},
	check: func(t *testing.T, p *drainPrediction) {
		if p.Certain {
			var placed []string
			for _, r := range p.Drain.Replacements {
				placed = append(placed, r.For+"->"+r.Node)
			}
			t.Errorf("certain, with replacements %v; the real drain placed web1's once and web2's once", placed)
		}
		// Each of d9-n1's three replacements got d9-n3 in some real run
		// and fit nowhere in another (web0's: not seen, but the branches
		// where it comes last): every branch lists both.
		for _, r := range p.Drain.Replacements {
			if !strings.Contains(r.For, "-m4rbr") && !strings.Contains(r.For, "-glzkr") && !strings.Contains(r.For, "-vlxgv") {
				continue
			}
			var nodes []string
			for _, pl := range r.Placements {
				nodes = append(nodes, pl.Node)
			}
			if !slices.Contains(nodes, "d9-n3") || !slices.Contains(nodes, "") {
				t.Errorf("replacement of %s: placements %q; the race gives it d9-n3 or nowhere", r.For, nodes)
			}
		}
	},
}, {
	// web0's lone pod never becomes Ready; the snapshot cannot tell. The
	// plugin assumed it Ready by the time d8-n1 gave up, so pdb-web0
	// (maxUnavailable 0) blocked it for certain; the real drain evicted it
	// (AlwaysAllow lets an unready pod go).
	name: "starting-pod-always-allow", file: "testdata/drain-starting-pod-always-allow.yaml",
	args: []string{"d8-n1", "d8-n3", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--grace-period=1", "--timeout=18s"},
	check: func(t *testing.T, p *drainPrediction) {
		if len(p.Drain.Nodes) != 2 {
			t.Fatalf("nodes %+v", p.Drain.Nodes)
		}
		if n := p.Drain.Nodes[1]; boolOr(n.Certain, p.Certain) && (n.Outcome != "drained" || !slices.Equal(n.Evicted, []string{"drain-8/web0-6d6ddd4998-k7bkv"})) {
			t.Errorf("certain %s, evicted %v; the real drain evicted web0's pod", n.Outcome, n.Evicted)
		}
	},
}}

// TestDrainOfflineRecorded repeats, offline with -f, drain scenarios that
// TestDrainE2E found wrong, against the real kubectl drain's outcome.
func TestDrainOfflineRecorded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if why := drainPluginMissing(ctx); why != "" {
		needPlugin(t)
		t.Skip(why)
	}
	for _, c := range drainRecordedCases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"drain"}, c.args...)
			run, err := runPlugin(ctx, env.pluginPath, append(args, "-f", c.file, "-o", "json")...)
			if err != nil || run.exitCode != 0 {
				t.Fatalf("plugin: %v %v", err, run)
			}
			p, err := parseDrainPrediction(run.stdout)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Drain.Nodes) == 0 {
				t.Fatalf("no nodes in %s", firstLines(run.stdout, 20))
			}
			c.check(t, p)
			t.Logf("plugin in %s: certain %v", run.duration.Round(time.Millisecond), p.Certain)
		})
	}
}
