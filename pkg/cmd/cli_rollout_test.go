package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/source"
)

const rolloutFile = "../../examples/rollout-deploy.yaml"

func rolloutArgs(args ...string) []string {
	return exampleArgs(rolloutFile, []string{"rollout", "deploy/api", "-n", "shop"}, "2026-01-02T00:00:00Z", args...)
}

// rolloutVariant writes the example with edit applied, and runs the same on it.
func rolloutVariant(edit func(items []map[string]any) []map[string]any, args ...string) func(*testing.T) []string {
	return exampleVariant(rolloutFile, []string{"rollout", "deploy/api", "-n", "shop"}, "2026-01-02T00:00:00Z", edit, args...)
}

func negativeSurge(d map[string]any) {
	d["spec"].(map[string]any)["strategy"].(map[string]any)["rollingUpdate"].(map[string]any)["maxSurge"] = -1
}

// rolloutMatrix are the rollout's bad inputs (TestBadInputMatrix runs them).
func rolloutMatrix() []modeBadInput {
	return []modeBadInput{
		{"rollout: a Job", staticArgs("rollout", "job/x", "-f", rolloutFile), ExitUnsupported, []string{"has no rollout"}},
		{"rollout: a bare ReplicaSet", staticArgs("rollout", "rs/api-6b8f", "-f", rolloutFile), ExitUnsupported, []string{"has no rollout"}},
		{"rollout: --image naming no container", staticArgs(rolloutArgs("--image", "nope=x")...), ExitUsage, []string{`"nope"`}},
		{"rollout: --image without =", staticArgs(rolloutArgs("--image", "x")...), ExitUsage, []string{"CONTAINER=IMAGE"}},
		{"rollout: --resume on a running Deployment", staticArgs(rolloutArgs("--resume")...), ExitUsage, []string{"not paused"}},
		{"rollout: ReplicaSets missing", rolloutVariant(dropKind("ReplicaSet")), ExitBadFile, []string{"ReplicaSet"}},
		{"rollout: negative maxSurge", rolloutVariant(editKind("Deployment", negativeSurge)), ExitBadFile, []string{"maxSurge"}},
		{"rollout: no nodes", rolloutVariant(dropKind("Node")), ExitBadFile, []string{"no Node"}},
		{"rollout: a quota without status", rolloutVariant(addQuota(false), "--fail-if-uncertain"), ExitUncertain, []string{"--fail-if-uncertain"}},
		{"rollout: not found", staticArgs("rollout", "deploy/nope", "-n", "shop", "-f", rolloutFile), ExitNotFound, []string{`"nope"`}},
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

// addQuota puts a pods quota at its limit into the files; status false
// leaves its status out.
func addQuota(status bool) func([]map[string]any) []map[string]any {
	return func(items []map[string]any) []map[string]any {
		q := map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": "pods", "namespace": "shop"},
			"spec": map[string]any{"hard": map[string]any{"pods": "6"}}}
		if status {
			q["status"] = map[string]any{"hard": map[string]any{"pods": "6"}, "used": map[string]any{"pods": "6"}}
		}
		return append(items, q)
	}
}

// A pods quota at its limit: the surge pods are FailedCreate, yet
// maxUnavailable 1 lets the old pods free quota: the rollout is slower,
// two steps per pod (an old pod deleted and gone, then one new pod
// created and available): 12 steps for 6 pods.
func TestRolloutQuota(t *testing.T) {
	r := cliRun(t, nil, nil, append(rolloutVariant(addQuota(true))(t), "-o", "json")...)
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	ro := p.Rollout
	if ro.Outcome != prediction.RolloutCompletes || len(ro.Steps) != 12 || !strings.Contains(ro.Steps[0].Created[0].Reason, "exceeded quota: pods") {
		t.Fatalf("%d steps, %+v", len(ro.Steps), ro.Steps[0])
	}
}

// Live: the same answer as from the files, the quota listed in the namespace.
func TestRolloutLive(t *testing.T) {
	cl, err := source.ReadClusterFiles([]string{rolloutFile}, nil, "shop")
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
	objs = append(objs, cl.Workloads.Deployments[0], cl.Workloads.ReplicaSets[0])
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: "shop"},
		Spec:   corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("6")}},
		Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("6")}, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("6")}}}
	objs = append(objs, q)
	args := []string{"rollout", "deploy/api", "-n", "shop", "--kube-version", "1.37", "--now", "2026-01-02T00:00:00Z", "-o", "json"}
	r := cliRun(t, fake.NewClientset(objs...), nil, args...)
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Rollout.Steps) != 12 || p.Rollout.Steps[0].Deleted[0] != "shop/api-6b8f-c" {
		t.Fatalf("%d steps: %+v", len(p.Rollout.Steps), p.Rollout.Steps[0])
	}
}
