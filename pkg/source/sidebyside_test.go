package source

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// TestSideBySide measures, in one run, the plugin on a 20,000-pod snapshot
// in JSON and YAML against a plain decode of the same JSON file (Go's
// encoding/json into []corev1.Pod, and python3's json.load): median wall
// time, CPU time and peak RSS of SCALE_PREVIEW_RUNS runs (default 5), from
// /usr/bin/time -v. It runs only when SCALE_PREVIEW_SIDE_BY_SIDE names a
// directory for the files; the figures go to docs/performance.md.
func TestSideBySide(t *testing.T) {
	dir := os.Getenv("SCALE_PREVIEW_SIDE_BY_SIDE")
	if dir == "" {
		t.Skip("set SCALE_PREVIEW_SIDE_BY_SIDE to a directory to measure")
	}
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("SCALE_PREVIEW_RUNS")); err == nil && v > 0 {
		runs = v
	}
	const pods = 20000
	js, ys := filepath.Join(dir, "pods.json"), filepath.Join(dir, "pods.yaml")
	for name, write := range map[string]func(*os.File, int) error{
		js: func(f *os.File, n int) error { return sourcetest.WriteJSON(f, n) },
		ys: func(f *os.File, n int) error { return sourcetest.WriteYAML(f, n) },
	} {
		if _, err := os.Stat(name); err == nil {
			continue
		}
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := write(f, pods); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	plugin, plain := filepath.Join(dir, "kubectl-scale_preview"), filepath.Join(dir, "plaindecode")
	for out, pkg := range map[string]string{plugin: "../../cmd/kubectl-scale_preview", plain: "./sourcetest/plaindecode"} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, b)
		}
	}
	size := func(f string) string {
		st, _ := os.Stat(f)
		return fmt.Sprintf("%.0f MB", float64(st.Size())/1e6)
	}
	cases := []struct {
		name string
		argv []string
	}{
		{"plugin, JSON (" + size(js) + ")", []string{plugin, "deploy/web", "--replicas=18000", "-n", "bench", "-f", js}},
		{"plugin, YAML (" + size(ys) + ")", []string{plugin, "deploy/web", "--replicas=18000", "-n", "bench", "-f", ys}},
		{"Go encoding/json into []corev1.Pod, JSON", []string{plain, js}},
		{"python3 json.load, JSON", []string{"python3", "-c", "import json,sys; json.load(open(sys.argv[1]))", js}},
	}
	t.Logf("| case | wall s | CPU s | peak RSS MB | (median of %d) |", runs)
	for _, c := range cases {
		var wall, cpu, rss []float64
		for range runs {
			w, u, m, err := sourcetest.TimeV(c.argv, io.Discard)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			wall, cpu, rss = append(wall, w), append(cpu, u), append(rss, m)
		}
		t.Logf("| %s | %.2f | %.2f | %.0f |", c.name, sourcetest.Median(wall), sourcetest.Median(cpu), sourcetest.Median(rss))
	}
}
