package cmd

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// --help names every mode with its one line and its first example; each
// mode's own help holds its usage, its examples and its own flags, and not
// another mode's.
func TestHelpListsEveryMode(t *testing.T) {
	root := cliRun(t, nil, nil, "--help")
	wantExit(t, root, ExitOK)
	own := map[string][]string{
		modeScaleIn: {"--replicas", "--spare", "--watch"}, modeHPA: {"--replicas"}, modeJob: {"--parallelism", "--completions"},
		modeNode: {"--assume"}, modePod: {"--scheduler-config"}, modeDesired: {}, modeWatch: {"--replicas"},
	}
	foreign := []string{"--assume", "--scheduler-config", "--parallelism", "--desired"}
	for _, m := range modes() {
		first := firstExample(m.example)
		if first == "" {
			t.Errorf("%s: no example", m.name)
		}
		for _, s := range []string{"  " + m.name + " ", m.short, first} {
			if !strings.Contains(root.stdout, s) {
				t.Errorf("--help lacks %q of mode %s", s, m.name)
			}
		}
		for _, args := range [][]string{{m.name, "--help"}, {"help", m.name}} {
			r := cliRun(t, nil, nil, args...)
			wantExit(t, r, ExitOK)
			for _, s := range append([]string{"kubectl scale-preview " + m.use, m.example, "-o, --output", "--kubeconfig"}, own[m.name]...) {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("%v lacks %q:\n%s", args, s, r.stdout)
				}
			}
			for _, f := range foreign {
				if !slices.Contains(own[m.name], f) && strings.Contains(flagSection(r.stdout), f+" ") {
					t.Errorf("%v shows %s, a flag of another mode", args, f)
				}
			}
		}
	}
	// The root still shows the scale-in's flags and none of the other modes'.
	for _, s := range []string{"--replicas int32", "-R, --recursive", "-o, --output", "--fail-if-uncertain", "--desired"} {
		if !strings.Contains(root.stdout, s) {
			t.Errorf("--help lacks %q", s)
		}
	}
	for _, s := range []string{"--assume", "--scheduler-config", "--parallelism"} {
		if strings.Contains(flagSection(root.stdout), s) {
			t.Errorf("--help shows %s, which is in its mode's help", s)
		}
	}
	// TYPE/NAME --help is the help of its mode.
	for typ, m := range map[string]string{"node/worker-1": modeNode, "pods/x": modePod, "deploy/web": modeScaleIn, "hpa/web": modeHPA} {
		r := cliRun(t, nil, nil, typ, "--help")
		if !strings.Contains(r.stdout, "kubectl scale-preview "+m+" ") || strings.Contains(r.stdout, "Modes (") {
			t.Errorf("%s --help is not the help of %s:\n%s", typ, m, r.stdout)
		}
	}
	r := cliRun(t, nil, nil, "scale-in", "--help")
	for _, s := range []string{"R4 ", "pod-deletion-cost", "TIE", "ORDINAL"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("scale-in --help lacks the rule code %q", s)
		}
	}
}

// flagSection is a help's list of its own flags.
func flagSection(help string) string {
	_, flags, _ := strings.Cut(help, "\nFlags:\n")
	flags, _, _ = strings.Cut(flags, "\nkubectl's connection flags:")
	return flags
}

// The mode list comes from the registered commands: a mode added with one
// AddCommand (as drain is) gets its line and example in --help, and its
// own help.
func TestHelpListsDrain(t *testing.T) {
	var out strings.Builder
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	c := NewCommand(o)
	c.SetArgs([]string{"--help"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	list := out.String()
	if !regexp.MustCompile(`(?s)  pod .*  drain +What kubectl drain does to nodes[^\n]*\n +kubectl scale-preview drain node-1 node-2 --ignore-daemonsets\n(?:  rollout [^\n]*\n[^\n]*\n)?  desired `).MatchString(list) {
		t.Errorf("--help does not list drain between pod and desired:\n%s", list)
	}
	out.Reset()
	c.SetArgs([]string{"drain", "--help"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kubectl scale-preview drain NODE [NODE...] | -l SELECTOR [flags]") || !strings.Contains(out.String(), "kubectl scale-preview drain node-1 node-2 --ignore-daemonsets") {
		t.Errorf("drain --help:\n%s", out.String())
	}
}

// The help's exit codes are the README's table, word for word.
func TestHelpExitCodesAreTheREADMEs(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "## Exit codes\n\n")
	section, _, _ = strings.Cut(section, "\n\n") // the table
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`)
	var want strings.Builder
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		want.WriteString(table([][2]string{{m[1], strings.ReplaceAll(m[2], "`", "")}}))
	}
	if want.Len() == 0 || exitHelp() != want.String() {
		t.Errorf("the help's exit codes:\n%s\nthe README's:\n%s", exitHelp(), want.String())
	}
}

// Every mode's form runs exactly what the root runs for TYPE/NAME.
func TestModeCommandsRunAsTheRoot(t *testing.T) {
	for _, pair := range [][2][]string{
		{{"-f", preemptFile, "pod/critical", "-n", "shop", "-o", "json"}, {"pod", "critical", "-f", preemptFile, "-n", "shop", "-o", "json"}},
		{{"-f", "../../examples/web.yaml", "deploy/web", "--replicas=3", "-n", "shop", "--now", liveNowFlag}, {"scale-in", "deploy/web", "--replicas=3", "-f", "../../examples/web.yaml", "-n", "shop", "--now", liveNowFlag}},
		{{"-f", "../../examples/job.json", "-n", "ml", "job/train", "--parallelism=2", "--now", liveNowFlag}, {"job", "train", "--parallelism=2", "-f", "../../examples/job.json", "-n", "ml", "--now", liveNowFlag}},
		{{"-f", "../../examples/runbook.yaml", "hpa/web", "-n", "shop", "--now", liveNowFlag, "-o", "yaml"}, {"hpa", "web", "-f", "../../examples/runbook.yaml", "-n", "shop", "--now", liveNowFlag, "-o", "yaml"}},
		{nodeArgs("node/worker-1", "-o", "wide")(t), {"node", "worker-1", "-f", nodeFilePath, "-f", nodeSummaryPath, "-f", nodeConfigzPath, "--now", nodeNow, "-o", "wide"}},
	} {
		a, b := cliRun(t, nil, nil, pair[0]...), cliRun(t, nil, nil, pair[1]...)
		wantExit(t, a, ExitOK)
		if a.stdout != b.stdout || a.code != b.code || a.stderr != b.stderr {
			t.Errorf("%v and %v differ:\n%s\n%s", pair[0], pair[1], a, b)
		}
	}
}
