package source

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

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
			w, u, m, err := timeV(c.argv)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			wall, cpu, rss = append(wall, w), append(cpu, u), append(rss, m)
		}
		t.Logf("| %s | %.2f | %.2f | %.0f |", c.name, median(wall), median(cpu), median(rss))
	}
}

var (
	reUser = regexp.MustCompile(`User time \(seconds\): ([0-9.]+)`)
	reSys  = regexp.MustCompile(`System time \(seconds\): ([0-9.]+)`)
	reRSS  = regexp.MustCompile(`Maximum resident set size \(kbytes\): ([0-9]+)`)
)

// timeV runs argv under /usr/bin/time -v: wall seconds, user+system
// seconds, peak RSS in MB.
func timeV(argv []string) (wall, cpu, rssMB float64, err error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v"}, argv...)...)
	var stderr []byte
	start := time.Now()
	cmd.Stdout = nil
	if stderr, err = cmd.CombinedOutput(); err != nil {
		return 0, 0, 0, fmt.Errorf("%v: %s", err, tail(stderr))
	}
	wall = time.Since(start).Seconds()
	num := func(re *regexp.Regexp) float64 {
		m := re.FindSubmatch(stderr)
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	return wall, num(reUser) + num(reSys), num(reRSS) / 1024, nil
}

func tail(b []byte) []byte {
	if len(b) > 400 {
		return b[len(b)-400:]
	}
	return b
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
