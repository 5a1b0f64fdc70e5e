package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestRolloutDesiredE2E is the proof of `--desired -f` for a template
// change: TestRolloutUpdateE2E's scenarios (same seed, same workloads),
// where the change is a manifest with the new image that `kubectl apply`
// applies, predicted beforehand with `--desired -f` as the viewer; the
// item's rollout is compared as `rollout TYPE/NAME`'s is.
// E2E_ROLLOUT_DESIRED lists the scenarios; "i-" writes one replica fewer
// into the manifest (the scale and the rollout in one change). Default
// 0,1,7,0-,7- (RollingUpdate, Recreate, a StatefulSet, and the first and
// last with a scale-in); -short: 0,7-.
func TestRolloutDesiredE2E(t *testing.T) {
	picked := desiredRolloutPicked()
	kubectl := drainKubectl(t)
	dc := startKubeletCluster(t, updateControllers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := grantRolloutReads(ctx, dc.cp.admin); err != nil {
		t.Fatal(err)
	}
	for _, pick := range picked {
		i, scale := pick.index, pick.scale
		s := randomUpdateScenario(env.seed, i)
		s.change, s.ns = "desired", fmt.Sprintf("rollout-desired-%d", i)
		name := fmt.Sprintf("scenario-%d-%s", i, s.family)
		if scale {
			s.desiredReplicas, s.ns, name = s.replicas-1, s.ns+"-scale", name+"-scale-in"
		}
		t.Run(name, func(t *testing.T) {
			runUpdateScenario(t, dc, kubectl, s)
		})
	}
}

type desiredPick struct {
	index int
	scale bool // one replica fewer in the manifest
}

func desiredRolloutPicked() []desiredPick {
	list := os.Getenv("E2E_ROLLOUT_DESIRED")
	if list == "" {
		list = "0,1,7,0-,7-"
		if testing.Short() {
			list = "0,7-"
		}
	}
	var picked []desiredPick
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		scale := strings.HasSuffix(f, "-")
		if i, err := strconv.Atoi(strings.TrimSuffix(f, "-")); err == nil {
			picked = append(picked, desiredPick{i, scale})
		}
	}
	return picked
}

// desiredManifest writes the workload's manifest as a pull request would
// change it: its selector, labels and container with the new image, the
// rest left out (kubectl apply keeps it).
func (s *updateScenario) desiredManifest(ctx context.Context, dc *drainCluster) (string, error) {
	apps := dc.cp.admin.AppsV1()
	var sel *metav1.LabelSelector
	var labels map[string]string
	switch s.kind {
	case "Deployment":
		d, err := apps.Deployments(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		sel, labels = d.Spec.Selector, d.Spec.Template.Labels
	case "StatefulSet":
		st, err := apps.StatefulSets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		sel, labels = st.Spec.Selector, st.Spec.Template.Labels
	default:
		return "", fmt.Errorf("--desired: %s is not previewed as a rollout", s.kind)
	}
	spec := map[string]any{"selector": sel, "template": map[string]any{"metadata": map[string]any{"labels": labels},
		"spec": map[string]any{"containers": []any{map[string]any{"name": appContainer, "image": updateImage}}}}}
	if s.desiredReplicas > 0 {
		spec["replicas"] = s.desiredReplicas
	}
	m := map[string]any{"apiVersion": "apps/v1", "kind": s.kind, "metadata": map[string]any{"name": s.name, "namespace": s.ns}, "spec": spec}
	b, err := yaml.Marshal(m)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dc.cp.dir, s.ns+"-desired.yaml")
	return file, os.WriteFile(file, b, 0o600)
}

// desiredPredict runs `--desired -f MANIFEST -o json` as the viewer and
// takes its one item.
func desiredPredict(ctx context.Context, t *testing.T, dc *drainCluster, s *updateScenario) (*rolloutPrediction, string) {
	file, err := s.desiredManifest(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	s.desiredFile = file
	if s.desiredReplicas > 0 {
		// What the rollout ends with; the recording's self-check, written
		// for a rollout alone, is left out.
		s.replicas = s.desiredReplicas
	}
	run, err := runPlugin(ctx, env.pluginPath, "--desired", "-f", file, "-n", s.ns, "--kubeconfig", dc.cp.viewerKubeconfig, "-o", "json")
	if err != nil || run.exitCode != 0 {
		t.Fatalf("plugin: %v %s\nthe cluster is in %s", err, run, s.saved)
	}
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &l); err != nil || len(l.Items) != 1 {
		t.Fatalf("want one item: %v\n%s", err, firstLines(run.stdout, 40))
	}
	p, err := parseRolloutPrediction(string(l.Items[0]))
	if err != nil {
		t.Fatalf("%v\n%s", err, firstLines(run.stdout, 40))
	}
	t.Logf("plugin --desired (%s): certain %v, victims %v\n%s", run.duration.Round(time.Millisecond), p.Certain, p.Victims, firstLines(run.stdout, 120))
	return p, ""
}

// applyDesired is the change as GitOps makes it: kubectl apply of the manifest.
func (s *updateScenario) applyDesired(ctx context.Context, kubectl, kubeconfig string) (string, error) {
	out, err := exec.CommandContext(ctx, kubectl, "apply", "-f", s.desiredFile, "--kubeconfig", kubeconfig).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl apply -f %s: %v: %s", s.desiredFile, err, out)
	}
	return string(out), nil
}
