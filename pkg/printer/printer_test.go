package printer

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

var refTime = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func pod(name, fate string, pos int, certain bool, p float64) prediction.Pod {
	return prediction.Pod{Name: name, UID: "uid-" + name, Node: "n1", Phase: "Running", Ready: true,
		Created: refTime.Add(-time.Hour), Position: pos, Fate: fate, Certain: certain, DeleteProbability: p}
}

// openPrediction: 4 -> 2 where a goes for sure and one of b, c goes by
// chance (a full tie); d is already terminating.
func openPrediction() *prediction.Prediction {
	g := 0
	a := pod("a", prediction.FateDelete, 1, true, 1)
	a.DecidedBy = &prediction.Decision{Rule: "R3", Name: "readiness", Against: "b", This: "not ready", Other: "ready"}
	a.VsBoundary = &prediction.Decision{Rule: "R3", Name: "readiness", Against: "c", This: "not ready", Other: "ready"}
	a.Ready = false
	b := pod("b", prediction.FateDelete, 2, false, 0.5)
	b.ContenderGroup = &g
	b.DecidedBy = &prediction.Decision{Rule: "TIE", Name: "tie", Against: "c"}
	b.VsBoundary = b.DecidedBy
	c := pod("c", prediction.FateKeep, 3, false, 0.5)
	c.ContenderGroup = &g
	d := pod("d", prediction.FateTerminating, 0, true, 0)
	d.Reason = "already terminating: not counted, never chosen again"
	return &prediction.Prediction{
		APIVersion: prediction.APIVersion, Kind: prediction.Kind,
		Target:          prediction.Target{Kind: "ReplicaSet", Namespace: "shop", Name: "web"},
		CurrentReplicas: 3, DesiredReplicas: 1, ReferenceTime: refTime,
		Rules:      prediction.RulesInfo{KubernetesVersion: "1.37", VersionSource: "flag", FeatureGates: map[string]bool{"PodDeletionCost": true}},
		Message:    "2 pod(s) would be deleted: a, b (most likely outcome; some fates are left to chance)",
		Victims:    []string{"a", "b"},
		Pods:       []prediction.Pod{a, b, c, d},
		Contenders: []prediction.ContenderGroup{{Pods: []string{"b", "c"}, Delete: 1, Rule: "TIE", Reason: "full tie", Exact: true}},
		Warnings:   []string{"something to know"},
	}
}

func table(t *testing.T, p *prediction.Prediction, wide bool) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := Table(&buf, p, TableOptions{Wide: wide}); err != nil {
		t.Fatal(err)
	}
	return strings.Split(buf.String(), "\n")
}

