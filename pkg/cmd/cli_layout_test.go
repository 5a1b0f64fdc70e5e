package cmd

import (
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

// Each layout at 80 columns (a narrow terminal: the compact layout) and at
// 120 (the standard layout, also what a pipe or a file gets). Every line
// fits, so nothing wraps.
func TestGoldenLayouts(t *testing.T) {
	sts := stsFile("OrderedReady", 0, "Delete", "0", "1", "2", "3")
	for _, tc := range []struct {
		name  string
		live  bool
		stdin string
		args  []string
	}{
		{"replicaset", false, "", []string{"-f", "../../examples/web.yaml", "rs/web-7d9f8c6b5", "--replicas=3", "-n", "shop", "--now", liveNowFlag}},
		{"rollout", true, "", liveArgs},
		{"rollout_example", false, "", []string{"-f", "../../examples/rollout.json", "deploy/api", "--replicas=2", "-n", "shop", "--now", liveNowFlag}},
		{"statefulset", false, sts, []string{"-f", "-", "sts/web", "--replicas=1", "--now", "2025-06-01T00:00:00Z"}},
		{"uncertain", false, "", []string{"-f", "testdata/tie.yaml", "rs/pair", "--replicas=1", "--now", liveNowFlag}},
	} {
		for _, width := range []int{80, 120} {
			name := tc.name + "_" + map[int]string{80: "80", 120: "120"}[width]
			t.Run(name, func(t *testing.T) {
				defer func(w int) { cliWidth = w }(cliWidth)
				cliWidth = width
				var r cliResult
				if tc.live {
					r = cliRun(t, fake.NewClientset(liveObjects()...), nil, tc.args...)
				} else {
					r = cliRun(t, nil, strings.NewReader(tc.stdin), tc.args...)
				}
				wantLayout(t, r, "layout_"+name, width)
			})
		}
	}
}

// wantLayout: exit 0, the golden file NAME, and no line wider than width
// (counted in characters, as a terminal shows them).
func wantLayout(t *testing.T, r cliResult, name string, width int) {
	t.Helper()
	wantExit(t, r, ExitOK)
	golden(t, name, r.stdout)
	for i, l := range strings.Split(r.stdout, "\n") {
		if n := len([]rune(l)); n > width {
			t.Errorf("line %d is %d columns wide (> %d): %q", i+1, n, width, l)
		}
	}
}

// Output that is not a terminal gets the standard layout whatever the
// terminal's width: width 0 and 120 print the same.
func TestNotATerminalIsTheStandardLayout(t *testing.T) {
	r0 := cliRun(t, nil, nil, offlineArgs...)
	defer func(w int) { cliWidth = w }(cliWidth)
	cliWidth = 120
	r120 := cliRun(t, nil, nil, offlineArgs...)
	if r0.stdout != r120.stdout {
		t.Errorf("not a terminal:\n%s\n120 columns:\n%s", r0.stdout, r120.stdout)
	}
}
