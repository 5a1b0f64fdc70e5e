// Package kubectlbuild builds the kubectl of the release the test module
// pins, for the tests that run kubectl as a user would.
package kubectlbuild

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LDFlags stamps the release's version into the binary.
const LDFlags = "-X k8s.io/component-base/version.gitVersion=v1.37.1 " +
	"-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"

// Build builds k8s.io/kubernetes/cmd/kubectl into out. It builds in a copy
// of the test module beside out, with -mod=mod, so the go.sum entries
// kubectl needs beyond the test module's (kustomize's) are added to the
// copy, never to test/go.sum. root is the repository root.
func Build(root, out string) error {
	modDir := filepath.Join(filepath.Dir(out), "kubectl-module")
	if err := os.MkdirAll(modDir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, "test", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(modDir, f), data, 0o644); err != nil {
			return err
		}
	}
	goCmd := func(args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, lastLines(string(b), 40))
		}
		return nil
	}
	// The test module's replacements by relative path ("../", the project;
	// "./versions/oraclegen") must point at the same directories from the copy.
	mod, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(root, "test", "go.mod")).Output()
	if err != nil {
		return fmt.Errorf("go mod edit -json: %v", err)
	}
	var gomod struct {
		Replace []struct{ Old, New struct{ Path string } }
	}
	if err := json.Unmarshal(mod, &gomod); err != nil {
		return err
	}
	for _, r := range gomod.Replace {
		if strings.HasPrefix(r.New.Path, ".") {
			dir := filepath.Join(root, "test", r.New.Path)
			if err := goCmd("mod", "edit", "-replace="+r.Old.Path+"="+dir); err != nil {
				return err
			}
		}
	}
	return goCmd("build", "-ldflags", LDFlags, "-o", out, "k8s.io/kubernetes/cmd/kubectl")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
