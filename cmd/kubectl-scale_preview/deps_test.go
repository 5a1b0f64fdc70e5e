package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTestFakesLinked fails when a test fake is linked into the plugin:
// any .../fake package, or client-go/testing imported by anything but
// client-go/gentype (whose generic fakes every typed client, kubectl's
// too, carries; the linker drops them unless they are used).
func TestNoTestFakesLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if isFake(pkg) {
			t.Errorf("%s is linked into the plugin: a test fake does not belong in the product", pkg)
		}
		if pkg == "k8s.io/client-go/gentype" || pkg == "k8s.io/client-go/testing" {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if imp == "k8s.io/client-go/testing" {
				t.Errorf("%s imports k8s.io/client-go/testing: a test fake does not belong in the product", pkg)
			}
		}
	}
}

func isFake(pkg string) bool {
	return strings.HasSuffix(pkg, "/fake") || strings.Contains(pkg, "/fake/")
}
