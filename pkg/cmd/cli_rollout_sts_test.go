package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/source"
)

const rolloutSTSFile = "../../examples/rollout-sts.yaml"

func rolloutSTSArgs(args ...string) []string {
	return exampleArgs(rolloutSTSFile, []string{"rollout", "sts/db", "-n", "shop"}, "2026-02-01T00:00:00Z", args...)
}

// stsVariant writes the example with edit applied, and runs the same on it.
func stsVariant(edit func(items []map[string]any) []map[string]any, args ...string) func(*testing.T) []string {
	return exampleVariant(rolloutSTSFile, []string{"rollout", "sts/db", "-n", "shop"}, "2026-02-01T00:00:00Z", edit, args...)
}

func stsStrategy(edit func(us map[string]any)) func(map[string]any) {
	return func(s map[string]any) { edit(s["spec"].(map[string]any)["updateStrategy"].(map[string]any)) }
}

// rolloutSTSMatrix are the StatefulSet rollout's bad inputs.
func rolloutSTSMatrix() []modeBadInput {
	return []modeBadInput{
		{"rollout sts: --resume", staticArgs(rolloutSTSArgs("--resume")...), ExitUsage, []string{"cannot be paused"}},
		{"rollout sts: --image naming no container", staticArgs(rolloutSTSArgs("--image", "nope=x")...), ExitUsage, []string{`"nope"`}},
		{"rollout sts: not found", staticArgs("rollout", "sts/nope", "-n", "shop", "-f", rolloutSTSFile), ExitNotFound, []string{`"nope"`}},
		{"rollout sts: Recreate strategy", stsVariant(editKind("StatefulSet", stsStrategy(func(us map[string]any) { us["type"] = "Recreate" }))), ExitUnsupported, []string{"Recreate"}},
		{"rollout sts: negative maxUnavailable", stsVariant(editKind("StatefulSet", stsStrategy(func(us map[string]any) {
			us["rollingUpdate"].(map[string]any)["maxUnavailable"] = -1
		}))), ExitBadFile, []string{"maxUnavailable"}},
		{"rollout sts: malformed maxUnavailable", stsVariant(editKind("StatefulSet", stsStrategy(func(us map[string]any) {
			us["rollingUpdate"].(map[string]any)["maxUnavailable"] = "ten"
		}))), ExitBadFile, []string{"maxUnavailable"}},
		{"rollout sts: no nodes", stsVariant(dropKind("Node")), ExitBadFile, []string{"no Node"}},
	}
}

// examples/rollout-sts.yaml: 4 replicas, OrderedReady, partition 1, PDB
// minAvailable 3. db-3, db-2, db-1 go one per step (highest ordinal first,
// each recreated on node-1, the only schedulable node); db-0 stays on the
// old revision; a bad release deletes db-3 only.
func TestRolloutStatefulSetExample(t *testing.T) {
	for _, width := range []int{80, 120} {
		defer func(w int) { cliWidth = w }(cliWidth)
		cliWidth = width
		r := cliRun(t, nil, nil, rolloutSTSArgs()...)
		wantLayout(t, r, "layout_rollout_sts_"+map[int]string{80: "80", 120: "120"}[width], width)
	}
	r := cliRun(t, nil, nil, rolloutSTSArgs("-o", "json")...)
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	ro := p.Rollout
	if ro.Kind != "StatefulSet" || ro.Outcome != prediction.RolloutCompletes || strings.Join(p.Victims, ",") != "shop/db-3,shop/db-2,shop/db-1" ||
		!strings.Contains(ro.Reason, "partition 1") || !p.Certain {
		t.Fatalf("%+v victims %v", ro, p.Victims)
	}
	for i, st := range ro.Steps {
		if st.Created[0].Pod != strings.TrimPrefix(st.Deleted[0], "shop/") || st.Created[0].Node != "node-1" || st.AvailableMin != 3 || st.Budgets[0].Violated {
			t.Errorf("step %d: %+v", i+1, st)
		}
	}
	if strings.Join(ro.IfNewPodsFail.Deleted, ",") != "shop/db-3" || ro.IfNewPodsFail.AvailableMin != 3 {
		t.Fatalf("%+v", ro.IfNewPodsFail)
	}
	r = cliRun(t, nil, nil, rolloutSTSArgs("-o", "name")...)
	if r.code != ExitOK || r.stdout != "pod/db-3\npod/db-2\npod/db-1\n" {
		t.Fatalf("%s", r)
	}
}

// Live: the same StatefulSet read from the API (the drain's reads list
// StatefulSets already), on 1.36 where the gate is off, and with
// --feature-gates turning it on.
func TestRolloutStatefulSetLive(t *testing.T) {
	cl, err := source.ReadClusterFiles([]string{rolloutSTSFile}, nil, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, n := range cl.Nodes {
		objs = append(objs, n)
	}
	for _, p := range cl.Pods {
		objs = append(objs, p)
	}
	for _, b := range cl.PDBs {
		objs = append(objs, b)
	}
	set := cl.Workloads.StatefulSets[0].DeepCopy()
	two := intstr.FromInt32(2)
	set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &two
	objs = append(objs, set)
	for _, c := range []struct {
		gates string
		want  string
	}{
		{"", "shop/db-3|shop/db-2|shop/db-1"},
		{"MaxUnavailableStatefulSet=true", "shop/db-3,shop/db-2||shop/db-1"},
	} {
		args := []string{"rollout", "sts/db", "-n", "shop", "--kube-version", "1.36", "--now", "2026-02-01T00:00:00Z", "-o", "json"}
		if c.gates != "" {
			args = append(args, "--feature-gates", c.gates)
		}
		r := cliRun(t, fake.NewClientset(objs...), nil, args...)
		if r.code != ExitOK {
			t.Fatalf("%s", r)
		}
		var p prediction.Prediction
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatal(err)
		}
		var steps []string
		for _, st := range p.Rollout.Steps {
			steps = append(steps, strings.Join(st.Deleted, ","))
		}
		if got := strings.Join(steps, "|"); got != c.want || p.Rollout.Outcome != prediction.RolloutCompletes {
			t.Errorf("gates %q: deleted per step %s (%s), want %s", c.gates, got, p.Rollout.Outcome, c.want)
		}
	}
}
