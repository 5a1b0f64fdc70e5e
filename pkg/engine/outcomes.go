package engine

import (
	"cmp"
	"slices"
	"strings"
)

// Outcome is one way an open group can go: the members deleted (sorted by
// name) and how likely that is. A Deployment's later steps depend on which
// members an earlier step took, not only on each member's chance.
type Outcome struct {
	Delete      []string
	Probability float64
}

// maxOutcomes bounds the outcomes listed for one group.
const maxOutcomes = 64

// tieOutcomes: m of a full tie go, every subset equally likely. Past
// maxOutcomes subsets, the k cyclic windows of m in name order stand for
// them: each member is in m of the k windows, so its chance stays m/k, but
// the list is then partial.
func tieOutcomes(names []string, m int) ([]Outcome, bool) {
	names = slices.Clone(names)
	slices.Sort(names)
	k := len(names)
	if binomialAtMost(k, m, maxOutcomes) {
		var out []Outcome
		pick := make([]string, 0, m)
		var rec func(from int)
		rec = func(from int) {
			if len(pick) == m {
				out = append(out, Outcome{Delete: slices.Clone(pick)})
				return
			}
			for i := from; i <= k-(m-len(pick)); i++ {
				pick = append(pick, names[i])
				rec(i + 1)
				pick = pick[:len(pick)-1]
			}
		}
		rec(0)
		for i := range out {
			out[i].Probability = 1 / float64(len(out))
		}
		return out, false
	}
	out := make([]Outcome, 0, k)
	for i := 0; i < k; i++ {
		var del []string
		for j := 0; j < m; j++ {
			del = append(del, names[(i+j)%k])
		}
		slices.Sort(del)
		out = append(out, Outcome{Delete: del, Probability: 1 / float64(k)})
	}
	return out, true
}

// binomialAtMost reports whether C(n, k) <= limit.
func binomialAtMost(n, k, limit int) bool {
	k = min(k, n-k)
	c := 1
	for i := 1; i <= k; i++ {
		c = c * (n - k + i) / i
		if c > limit {
			return false
		}
	}
	return true
}

// outcomeTally counts the outcomes of an open group: which of its members
// each trial (or input order) put before the cut.
type outcomeTally struct {
	names  []string    // member names by local index
	local  map[int]int // key index -> local index
	counts map[uint64]float64
	total  float64
	over   bool // more than 64 members: not tallied
}

func newOutcomeTally(active []*Pod, members []int) *outcomeTally {
	t := &outcomeTally{local: make(map[int]int, len(members)), counts: map[uint64]float64{}, over: len(members) > 64}
	for i, k := range members {
		t.local[k] = i
		t.names = append(t.names, active[k].Name)
	}
	return t
}

// add records one outcome: the key indices before the cut, with weight w.
func (t *outcomeTally) add(before []int, w float64) {
	t.total += w
	if t.over {
		return
	}
	var mask uint64
	for _, k := range before {
		if i, ok := t.local[k]; ok {
			mask |= 1 << i
		}
	}
	t.counts[mask] += w
}

// outcomes lists the tallied outcomes, most likely first, at most
// maxOutcomes of them (partial when some were left out).
func (t *outcomeTally) outcomes() ([]Outcome, bool) {
	if t.over || t.total == 0 {
		return nil, true
	}
	out := make([]Outcome, 0, len(t.counts))
	for mask, w := range t.counts {
		var del []string
		for i, n := range t.names {
			if mask&(1<<i) != 0 {
				del = append(del, n)
			}
		}
		slices.Sort(del)
		out = append(out, Outcome{Delete: del, Probability: w / t.total})
	}
	slices.SortFunc(out, func(a, b Outcome) int {
		if r := cmp.Compare(b.Probability, a.Probability); r != 0 {
			return r
		}
		return strings.Compare(strings.Join(a.Delete, ","), strings.Join(b.Delete, ","))
	})
	if len(out) > maxOutcomes {
		return out[:maxOutcomes], true
	}
	return out, false
}
