package inprocess

// Reported nodes (testdata/eviction/NAME: objects.json, summary.json and
// configz.json, as kubectl get and get --raw print them) under the real
// 1.37 eviction manager, configured from the configz document as the
// kubelet that served it ran, judged against the plugin's own command.
// The manager runs live under -tags kubelet (eviction_case_kubelet_test.go)
// and is replayed from its recording otherwise (eviction_record_test.go).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
)

func TestEvictionCasesAgainstKubelet(t *testing.T) {
	t.Parallel()
	runs := 96
	if testing.Short() {
		runs = 16
	}
	for _, c := range []struct{ dir, node, now string }{
		{"eviction-no-hard-thresholds", "worker-800119", "2026-11-21T05:45:17Z"},
		{"eviction-tie-at-the-cut", "worker-800103", "2026-11-20T13:25:38Z"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", "eviction", c.dir)
			pred := evictCasePredict(t, dir, c.node, c.now)
			if pred.Signal != string(eviction.MemoryAvailable) && pred.Signal != string(eviction.AllocatableMemoryAvailable) {
				t.Fatalf("%s: the harness gives back only memory and processes, not disk; the plugin ranks for %s", dir, pred.Signal)
			}
			a, ok := evictKubeletCase(t, dir, c.node, runs)
			if !ok {
				return
			}
			evictCompareThresholds(t, dir, a.InForce, pred)
			tally := evictjudge.JudgeNamed(pred, evictOutcomes(t, a), dir, true, func(p string) string { return p }, t.Errorf)
			t.Logf("%s: %d runs; %d determined fates compared, %d probabilities judged, %d off beyond chance; victims %v", dir, runs, tally.Determined, tally.Judged, tally.Off, pred.Victims)
		})
	}
	t.Log(kubeletDone(t, sectionCases))
}

// evictCompareThresholds: the thresholds the plugin shows are the
// running kubelet's (inForce, as kubeletAnswer holds them).
func evictCompareThresholds(t *testing.T, what string, inForce []string, pred *eviction.Result) {
	t.Helper()
	var want, got []string
	for _, th := range inForce {
		want = append(want, evictSignalGrace(th))
	}
	for _, sg := range pred.Signals {
		for _, th := range sg.Thresholds {
			grace := time.Duration(0)
			if th.Kind == "soft" {
				grace, _ = time.ParseDuration(th.GracePeriod)
			}
			got = append(got, fmt.Sprintf("%s grace=%v", sg.Signal, grace))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("%s: the kubelet's thresholds %v, the plugin's %v", what, want, got)
	}
}

// evictCasePredict runs the plugin's command on the files, as a user does.
func evictCasePredict(t *testing.T, dir, node, now string) *eviction.Result {
	t.Helper()
	bin := evictPluginBinary(t)
	args := []string{"node/" + node, "--now", now, "-o", "json"}
	for _, f := range []string{"objects.json", "summary.json", "configz.json"} {
		args = append(args, "-f", filepath.Join(dir, f))
	}
	var out, errOut bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil && c.ProcessState.ExitCode() != 8 {
		t.Fatalf("kubectl scale-preview %v: %v: %s", args, err, errOut.String())
	}
	var doc struct {
		Eviction *eviction.Result `json:"eviction"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Eviction == nil {
		t.Fatalf("kubectl scale-preview %v: no eviction in the output (%v)", args, err)
	}
	return doc.Eviction
}

var evictPlugin struct {
	once sync.Once
	path string
	err  error
}

// evictPluginBinary builds the plugin once per test binary (the root
// module's own dependencies, not this module's).
func evictPluginBinary(t *testing.T) string {
	t.Helper()
	evictPlugin.once.Do(func() {
		dir, err := os.MkdirTemp("", "evict-plugin-")
		if err != nil {
			evictPlugin.err = err
			return
		}
		evictPlugin.path = filepath.Join(dir, "kubectl-scale_preview")
		b := exec.Command("go", "build", "-o", evictPlugin.path, "./cmd/kubectl-scale_preview")
		b.Dir = filepath.Join("..", "..")
		if out, err := b.CombinedOutput(); err != nil {
			evictPlugin.err = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if evictPlugin.err != nil {
		t.Fatal(evictPlugin.err)
	}
	return evictPlugin.path
}
