package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// versionRun runs the plugin on the probe ReplicaSet as the viewer.
func versionRun(t *testing.T, extra ...string) (*prediction, *pluginRun) {
	t.Helper()
	args := append([]string{"rs/" + probeRSName, "--replicas=0", "-n", probeNamespace, "--kubeconfig", env.cp.viewerKubeconfig}, extra...)
	run, err := runPlugin(context.Background(), env.pluginPath, args...)
	if err != nil {
		t.Fatal(err)
	}
	if run.exitCode != 0 || !strings.Contains(strings.Join(extra, " "), "json") {
		return nil, run
	}
	var p prediction
	if err := json.Unmarshal([]byte(run.stdout), &p); err != nil {
		t.Fatalf("not the JSON contract: %v: %s", err, run)
	}
	return &p, run
}

// TestVersionReporting (issue 5): live mode names the rules' Kubernetes
// version and where it came from. Here there is no controller-manager
// static pod, so the API server's version (v1.37.1) is used; --kube-version
// overrides it; a controller-manager pod in kube-system (kubeadm-style)
// takes precedence over the API server.
func TestVersionReporting(t *testing.T) {
	needPlugin(t)
	t.Run("apiserver", func(t *testing.T) {
		p, run := versionRun(t, "-o", "json")
		if p == nil {
			t.Fatalf("plugin failed: %s", run)
		}
		t.Logf("rules: %+v", p.Rules)
		if p.Rules.KubernetesVersion != "1.37" {
			t.Errorf("rules.kubernetesVersion = %q, want \"1.37\" (the API server is v1.37.1)", p.Rules.KubernetesVersion)
		}
		if p.Rules.VersionSource != "apiserver" {
			t.Errorf("rules.versionSource = %q, want \"apiserver\" (no kube-controller-manager pod in kube-system)", p.Rules.VersionSource)
		}
		if !strings.Contains(p.Rules.VersionDetail, "v1.37.1") {
			t.Errorf("rules.versionDetail = %q, want it to name the API server's version v1.37.1", p.Rules.VersionDetail)
		}
		if len(p.Rules.FeatureGates) == 0 {
			t.Errorf("rules.featureGates is empty")
		}
		// The table says the same in its header.
		_, tab := versionRun(t)
		if tab.exitCode != 0 {
			t.Fatalf("table output failed: %s", tab)
		}
		line := headerLine(tab.stdout, "Rules:")
		t.Logf("table: %s", line)
		if !strings.Contains(line, "Kubernetes 1.37") || !strings.Contains(line, "apiserver") {
			t.Errorf("table header %q does not say Kubernetes 1.37 from the apiserver", line)
		}
	})
	t.Run("flag", func(t *testing.T) {
		p, run := versionRun(t, "-o", "json", "--kube-version", "1.29")
		if p == nil {
			t.Fatalf("plugin failed: %s", run)
		}
		t.Logf("rules: %+v", p.Rules)
		if p.Rules.KubernetesVersion != "1.29" || p.Rules.VersionSource != "flag" {
			t.Errorf("rules = %s %q, want 1.29 from \"flag\"", p.Rules.KubernetesVersion, p.Rules.VersionSource)
		}
		if _, ok := p.Rules.FeatureGates["LogarithmicScaleDown"]; !ok {
			t.Errorf("1.29 rules should list the LogarithmicScaleDown gate (removed only in 1.37): %v", p.Rules.FeatureGates)
		}
	})
	t.Run("flag-unsupported", func(t *testing.T) {
		_, run := versionRun(t, "-o", "json", "--kube-version", "1.20")
		t.Logf("%s", run)
		if run.exitCode != 2 {
			t.Errorf("--kube-version 1.20: exit %d, want 2 (unsupported version)", run.exitCode)
		}
		if msg := strings.TrimRight(run.stderr, "\n"); msg == "" || strings.Contains(msg, "\n") {
			t.Errorf("want a one-line error, got %q", run.stderr)
		}
	})
	t.Run("controller-manager-pod", func(t *testing.T) {
		// A kubeadm-style static pod: only its image tag matters. It is
		// unbound, so deleting it removes it at once; nothing else runs
		// while it exists (tests are sequential).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := env.cp.admin
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager-e2e", Namespace: metav1.NamespaceSystem,
				Labels: map[string]string{"component": "kube-controller-manager", "tier": "control-plane"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-controller-manager", Image: "registry.k8s.io/kube-controller-manager:v1.36.2"}}},
		}
		if _, err := c.CoreV1().Pods(metav1.NamespaceSystem).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := forceDelete(context.Background(), c, metav1.NamespaceSystem, pod.Name); err != nil {
				t.Errorf("delete the fake controller-manager pod: %v", err)
			}
		}()
		p, run := versionRun(t, "-o", "json")
		if p == nil {
			t.Fatalf("plugin failed: %s", run)
		}
		t.Logf("rules: %+v", p.Rules)
		if p.Rules.KubernetesVersion != "1.36" || p.Rules.VersionSource != "kube-controller-manager" {
			t.Errorf("rules = %s %q, want 1.36 from \"kube-controller-manager\"", p.Rules.KubernetesVersion, p.Rules.VersionSource)
		}
		if !strings.Contains(p.Rules.VersionDetail, pod.Name) {
			t.Errorf("rules.versionDetail = %q, want it to name pod %s", p.Rules.VersionDetail, pod.Name)
		}
	})
}

func headerLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
