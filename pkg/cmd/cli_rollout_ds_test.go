package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

const rolloutDSFile = "../../examples/rollout-ds.yaml"

func rolloutDSArgs(args ...string) []string {
	return exampleArgs(rolloutDSFile, []string{"rollout", "ds/agent", "-n", "monitoring"}, "2026-02-01T00:00:00Z", args...)
}

// dsVariant writes the example with edit applied, and runs the same on it.
func dsVariant(edit func(items []map[string]any) []map[string]any, args ...string) func(*testing.T) []string {
	return exampleVariant(rolloutDSFile, []string{"rollout", "ds/agent", "-n", "monitoring"}, "2026-02-01T00:00:00Z", edit, args...)
}

func dsRollingUpdate(edit func(ru map[string]any)) func(map[string]any) {
	return func(d map[string]any) {
		us := d["spec"].(map[string]any)["updateStrategy"].(map[string]any)
		edit(us["rollingUpdate"].(map[string]any))
	}
}

// rolloutDSMatrix are the DaemonSet rollout's bad inputs.
func rolloutDSMatrix() []modeBadInput {
	// maxUnavailable 100% leaves no choice to map order: only the missing
	// ControllerRevisions make the --image answer uncertain.
	noRevisions := func(items []map[string]any) []map[string]any {
		items = dropKind("ControllerRevision")(items)
		return editKind("DaemonSet", dsRollingUpdate(func(ru map[string]any) { ru["maxUnavailable"] = "100%" }))(items)
	}
	return []modeBadInput{
		{"rollout ds: --resume", staticArgs(rolloutDSArgs("--resume")...), ExitUsage, []string{"cannot be paused"}},
		{"rollout ds: --image naming no container", staticArgs(rolloutDSArgs("--image", "nope=x")...), ExitUsage, []string{`"nope"`}},
		{"rollout ds: not found", staticArgs("rollout", "ds/nope", "-n", "monitoring", "-f", rolloutDSFile), ExitNotFound, []string{`"nope"`}},
		{"rollout ds: unknown updateStrategy", dsVariant(editKind("DaemonSet", func(d map[string]any) {
			d["spec"].(map[string]any)["updateStrategy"].(map[string]any)["type"] = "Surge"
		})), ExitUnsupported, []string{"Surge"}},
		{"rollout ds: negative maxSurge", dsVariant(editKind("DaemonSet", dsRollingUpdate(func(ru map[string]any) { ru["maxSurge"] = -1 }))), ExitBadFile, []string{"maxSurge"}},
		{"rollout ds: malformed maxUnavailable", dsVariant(editKind("DaemonSet", dsRollingUpdate(func(ru map[string]any) { ru["maxUnavailable"] = "two" }))), ExitBadFile, []string{"maxUnavailable"}},
		{"rollout ds: no nodes", dsVariant(dropKind("Node")), ExitBadFile, []string{"no Node"}},
		{"rollout ds: --image without ControllerRevisions", dsVariant(noRevisions, "--image", "agent=registry.example/agent:1.5", "--fail-if-uncertain"), ExitUncertain, []string{"--fail-if-uncertain"}},
	}
}

// examples/rollout-ds.yaml: 4 nodes, maxUnavailable 2, the pod on node-3
// not Ready, PDB minAvailable 3. Step 1 replaces node-3's pod whatever the
// budget (it counts against it from 1.28) and 1 of the 3 others, which
// Go map order picks (a contender group, 33% each); step 2 the 2 left.
// The budget breaks in both steps; a bad release costs 2 pods.
func TestRolloutDaemonSetExample(t *testing.T) {
	for _, width := range []int{80, 120} {
		defer func(w int) { cliWidth = w }(cliWidth)
		cliWidth = width
		r := cliRun(t, nil, nil, rolloutDSArgs()...)
		wantLayout(t, r, "layout_rollout_ds_"+map[int]string{80: "80", 120: "120"}[width], width)
	}
	p := rolloutDSJSON(t, cliRun(t, nil, nil, rolloutDSArgs("-o", "json")...))
	ro := p.Rollout
	if ro.Kind != "DaemonSet" || ro.Outcome != prediction.RolloutCompletes || len(ro.Steps) != 2 || len(p.Victims) != 4 || p.Certain {
		t.Fatalf("%+v victims %v certain %v", ro, p.Victims, p.Certain)
	}
	if s := ro.Steps[0]; s.Deleted[0] != "monitoring/agent-c8m3w" || len(s.Deleted) != 2 || s.Certain || !s.Budgets[0].Violated || s.AvailableMin != 2 {
		t.Fatalf("step 1: %+v", s)
	}
	if len(p.Contenders) != 1 || p.Contenders[0].Delete != 1 || len(p.Contenders[0].Pods) != 3 || !strings.Contains(p.Contenders[0].Reason, "Go map order") {
		t.Fatalf("contenders %+v", p.Contenders)
	}
	if f := ro.IfNewPodsFail; len(f.Deleted) != 2 || f.AvailableMin != 2 {
		t.Fatalf("%+v", f)
	}
	r := cliRun(t, nil, nil, rolloutDSArgs("-o", "name")...)
	if r.code != ExitOK || strings.Count(r.stdout, "pod/agent-") != 4 {
		t.Fatalf("%s", r)
	}
	// The files' ControllerRevision has the template: --image to the same
	// image changes nothing.
	p = rolloutDSJSON(t, cliRun(t, nil, nil, rolloutDSArgs("-o", "json", "--image", "agent=registry.example/agent:1.4")...))
	if p.Rollout.Outcome != prediction.RolloutNotStarted || !p.Certain {
		t.Fatalf("--image to the same template: %+v", p.Rollout)
	}
}

func rolloutDSJSON(t *testing.T, r cliResult) prediction.Prediction {
	t.Helper()
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Live: the DaemonSet and its ControllerRevisions listed from the API; an
// --image back to the revision's template leaves nothing to do.
func TestRolloutDaemonSetLive(t *testing.T) {
	objs := fileObjects(t, rolloutDSFile, "monitoring")
	args := []string{"rollout", "ds/agent", "-n", "monitoring", "--kube-version", "1.37", "--now", "2026-02-01T00:00:00Z", "-o", "json"}
	p := rolloutDSJSON(t, cliRun(t, fake.NewClientset(objs...), nil, args...))
	if p.Rollout.Outcome != prediction.RolloutCompletes || len(p.Victims) != 4 {
		t.Fatalf("restart: %+v", p.Rollout)
	}
	p = rolloutDSJSON(t, cliRun(t, fake.NewClientset(objs...), nil, append(args, "--image", "agent=registry.example/agent:1.4")...))
	if p.Rollout.Outcome != prediction.RolloutNotStarted || len(p.Victims) != 0 || !p.Certain {
		t.Fatalf("--image to the same template: %+v", p.Rollout)
	}
}
