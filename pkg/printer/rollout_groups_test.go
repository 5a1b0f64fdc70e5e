package printer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// A large rollout: 20 deletions and 40 new pods in the first step, then 8
// alike steps. The table prints 5 deleted pods, the new pods as one row,
// 3 of the alike steps and a line for the rest; -o wide prints them all.
func TestRolloutTableGroupsAlike(t *testing.T) {
	first := prediction.RolloutStep{Certain: true, WaitsFor: 40, AvailableMin: 80}
	for i := range 20 {
		first.Deleted = append(first.Deleted, fmt.Sprintf("ns/old-%02d", i))
		first.Why = append(first.Why, "R6 more recently ready goes first")
	}
	for range 40 {
		first.Created = append(first.Created, prediction.RolloutCreate{Candidates: []string{"a", "b"}, Reason: "the scheduler's scoring picks one of 2 nodes"})
	}
	steps := []prediction.RolloutStep{first}
	for i := range 8 {
		steps = append(steps, prediction.RolloutStep{Certain: true, WaitsFor: 1, AvailableMin: 99,
			Deleted: []string{fmt.Sprintf("ns/later-%d", i)}, Why: []string{"every pod of the ReplicaSet goes"}, Created: []prediction.RolloutCreate{{Node: fmt.Sprintf("n%d", i)}}})
	}
	p := &prediction.Prediction{Message: "the rollout completes", Certain: true,
		Rollout: &prediction.Rollout{Kind: "Deployment", Namespace: "ns", Name: "web", Strategy: "RollingUpdate", Change: "restart", Outcome: prediction.RolloutCompletes, Steps: steps}}
	var b bytes.Buffer
	if err := RolloutTable(&b, p, TableOptions{Width: 300}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"ns/old-04", "15 more like these (-o wide for all): deleted after these, in rank order: ns/old-05", "(40 new pods)  created",
		"STEP 4:", "STEPS 5-9: 1 deleted, 1 created; available at least 99; waits for 1 new pod(s) available; 5 more like these (-o wide for all)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ns/old-05 ") || strings.Contains(out, "STEP 5:") {
		t.Errorf("alike rows or steps printed:\n%s", out)
	}
	b.Reset()
	if err := RolloutTable(&b, p, TableOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	if wide := b.String(); strings.Count(wide, "\nSTEP ") != 9 || !strings.Contains(wide, "ns/old-19") || strings.Contains(wide, "more like these") {
		t.Errorf("-o wide:\n%s", wide)
	}
}
