package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

const rolloutFile = "../../examples/rollout-deploy.yaml"

func rolloutArgs(args ...string) []string {
	return append([]string{"rollout", "deploy/api", "-n", "shop", "-f", rolloutFile, "--now", "2026-01-02T00:00:00Z"}, args...)
}

// rolloutVariant writes the example with edit applied and runs rollout on it.
func rolloutVariant(edit func(items []map[string]any) []map[string]any, args ...string) func(*testing.T) []string {
	return func(t *testing.T) []string {
		t.Helper()
		var list struct {
			APIVersion string           `json:"apiVersion"`
			Kind       string           `json:"kind"`
			Items      []map[string]any `json:"items"`
		}
		if err := yaml.Unmarshal([]byte(mustRead(t, rolloutFile)), &list); err != nil {
			t.Fatal(err)
		}
		list.Items = edit(list.Items)
		out, err := yaml.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "rollout.yaml")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return append([]string{"rollout", "deploy/api", "-n", "shop", "-f", path, "--now", "2026-01-02T00:00:00Z"}, args...)
	}
}

func negativeSurge(d map[string]any) {
	d["spec"].(map[string]any)["strategy"].(map[string]any)["rollingUpdate"].(map[string]any)["maxSurge"] = -1
}

// rolloutMatrix are the rollout's bad inputs (TestBadInputMatrix runs them).
func rolloutMatrix() []struct {
	name  string
	args  func(*testing.T) []string
	code  int
	words []string
} {
	static := func(args ...string) func(*testing.T) []string { return func(*testing.T) []string { return args } }
	return []struct {
		name  string
		args  func(*testing.T) []string
		code  int
		words []string
	}{
		{"rollout: a Job", static("rollout", "job/x", "-f", rolloutFile), ExitUnsupported, []string{"has no rollout"}},
		{"rollout: a bare ReplicaSet", static("rollout", "rs/api-6b8f", "-f", rolloutFile), ExitUnsupported, []string{"has no rollout"}},
		{"rollout: --image naming no container", static(rolloutArgs("--image", "nope=x")...), ExitUsage, []string{`"nope"`}},
		{"rollout: --image without =", static(rolloutArgs("--image", "x")...), ExitUsage, []string{"CONTAINER=IMAGE"}},
		{"rollout: --resume on a running Deployment", static(rolloutArgs("--resume")...), ExitUsage, []string{"not paused"}},
		{"rollout: ReplicaSets missing", rolloutVariant(dropKind("ReplicaSet")), ExitBadFile, []string{"ReplicaSet"}},
		{"rollout: negative maxSurge", rolloutVariant(editKind("Deployment", negativeSurge)), ExitBadFile, []string{"maxSurge"}},
		{"rollout: no nodes", rolloutVariant(dropKind("Node")), ExitBadFile, []string{"no Node"}},
		{"rollout: not found", static("rollout", "deploy/nope", "-n", "shop", "-f", rolloutFile), ExitNotFound, []string{`"nope"`}},
	}
}

// The example's table at 80 and 120 columns, and its JSON's answers.
func TestRolloutExample(t *testing.T) {
	for _, width := range []int{80, 120} {
		defer func(w int) { cliWidth = w }(cliWidth)
		cliWidth = width
		r := cliRun(t, nil, nil, rolloutArgs()...)
		wantLayout(t, r, "layout_rollout_deploy_"+map[int]string{80: "80", 120: "120"}[width], width)
	}
	r := cliRun(t, nil, nil, rolloutArgs("-o", "json")...)
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	ro := p.Rollout
	// 6 replicas, 25%/25%: surge 2, unavailable 1. Step 1 deletes one old
	// pod (the most recently ready of node-1's three: R5 ties, R6 decides)
	// and breaks the minAvailable 6 budget.
	if ro.Outcome != prediction.RolloutCompletes || len(p.Victims) != 6 || ro.Steps[0].Deleted[0] != "shop/api-6b8f-c" || !ro.Steps[0].Budgets[0].Violated {
		t.Fatalf("%+v", ro)
	}
	if strings.Join(ro.IfNewPodsFail.Deleted, ",") != "shop/api-6b8f-c" || ro.IfNewPodsFail.AvailableMin != 5 {
		t.Fatalf("%+v", ro.IfNewPodsFail)
	}
	r = cliRun(t, nil, nil, rolloutArgs("-o", "name")...)
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "pod/api-6b8f-c\n") {
		t.Fatalf("%s", r)
	}
}
