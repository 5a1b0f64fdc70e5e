package evictgen

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
)

// Draws are classes of node added after the older releases were recorded.
// Generate leaves them off, so that regenerating those recordings gives
// the same scenarios; GenerateWith draws them from their own seeded
// stream, over the same base node.
type Draws struct {
	// NoHard: a kubelet whose configuration has no hard thresholds (its
	// configz has no evictionHard): every threshold is soft.
	NoHard bool
	// CutTies: identical pods ranked first under memory pressure that one
	// or two evictions resolve, so that the cut falls inside their tie.
	CutTies bool
	// Pending: pods that have just started (Pending, ContainerCreating),
	// missing from the summary as the kubelet's stats leave them out.
	Pending bool
}

// AllDraws turns every class on.
var AllDraws = Draws{NoHard: true, CutTies: true, Pending: true}

// GenerateWith is Generate with the classes of d drawn on top.
func GenerateWith(seed uint64, maxPods, minor int, d Draws) *Scenario {
	s := Generate(seed, maxPods, minor)
	rng := rand.New(rand.NewPCG(seed, 0xc1a55))
	if d.CutTies && rng.IntN(3) == 0 {
		s.drawCutTie(rng)
	}
	if d.Pending && rng.IntN(4) == 0 {
		s.drawPending(rng)
	}
	if d.NoHard && rng.IntN(4) == 0 {
		s.drawNoHard(rng)
	}
	return s
}

func pickOf[T any](rng *rand.Rand, vs ...T) T { return vs[rng.IntN(len(vs))] }

// drawCutTie adds k identical BestEffort pods of the lowest priority, the
// first in the memory ranking, and puts memory.available short of its
// threshold by less than n of them free (n < k): the kubelet evicts n of
// the k in map order. Only memory is under pressure.
func (s *Scenario) drawCutTie(rng *rand.Rand) {
	k := 2 + rng.IntN(2)
	n := 1 + rng.IntN(k-1)
	ws := pickOf[int64](rng, 128, 256, 384) * Mi
	p := Pod{Prio: -100, WS: ws, Procs: 10, Root: 1 << 30, RootI: 1000}
	if rng.IntN(2) == 0 {
		g := pickOf[int64](rng, 5, 20)
		p.TGPS = &g
	}
	for range k {
		p.Name = fmt.Sprintf("p%02d", len(s.Pods))
		s.Pods = append(s.Pods, p)
	}
	var total int64
	for _, q := range s.Pods {
		total += q.WS
	}
	deficit := int64(n-1)*ws + ws/4 + rng.Int64N(ws/2) // (n-1)·ws < deficit < n·ws
	// Above the deficit, so that available memory stays positive.
	T := pickOf[int64](rng, 256, 512)*Mi + (deficit/Mi)*Mi
	s.MemCap = max(s.MemCap, 3*total+T)
	s.AllocCap = s.MemCap - 512*Mi
	s.MemOther = s.MemCap - (T - deficit) - total
	s.NodeOther, s.ImageOther, s.NodeIOther, s.ImageIOther, s.PIDOther = 0, 0, 0, 0, 100
	s.Hard["memory.available"] = fmt.Sprint(T/Mi) + "Mi"
	s.Hard["nodefs.available"], s.Hard["imagefs.available"] = "10%", "15%"
	s.Soft, s.Grace, s.MinRe = nil, nil, nil
	s.Families = []string{fmt.Sprintf("memory tie %d of %d", n, k)}
}

// drawPending adds one or two pods the kubelet admitted seconds before the
// summary, whose containers are still being created: no stats, no usage.
func (s *Scenario) drawPending(rng *rand.Rand) {
	for range 1 + rng.IntN(2) {
		p := Pod{Name: fmt.Sprintf("p%02d", len(s.Pods)), Prio: int32(pickOf(rng, 0, 100, 1000)), Pending: true,
			StartedAgo: pickOf[int64](rng, 1, 3, 10)}
		if rng.IntN(2) == 0 {
			p.MemReq = pickOf[int64](rng, 64, 256) * Mi
		}
		s.Pods = append(s.Pods, p)
	}
	s.Families = append(s.Families, "pending")
}

// drawNoHard makes every hard threshold soft (same value, a grace period
// of its own) and leaves evictionHard empty, as a kubelet configured with
// `evictionHard: {}` or only soft thresholds runs; a soft threshold with a
// 0s grace period acts as a hard one.
func (s *Scenario) drawNoHard(rng *rand.Rand) {
	soft, grace := maps.Clone(s.Soft), maps.Clone(s.Grace)
	if soft == nil {
		soft, grace = map[string]string{}, map[string]string{}
	}
	// One grace period for all: the plugin takes every soft threshold's
	// grace period as served (the what-if is that the pressure lasts),
	// which a node whose signals fall due at different syncs is not.
	g := pickOf(rng, "30s", "30s", "1m", "0s")
	for _, v := range grace {
		g = v // the soft memory threshold's
	}
	for _, sig := range slices.Sorted(maps.Keys(s.Hard)) {
		if _, ok := soft[sig]; !ok {
			soft[sig], grace[sig] = s.Hard[sig], g
		}
	}
	s.Hard, s.Soft, s.Grace = map[string]string{}, soft, grace
	s.MaxGrace = pickOf[int64](rng, 0, 10, 30, 120)
	s.Families = append(s.Families, "no hard")
}

// DrawnClasses names the classes of Draws drawn for s.
func DrawnClasses(s *Scenario) []string {
	var out []string
	for _, f := range s.Families {
		switch {
		case f == "no hard" || f == "pending":
			out = append(out, f)
		case strings.HasPrefix(f, "memory tie"):
			out = append(out, "tie at the cut")
		}
	}
	return out
}
