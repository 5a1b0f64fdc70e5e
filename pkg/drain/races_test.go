package drain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// raceWorld: node-1 holds the owners' pods (one CPU each, a ReplicaSet
// per distinct name); node-2 has room for free of them; node-3 is full.
func raceWorld(free int, owners ...string) *world {
	w := newWorld(node("node-1", "8"), node("node-2", "8"), node("node-3", "1"))
	w.pod("filler-3", "node-3", w.rs("filler3", 1, "1"), "ReplicaSet", true)
	if free < 8 {
		w.pod("filler-2", "node-2", w.rs("filler2", 1, fmt.Sprint(8-free)), "ReplicaSet", true)
	}
	count := map[string]int32{}
	for _, o := range owners {
		count[o]++
	}
	made := map[string]*appsv1.ReplicaSet{}
	for i, o := range owners {
		if made[o] == nil {
			made[o] = w.rs(o, count[o], "1")
		}
		w.pod(fmt.Sprintf("%s-%d", o, i), "node-1", made[o], "ReplicaSet", true)
	}
	return w
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Three owners race for two places: 6 orders, each replacement is
// scheduled in 4 of them.
func TestRaceThreeOwnersTwoPlaces(t *testing.T) {
	r := raceWorld(2, "a", "b", "c").predict("node-1")
	if r.Unweighed || r.Certain {
		t.Fatalf("unweighed %v certain %v", r.Unweighed, r.Certain)
	}
	for _, rep := range r.Replacements {
		var placed, pending float64
		for _, c := range rep.Placements {
			switch c.Value {
			case "node-2":
				placed += c.P
			case "":
				pending += c.P
			}
		}
		if !near(placed, 2.0/3) || !near(pending, 1.0/3) || rep.Certain {
			t.Errorf("replacement of %s: %+v", rep.For, rep.Placements)
		}
	}
	if n := r.Nodes[0]; n.Outcome != OutcomeDrained || n.Outcomes != nil {
		t.Errorf("node-1: %+v (it drains in every order)", n)
	}
}

// Two pods of one owner race for one place: one order (they are alike),
// and each is the one scheduled half the time.
func TestRaceOneOwnerShares(t *testing.T) {
	r := raceWorld(1, "web", "web").predict("node-1")
	if len(r.Replacements) != 2 {
		t.Fatalf("replacements %+v", r.Replacements)
	}
	for _, rep := range r.Replacements {
		if len(rep.Placements) != 2 || !near(rep.Placements[0].P, 0.5) || !near(rep.Placements[1].P, 0.5) || rep.Certain {
			t.Errorf("replacement of %s: %+v", rep.For, rep.Placements)
		}
	}
	if strings.Contains(strings.Join(r.Uncertain, "\n"), "orders that matter") {
		t.Errorf("one owner has one order, yet the warnings say orders were run: %v", r.Uncertain)
	}
}

// Enough room: no race, no chances, as before.
func TestRaceNoneWithRoom(t *testing.T) {
	r := raceWorld(8, "a", "b").predict("node-1")
	for _, rep := range r.Replacements {
		if rep.Placements != nil || rep.Node != "node-2" {
			t.Errorf("replacement of %s: node %q, placements %+v", rep.For, rep.Node, rep.Placements)
		}
	}
}

// Five owners for one place are 120 orders: only creation order and its
// reverse run, and the chances are not weighed (said so).
func TestRaceTooManyOrders(t *testing.T) {
	r := raceWorld(1, "a", "b", "c", "d", "e").predict("node-1")
	if !r.Unweighed || !strings.Contains(strings.Join(r.Uncertain, "\n"), "without chances") {
		t.Fatalf("unweighed %v, %v", r.Unweighed, r.Uncertain)
	}
	// Creation order schedules the first, its reverse the last.
	for _, i := range []int{0, 4} {
		if rep := r.Replacements[i]; len(rep.Placements) != 2 || rep.Placements[0].Value != "node-2" && rep.Placements[1].Value != "node-2" {
			t.Errorf("replacement of %s: %+v", rep.For, rep.Placements)
		}
	}
}

func TestRoundOrders(t *testing.T) {
	w := raceWorld(1, "a", "a", "b")
	s := newState(w.in)
	var q []*podState
	for _, p := range s.pods {
		if strings.HasPrefix(p.key, "default/a-") || strings.HasPrefix(p.key, "default/b-") {
			q = append(q, p)
		}
	}
	orders := roundOrders(q, maxOrders)
	if len(orders) != 3 || orders[0][0] != q[0] || orders[0][2] != q[2] {
		t.Fatalf("orders of a, a, b: %d", len(orders))
	}
	if n := len(roundOrders(q, 1)); n != 2 {
		t.Errorf("limit 1 gives %d orders, want limit+1", n)
	}
}

func TestBranchBudget(t *testing.T) {
	for pods, want := range map[int]int{0: 16, 100: 16, 2500: 16, 5000: 8, 20000: 2, 150000: 2} {
		if got := branchBudget(pods); got != want {
			t.Errorf("%d pods: %d runs, want %d", pods, got, want)
		}
	}
}

// Random small clusters: every weighed race is a distribution (outcomes
// sum to 1, placements to at most 1), the fields that stay show its
// likeliest entry, and every node a placement names is a candidate.
func TestRaceChancesAreDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 40))
	raced := 0
	for trial := range 300 {
		w := newWorld(node("node-1", "3"), node("node-2", "3"), node("node-3", fmt.Sprint(1+rng.IntN(3))), node("node-4", fmt.Sprint(rng.IntN(3))))
		for o := range 1 + rng.IntN(3) {
			name := fmt.Sprintf("o%d", o)
			n := 1 + rng.IntN(3)
			rs := w.rs(name, int32(n), "1")
			for i := range n {
				w.pod(fmt.Sprintf("%s-%d", name, i), fmt.Sprintf("node-%d", 1+rng.IntN(3)), rs, "ReplicaSet", true)
			}
			if rng.IntN(2) == 0 {
				w.pdb(name, intOr(max(n-1, 1)), nil)
			}
		}
		r := w.predict([][]string{{"node-1"}, {"node-1", "node-2"}}[rng.IntN(2)]...)
		if r.Unweighed {
			continue
		}
		for _, n := range r.Nodes {
			if n.Outcomes == nil {
				continue
			}
			raced++
			sum := 0.0
			for i, c := range n.Outcomes {
				sum += c.P
				if i > 0 && c.P > n.Outcomes[i-1].P+1e-9 {
					t.Errorf("trial %d: %s outcomes not likeliest first: %+v", trial, n.Node, n.Outcomes)
				}
			}
			if !near(sum, 1) || n.Outcome != n.Outcomes[0].Value || n.Certain {
				t.Errorf("trial %d: %s: outcome %s, certain %v, outcomes %+v", trial, n.Node, n.Outcome, n.Certain, n.Outcomes)
			}
		}
		for _, rep := range r.Replacements {
			sum := 0.0
			for _, c := range rep.Placements {
				sum += c.P
				if c.Value != "" && !slices.Contains(rep.Candidates, c.Value) {
					t.Errorf("trial %d: %s placed on %s, not a candidate %v", trial, rep.For, c.Value, rep.Candidates)
				}
			}
			if rep.Placements != nil && (sum > 1+1e-9 || rep.Node != rep.Placements[0].Value || rep.Certain) {
				t.Errorf("trial %d: %s: node %q, placements %+v", trial, rep.For, rep.Node, rep.Placements)
			}
		}
	}
	if raced == 0 {
		t.Error("no trial raced: the sample does not test the chances")
	}
	t.Logf("%d raced nodes", raced)
}

// Two pods of a and one of b race for two places. Over the 6 orders of
// the three evictions, each pod is among the first two in 4: every
// replacement is scheduled with 2/3. The plugin runs 3 orders of owners
// (a a b, a b a, b a a) and shares a's nodes between a's two: the same.
func TestRaceOwnersAndAlikeAgreeWithEveryOrder(t *testing.T) {
	r := raceWorld(2, "a", "a", "b").predict("node-1")
	if len(r.Replacements) != 3 {
		t.Fatalf("replacements %+v", r.Replacements)
	}
	for _, rep := range r.Replacements {
		placed := 0.0
		for _, c := range rep.Placements {
			if c.Value == "node-2" {
				placed += c.P
			}
		}
		if !near(placed, 2.0/3) {
			t.Errorf("replacement of %s: scheduled with %v, want 2/3 (%+v)", rep.For, placed, rep.Placements)
		}
	}
}
