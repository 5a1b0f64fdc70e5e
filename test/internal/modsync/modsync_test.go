// Package modsync guards the shared build cache of the two modules.
package modsync

import (
	"os/exec"
	"strings"
	"testing"
)

// Every module the root module builds (the plugin and its tests) is the
// version the test module selects. A module that differs, even
// golang.org/x/sys, changes the build ID of every package above it, and the
// test module then compiles all of client-go and kubectl a second time: a
// cold `make test` spent minutes on that. Align the root's go.mod with
// `cd test && go list -m MODULE`.
func TestRootBuildsTheTestModulesVersions(t *testing.T) {
	built := goList(t, "../../..", "list", "-deps", "-test", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", "./...")
	selected := map[string]string{}
	for _, line := range goList(t, "../..", "list", "-m", "all") {
		if f := strings.Fields(line); len(f) >= 2 {
			selected[f[0]] = f[1]
		}
	}
	for _, line := range built {
		path, version, _ := strings.Cut(line, " ")
		if want, ok := selected[path]; ok && want != version {
			t.Errorf("the root module builds %s %s, the test module %s: run `go get %s@%s` in the root module", path, version, want, path, want)
		}
	}
}

func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v", strings.Join(args, " "), dir, err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
