package cmd

import (
	"os"
	"strings"
	"testing"
)

// The README's example outputs are what its commands print: each block is
// a run of whole, consecutive lines of the command's output (the README
// says which part it shows).
func TestREADMEExamplesPrintWhatTheyShow(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []struct{ intro, command string }{
		{"The first prints this", "go run ./cmd/kubectl-scale_preview -f examples/web.yaml deploy/web --replicas=3 -n shop --now 2025-01-01T12:00:00Z"},
		{"The eviction example prints", "go run ./cmd/kubectl-scale_preview node/worker-1 -f examples/node/node.yaml \\\n  -f examples/node/summary.json -f examples/node/configz.json --now 2026-01-01T00:00:30Z"},
	} {
		if !strings.Contains(string(readme), ex.command+"\n") {
			t.Errorf("the README no longer shows the command %q", ex.command)
			continue
		}
		block := readmeBlockAfter(string(readme), ex.intro)
		if block == "" {
			t.Errorf("the README has no output block after %q", ex.intro)
			continue
		}
		args := strings.Fields(strings.ReplaceAll(strings.TrimPrefix(ex.command, "go run ./cmd/kubectl-scale_preview"), "\\\n", ""))
		for i, a := range args {
			if strings.HasPrefix(a, "examples/") {
				args[i] = "../../" + a
			}
		}
		r := cliRun(t, nil, nil, args...)
		wantExit(t, r, ExitOK)
		if !strings.Contains("\n"+r.stdout, "\n"+block) {
			t.Errorf("the README's block after %q is not what %q prints:\n%s\nit prints:\n%s", ex.intro, ex.command, block, r.stdout)
		}
	}
}

// readmeBlockAfter is the first fenced block after the line starting with
// intro, with its final newline.
func readmeBlockAfter(readme, intro string) string {
	_, rest, ok := strings.Cut(readme, "\n"+intro)
	if !ok {
		return ""
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	if !ok {
		return ""
	}
	block, _, _ := strings.Cut(rest, "```\n")
	return block
}
