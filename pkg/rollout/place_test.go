package rollout

import (
	"testing"
)

// Where the filters pass on several nodes the scheduler's scores decide:
// the surge pod goes to the least allocated node (the empty large one),
// and the first step is certain. Two alike empty nodes tie: the pod's node is undetermined
// (1.37 breaks ties in an evaluation order the plugin cannot see).
func TestSurgePodPlacedByScores(t *testing.T) {
	res, err := Predict(fixture(2, "1", "0", node("n1", "10"), node("n2", "10"), node("n3", "20")))
	if err != nil {
		t.Fatal(err)
	}
	st := res.Rollout.Steps[0]
	if len(st.Created) != 1 || st.Created[0].Node != "n3" || len(st.Created[0].Candidates) != 0 || !st.Certain {
		t.Fatalf("step 1: %+v", st)
	}
	res, err = Predict(fixture(2, "1", "0", node("n1", "10"), node("n2", "10"), node("n3", "20"), node("n4", "20")))
	if err != nil {
		t.Fatal(err)
	}
	st = res.Rollout.Steps[0]
	if c := st.Created[0]; c.Node != "" || len(c.Candidates) != 2 || res.Certain {
		t.Fatalf("a tie: %+v (certain %v)", c, res.Certain)
	}
}
