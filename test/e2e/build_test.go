package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/scale-preview/scale-preview/test/internal/kubectlbuild"
)

// versionLDFlags stamps the Kubernetes version; without it the
// controller-manager refuses to start ("could not parse pre-release").
const versionLDFlags = "-X k8s.io/component-base/version.gitVersion=v1.37.1 " +
	"-X k8s.io/component-base/version.gitMajor=1 " +
	"-X k8s.io/component-base/version.gitMinor=37 " +
	"-X k8s.io/component-base/version.gitTreeState=clean"

const pluginBinary = "kubectl-scale_preview"

// buildResult says where the binaries are and how long they took.
type buildResult struct {
	binDir        string
	controlPlane  time.Duration // kube-apiserver + kube-controller-manager
	scheduler     time.Duration // kube-scheduler (started only by TestPreemptE2E)
	etcd          time.Duration
	plugin        time.Duration
	pluginPath    string // "" when the plugin could not be built
	pluginMissing string // why the plugin is unavailable
}

// paths of the test module and the repository root, from the package dir.
func modulePaths() (testModDir, repoRoot string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	testModDir = filepath.Dir(wd) // test/e2e -> test
	if _, err := os.Stat(filepath.Join(testModDir, "go.mod")); err != nil {
		return "", "", fmt.Errorf("expected the test module at %s: %w", testModDir, err)
	}
	return testModDir, filepath.Dir(testModDir), nil
}

func goBuild(dir string, args ...string) (time.Duration, error) {
	start := time.Now()
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("go build %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out.String())
	}
	return d, nil
}

// buildBinaries builds the control plane (from the test module's tool
// dependencies) and the plugin (from the repository root) into binDir.
// Go's build cache makes repeated builds take seconds.
func buildBinaries(binDir string) (*buildResult, error) {
	testModDir, repoRoot, err := modulePaths()
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(binDir) {
		binDir = filepath.Join(repoRoot, binDir)
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, err
	}
	res := &buildResult{binDir: binDir}
	logf("building kube-apiserver, kube-controller-manager and kube-scheduler into %s (cold: ~15 min on 2 cores; warm: seconds)", binDir)
	res.controlPlane, err = goBuild(testModDir, "-ldflags", versionLDFlags, "-o", binDir+string(filepath.Separator),
		"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager")
	if err != nil {
		return nil, err
	}
	res.scheduler, err = goBuild(testModDir, "-ldflags", versionLDFlags, "-o", filepath.Join(binDir, "kube-scheduler"),
		"k8s.io/kubernetes/cmd/kube-scheduler")
	if err != nil {
		return nil, err
	}
	// kubectl of the same release, for the tests that apply manifests as a
	// user would (the machine's own kubectl may be absent or of another release).
	if err = kubectlbuild.Build(repoRoot, filepath.Join(binDir, "kubectl")); err != nil {
		return nil, fmt.Errorf("building kubectl: %w", err)
	}
	res.etcd, err = goBuild(testModDir, "-o", filepath.Join(binDir, "etcd"), "go.etcd.io/etcd/server/v3")
	if err != nil {
		return nil, err
	}
	logf("built control plane in %s, kube-scheduler in %s, etcd in %s", res.controlPlane.Round(time.Millisecond),
		res.scheduler.Round(time.Millisecond), res.etcd.Round(time.Millisecond))

	mainDir := filepath.Join(repoRoot, "cmd", pluginBinary)
	if _, err := os.Stat(filepath.Join(mainDir, "main.go")); err != nil {
		res.pluginMissing = fmt.Sprintf("plugin main package %s does not exist yet", mainDir)
		return res, nil
	}
	out := filepath.Join(binDir, pluginBinary)
	res.plugin, err = goBuild(repoRoot, "-o", out, "./cmd/"+pluginBinary)
	if err != nil {
		res.pluginMissing = "plugin does not build: " + firstLines(err.Error(), 15)
		return res, nil
	}
	res.pluginPath = out
	logf("built plugin in %s", res.plugin.Round(time.Millisecond))
	return res, nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
