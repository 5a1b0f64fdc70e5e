package preemptgen

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen"
)

// File is a release's recorded preemptions, written gzip-compressed to
// $ORACLE_DIR/preemption-v1.NN.json.gz. The clusters are not stored: the
// judge regenerates each from its seed and checks the hash.
type File struct {
	Minor      int    `json:"minor"`
	Kubernetes string `json:"kubernetes"`
	// Parallelism of the scheduler's framework: 1, so that the nodes are
	// dry-run in offset order and each run is reproducible.
	Parallelism int    `json:"parallelism"`
	Cases       []Case `json:"cases"`
}

// Case is what the real scheduler did with one scenario.
type Case struct {
	Seed uint64 `json:"seed"`
	Hash string `json:"hash"`
	What string `json:"what"`
	// Skipped says why the release could not take the scenario.
	Skipped string `json:"skipped,omitempty"`
	// FitsOn: nodes that passed the Filter phase (no preemption).
	FitsOn []string `json:"fitsOn,omitempty"`
	// Potential is how many nodes preemption might help on.
	Potential int `json:"potential,omitempty"`
	// Runs group the tried candidate offsets by their outcome.
	Runs []Outcome `json:"runs,omitempty"`
}

// Outcome is one result of DefaultPreemption and how many of the tried
// offsets led to it.
type Outcome struct {
	Offsets int `json:"offsets"`
	// Tied are the nodes the scheduler could nominate from that scan (the
	// last criterion's tie goes to a Go map's order), each with the pods
	// it would delete; empty: no nomination.
	Tied []Choice `json:"tied,omitempty"`
}

// Choice is a nominated node and its victims' names, sorted.
type Choice struct {
	Node    string   `json:"node"`
	Victims []string `json:"victims"`
}

// Version is what a version module supplies.
type Version struct {
	Minor      int
	Kubernetes string
	// Preempt decodes the scenario strictly into the release's types (an
	// unknown field: return a Case with Skipped), runs its Filter phase
	// and, if nothing fits, its DefaultPreemption once per offset of
	// Offsets, recording each outcome with AddRun.
	Preempt func(sc *Scenario) (*Case, error)
}

// Offsets are the candidate offsets tried out of potential nodes when at
// most numCandidates are dry-run: one when all are (the offset then only
// rotates the order), else up to 40 spread evenly.
func Offsets(potential, numCandidates int) []int {
	if potential <= numCandidates {
		return []int{0}
	}
	n := min(potential, 40)
	out := make([]int, n)
	for i := range out {
		out[i] = i * potential / n
	}
	return out
}

// TieSet returns the candidates that tie with winner on every criterion:
// pick(a, b) is the release's own SelectCandidate on the two, and a tie
// is a Go map's order, so each is tried in both orders several times (a
// real tie goes undetected with probability 2^-32).
func TieSet(winner string, candidates []string, pick func(a, b string) string) []string {
	tied := []string{winner}
	for _, c := range candidates {
		if c == winner {
			continue
		}
		for range 16 {
			if pick(winner, c) == c || pick(c, winner) == c {
				tied = append(tied, c)
				break
			}
		}
	}
	slices.Sort(tied)
	return tied
}

// Tied is TieSet with each node's victims (names).
func Tied(winner string, victims map[string][]string, pick func(a, b string) string) []Choice {
	var out []Choice
	for _, node := range TieSet(winner, slices.Sorted(maps.Keys(victims)), pick) {
		out = append(out, Choice{Node: node, Victims: append([]string{}, victims[node]...)})
	}
	return out
}

// WaitFor polls done for up to 5 s: the scheduler's event handlers take
// the informers' objects into its cache and queue asynchronously.
func WaitFor(done func() bool) error {
	for range 1000 {
		if done() {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("the scheduler's cache and queue did not take the cluster in 5 s")
}

// AddRun counts one offset's outcome.
func (c *Case) AddRun(tied []Choice) {
	for i := range tied {
		slices.Sort(tied[i].Victims)
	}
	slices.SortFunc(tied, func(a, b Choice) int { return strings.Compare(a.Node, b.Node) })
	key := fmt.Sprint(tied)
	for i := range c.Runs {
		if fmt.Sprint(c.Runs[i].Tied) == key {
			c.Runs[i].Offsets++
			return
		}
	}
	c.Runs = append(c.Runs, Outcome{Offsets: 1, Tied: tied})
}

// Run records the release's preemptions on ORACLE_PREEMPT_SCENARIOS
// (default 300) scenarios from ORACLE_SEED and writes the file.
func Run(t *testing.T, v Version) {
	base := oraclegen.EnvInt(t, "ORACLE_SEED", 20261126)
	n := int(oraclegen.EnvInt(t, "ORACLE_PREEMPT_SCENARIOS", 300))
	file := File{Minor: v.Minor, Kubernetes: v.Kubernetes, Parallelism: 1}
	var skipped, fits, none, nominated, offsets int
	for i := range n {
		sc := Generate(base+uint64(i), v.Minor)
		c, err := v.Preempt(sc)
		if err != nil {
			t.Fatalf("seed %d (%s): %v", sc.Seed, sc.What, err)
		}
		c.Seed, c.Hash, c.What = sc.Seed, sc.Hash(), sc.What
		switch {
		case c.Skipped != "":
			skipped++
			t.Logf("seed %d skipped: %s", sc.Seed, c.Skipped)
		case len(c.FitsOn) > 0:
			fits++
		case len(c.Runs) == 1 && len(c.Runs[0].Tied) == 0:
			none++
		default:
			nominated++
		}
		for _, r := range c.Runs {
			offsets += r.Offsets
		}
		file.Cases = append(file.Cases, *c)
	}
	t.Logf("k8s.io/kubernetes %s: %d scenarios: %d fit, %d without nomination, %d nominating (%d offsets tried), %d skipped",
		v.Kubernetes, n, fits, none, nominated, offsets, skipped)
	oraclegen.WriteFile(t, fmt.Sprintf("preemption-v1.%d.json.gz", v.Minor), &file)
}

// Nomination is one DefaultPreemption run: the node it nominated ("" for
// none), every dry-run candidate's victims, and the release's
// SelectCandidate on two of them.
type Nomination struct {
	Winner  string
	Victims map[string][]string
	Pick    func(a, b string) string
}

// RunOffsets runs preempt once per offset of Offsets and records each
// outcome.
func (c *Case) RunOffsets(numCandidates int, preempt func(offset int) (Nomination, error)) error {
	for _, offset := range Offsets(c.Potential, numCandidates) {
		n, err := preempt(offset)
		if err != nil {
			return err
		}
		if n.Winner == "" {
			c.AddRun(nil)
			continue
		}
		c.AddRun(Tied(n.Winner, n.Victims, n.Pick))
	}
	return nil
}
