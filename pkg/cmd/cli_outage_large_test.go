package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// largeOutageLines is the most lines the table of a zone of the large
// cluster may take at each width, however many nodes and pods.
var largeOutageLines = map[int]int{80: 100, 120: 75}

// A zone of a generated large cluster (issue 34's shape, 180 nodes in
// three zones: 30 Deployments alike lose 60 pods each) stays readable:
// rows and warnings alike but for their owner fold after three, within
// largeOutageLines at 80 and 120 columns; -o wide prints every row.
func TestOutageLargeZoneFolds(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cluster.json")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := sourcetest.WriteClusterJSON(f, sourcetest.ClusterSpec{Nodes: 180, Zones: 3}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	args := []string{"outage", "--zone", "region-1a", "-f", file, "--now", liveNowFlag}
	for _, width := range []int{80, 120} {
		name := map[int]string{80: "80", 120: "120"}[width]
		t.Run(name, func(t *testing.T) {
			defer func(w int) { cliWidth = w }(cliWidth)
			cliWidth = width
			r := cliRun(t, nil, nil, args...)
			wantLayout(t, r, "layout_outage_large_"+name, width)
			if n := strings.Count(r.stdout, "\n"); n > largeOutageLines[width] {
				t.Errorf("%d lines, want at most %d", n, largeOutageLines[width])
			}
			if !strings.Contains(r.stdout, "27 more like these (-o wide for all)") {
				t.Errorf("no folded rows:\n%s", r.stdout)
			}
		})
	}
	r := cliRun(t, nil, nil, append(args, "-o", "wide")...)
	wantExit(t, r, ExitOK)
	if n := len(regexp.MustCompile(`(?m)^  60 of Deployment/app-`).FindAllString(r.stdout, -1)); n != 30 || strings.Contains(r.stdout, "more like these") {
		t.Errorf("-o wide: %d rows of pods, want every Deployment's 30, none folded:\n%s", n, r.stdout)
	}
}