func lineIndex(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

func TestTableCutLineAfterLastVictimAndOpenFates(t *testing.T) {
	lines := table(t, openPrediction(), false)
	out := strings.Join(lines, "\n")
	header := lineIndex(lines, "#  POD")
	rowB, rowC := lineIndex(lines, "2  b "), lineIndex(lines, "3  c ")
	cut := lineIndex(lines, "---- cut:")
	if header < 0 || rowB < 0 || rowC < 0 || cut < 0 {
		t.Fatalf("header %d, b %d, c %d, cut %d in:\n%s", header, rowB, rowC, cut, out)
	}
	if cut != rowB+1 || rowC != cut+1 {
		t.Errorf("cut line at %d, want right after the last victim (row %d) and before the first survivor (row %d):\n%s", cut, rowB, rowC, out)
	}
	if lines[cut] != "---- cut: 2 deleted; chance decides the rows between 0% and 100% ----" {
		t.Errorf("cut line %q", lines[cut])
	}
	if strings.Count(out, "---- cut:") != 1 {
		t.Errorf("more than one cut line:\n%s", out)
	}
	// An exact tie is called a tie, never a likelier outcome.
	if !strings.Contains(lines[rowB], "tie 50%") {
		t.Errorf("open victim row %q, want tie 50%%", lines[rowB])
	}
	if !strings.Contains(lines[rowB], "[open choice 0]") || !strings.Contains(lines[rowB], "tie with c") {
		t.Errorf("open victim row %q, want the tie and its open choice", lines[rowB])
	}
	if !strings.Contains(lines[rowC], "tie 50%") {
		t.Errorf("open survivor row %q, want tie 50%%", lines[rowC])
	}
	rowA := lineIndex(lines, "1  a ")
	if rowA < 0 || !strings.Contains(lines[rowA], "DELETE 100%") {
		t.Errorf("certain victim row %q", lines[max(rowA, 0)])
	}
	// WHY: against the first pod kept (c), not the next pod (b).
	if !strings.Contains(lines[rowA], "R3 not ready vs ready (c)") {
		t.Errorf("decided-by of a: %q", lines[rowA])
	}
	rowD := lineIndex(lines, "-  d ")
	if rowD < 0 || !strings.Contains(lines[rowD], "terminating") || !strings.Contains(lines[rowD], "already terminating") {
		t.Errorf("terminating row %q", lines[max(rowD, 0)])
	}
	for _, want := range []string{
		"Target:     ReplicaSet shop/web, 3 -> 1 replicas",
		"Rules:      Kubernetes 1.37 (flag)",
		"Gates:      PodDeletionCost=true",
		"Reference:  2025-01-01T12:00:00Z (no age-based rule can change this outcome)",
		"Result:     2 pod(s) deleted: 1 for certain, 1 by a tie among b, c (see Open choice)",
		"FATE: ", "WHY: ",
		"Open choice [0]: 1 of b, c go (exact). Why: full tie.",
		"Warnings:\n  - something to know",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for i, l := range lines {
		if l != strings.TrimRight(l, " ") {
			t.Errorf("line %d has trailing spaces: %q", i, l)
		}
	}
}

func TestTableNoCutLineWhenNothingOrEverythingGoes(t *testing.T) {
	p := openPrediction()
	for i := range p.Pods {
		p.Pods[i].Fate, p.Pods[i].Certain, p.Pods[i].ContenderGroup = prediction.FateKeep, true, nil
	}
	p.Victims, p.Contenders = []string{}, nil
	if out := strings.Join(table(t, p, false), "\n"); strings.Contains(out, "---- cut") || strings.Contains(out, "Open choice") {
		t.Errorf("no victims, but:\n%s", out)
	}
	for i := range p.Pods {
		p.Pods[i].Fate = prediction.FateDelete
	}
	if out := strings.Join(table(t, p, false), "\n"); strings.Contains(out, "---- cut") {
		t.Errorf("every pod goes, but a cut line is printed:\n%s", out)
	}
}

func TestTableDeploymentSplitStepsAndCreates(t *testing.T) {
	v := pod("old-1", prediction.FateDelete, 1, true, 1)
	v.Step, v.ReplicaSet = prediction.StepScale, "web-old"
	r := pod("old-2", prediction.FateDelete, 2, true, 1)
	r.Step, r.ReplicaSet = prediction.StepRollout, "web-old"
	k := pod("new-1", prediction.FateKeep, 3, true, 0)
	k.ReplicaSet = "web-new"
	p := &prediction.Prediction{
		Target:          prediction.Target{Kind: "Deployment", Namespace: "shop", Name: "web"},
		CurrentReplicas: 3, DesiredReplicas: 1, ReferenceTime: refTime,
		Victims: []string{"old-1", "old-2"}, Pods: []prediction.Pod{v, r, k}, Creates: 1,
		ReplicaSets: []prediction.ReplicaSetStep{
			{Name: "web-old", Before: 2, AfterScale: 1, Final: 0, Deleted: 2},
			{Name: "web-new", New: true, Before: 1, AfterScale: 0, Final: 1, Created: 1},
		},
	}
	lines := table(t, p, true)
	out := strings.Join(lines, "\n")
	for _, want := range []string{
		"Split:      before -> after the scale -> after the rollout continues\n            web-old 2 -> 1 -> 0\n            web-new (new) 1 -> 0 -> 1",
		"The controllers would also create 1 pod(s) (Pending, never victims).",
		"UID", "STEP", "BUCKETS r/c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	row := lines[lineIndex(lines, "2  old-2 ")]
	if !strings.Contains(row, "DELETE 100%") || !strings.Contains(row, "rollout web-old") {
		t.Errorf("rollout victim row %q", row)
	}
	row = lines[lineIndex(lines, "1  old-1 ")]
	if strings.Contains(row, "rollout") || !strings.Contains(row, "scale web-old") {
		t.Errorf("scale victim row %q", row)
	}
	if cut := lineIndex(lines, "---- cut:"); cut != lineIndex(lines, "2  old-2 ")+1 {
		t.Errorf("cut line at %d:\n%s", cut, out)
	}
}

func TestNames(t *testing.T) {
	p := openPrediction()
	var buf bytes.Buffer
	if err := Names(&buf, p.Target.Namespace, p); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "pod/a\npod/b\n" {
		t.Errorf("-o name printed %q", buf.String())
	}
}

// pod/NAME has no namespace: victims outside the command's namespace are
// refused whole, never printed as if they were in it.
func TestNamesAcrossNamespaces(t *testing.T) {
	p := &prediction.Prediction{Target: prediction.Target{Kind: "Pod", Namespace: "team-a", Name: "scoring"},
		Victims: []string{"team-a/x", "default/api-1"}}
	var buf bytes.Buffer
	err := Names(&buf, "team-a", p)
	var ne *NamespaceError
	if !errors.As(err, &ne) || len(ne.Others) != 1 || ne.Others[0] != "default" || buf.Len() != 0 {
		t.Fatalf("err %v, printed %q", err, buf.String())
	}
	p.Victims = []string{"team-a/x", "team-a/y"}
	if err := Names(&buf, "team-a", p); err != nil || buf.String() != "pod/x\npod/y\n" {
		t.Errorf("err %v, printed %q", err, buf.String())
	}
}

// Every row shows the chance of deletion the same way; a chance strictly
// between 0 and 1 never prints as 0% or 100%.
func TestFateCell(t *testing.T) {
	p := &prediction.Prediction{}
	for _, tc := range []struct {
		fate string
		prob float64
		want string
	}{
		{prediction.FateDelete, 1, "DELETE 100%"}, {prediction.FateKeep, 0, "keep 0%"},
		{prediction.FateDelete, 2.0 / 3, "DELETE 67%"}, {prediction.FateKeep, 1.0 / 3, "keep 33%"},
		{prediction.FateDelete, 0.9999, "DELETE >99%"}, {prediction.FateKeep, 0.0001, "keep <1%"},
		{prediction.FateTerminating, 0, "terminating"},
	} {
		if got := fateCell(tieGroups(p), prediction.Pod{Fate: tc.fate, DeleteProbability: tc.prob}); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.fate, tc.prob, got, tc.want)
		}
	}
}

// The compact layout fits 80 columns: short labels in the rows, the words
// in a numbered legend.
func TestCompactLayout(t *testing.T) {
	var buf bytes.Buffer
	if err := Table(&buf, openPrediction(), TableOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"#  POD  NODE  STATUS    FATE", "R3 readiness [1]", "[1] a: R3 not ready vs ready (c)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for i, l := range strings.Split(out, "\n") {
		if len(l) > 80 {
			t.Errorf("line %d is %d columns: %q", i, len(l), l)
		}
	}
}

// A pod in the open groups of two rounds is one open pod.
func TestResultLineCountsEachOpenPodOnce(t *testing.T) {
	p := &prediction.Prediction{Victims: []string{"a", "b"},
		Pods:       []prediction.Pod{{Name: "a", Fate: prediction.FateDelete}, {Name: "b", Fate: prediction.FateDelete}, {Name: "c", Fate: prediction.FateKeep}, {Name: "d", Fate: prediction.FateKeep}},
		Contenders: []prediction.ContenderGroup{{Pods: []string{"a", "b", "c"}, Delete: 1, Rule: "TIE"}, {Pods: []string{"b", "c", "d"}, Delete: 1, Rule: "TIE"}}}
	if got := resultLine(p); !strings.Contains(got, "among 4 open pods") {
		t.Errorf("result line %q, want 4 open pods", got)
	}
}
