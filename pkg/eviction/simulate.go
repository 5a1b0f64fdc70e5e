package eviction

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// maxStates bounds the tie branches followed at once.
const maxStates = 512

// simulation runs synchronize step by step. Pods alike in every figure any
// ranking or the freeing reads form a class: which member of a class goes
// is chance with equal odds, so a state only counts evictions per class.
type simulation struct {
	in      Input
	layout  Layout
	ths     []Threshold
	obs0    map[Signal]observation
	pods    []*podInfo
	classOf []int
	members [][]int // class -> pod indices

	// acc[c][step] is the probability that one given member of class c
	// is evicted at that step (summed over states, divided by its size).
	acc   []map[int]float64
	grace []map[int64]bool // per pod: grace periods it may get

	firstActive  []Threshold
	firstRanking *ranking
	firstSignal  Signal
	signalRace   string
	graceRace    bool
	// diskGraceRace: disk thresholds that rank alike, with different grace
	// periods, are met together.
	diskGraceRace bool
	// softGraceOrder: soft thresholds with different grace periods are met
	// together; which grace period ends first depends on when each was
	// first met, which a snapshot does not show.
	softGraceOrder bool
	truncated      bool
	diskReclaim    bool
	// noRanking: synchronize has no ranking functions (its first run
	// failed after recording the image filesystem), so it evicts only for
	// local storage.
	noRanking bool
	// reclaimSettles: before 1.22, a disk threshold held only by its
	// minimum reclaim stopped evicting after garbage collection.
	reclaimSettles bool
	stuck          bool
	localStorage   []LocalStorage
}

type simState struct {
	evicted []int
	prob    float64
	obs     map[Signal]observation
	prev    []Threshold
}

func newSimulation(in Input, _ any, l Layout, ths []Threshold, obs map[Signal]observation, pods []*podInfo) *simulation {
	s := &simulation{in: in, layout: l, ths: ths, obs0: obs, pods: pods}
	k := in.Rules.Kubelet
	index := map[string]int{}
	s.classOf = make([]int, len(pods))
	s.grace = make([]map[int64]bool, len(pods))
	for i, p := range pods {
		p.LocalStorage = ""
		if in.Config.LocalStorage {
			p.LocalStorage = localStorageViolation(p, l, k)
		}
		key := p.classKey()
		c, ok := index[key]
		if !ok {
			c = len(s.members)
			index[key] = c
			s.members = append(s.members, nil)
		}
		s.classOf[i] = c
		s.members[c] = append(s.members[c], i)
		s.grace[i] = map[int64]bool{}
	}
	s.acc = make([]map[int]float64, len(s.members))
	for c := range s.acc {
		s.acc[c] = map[int]float64{}
	}
	return s
}

// classKey is every figure that can tell two pods apart to the kubelet.
func (p *podInfo) classKey() string {
	tg := int64(-1)
	if p.TGPS != nil {
		tg = *p.TGPS
	}
	return fmt.Sprint(p.Critical != "", p.Stats != nil, p.Priority, p.MemRequest, p.StorageRequest, p.InodeRequest,
		p.WorkingSet, p.Processes, p.Root, p.Logs, p.Volumes, p.HostPath, tg, p.LocalStorage != "")
}

func (s *simulation) hardGrace() int64 {
	if s.in.Rules.Kubelet.OneSecondGrace {
		return 1
	}
	return 0
}

func (s *simulation) graceFor(t Threshold, p *podInfo) int64 {
	if t.Hard() {
		return s.hardGrace()
	}
	k := s.in.Rules.Kubelet
	g := s.in.Config.MaxPodGracePeriod
	if k.SoftGracePodCap && !k.SoftGraceOverwrite && p.TGPS != nil {
		g = min(g, *p.TGPS)
	}
	return g
}

// free is what evicting the pod gives back to each signal: its working
// set, its processes, and its disk usage on each filesystem (hostPath
// data stays).
func (s *simulation) free(obs map[Signal]observation, p *podInfo) map[Signal]observation {
	out := maps.Clone(obs)
	add := func(sig Signal, v int64) {
		if o, ok := out[sig]; ok && !o.Assumed {
			o.Available += v
			out[sig] = o
		}
	}
	add(MemoryAvailable, p.WorkingSet)
	add(AllocatableMemoryAvailable, p.WorkingSet)
	add(PIDAvailable, p.Processes)
	node := p.Logs.plus(p.Volumes)
	node.Bytes -= p.HostPath.Bytes
	node.Inodes -= p.HostPath.Inodes
	var image, container fsUsage
	switch l := s.layout; {
	case l.ImageFs && !l.Split:
		image, container = p.Root, p.Root
	case l.ImageFs && l.Split:
		node = node.plus(p.Root)
		container = node
	default:
		node = node.plus(p.Root)
		image, container = node, node
	}
	add(NodeFsAvailable, node.Bytes)
	add(NodeFsInodesFree, node.Inodes)
	add(ImageFsAvailable, image.Bytes)
	add(ImageFsInodesFree, image.Inodes)
	add(ContainerFsAvailable, container.Bytes)
	add(ContainerFsInodesFree, container.Inodes)
	return out
}

// active is the thresholds synchronize acts on: met now, or met before and
// not yet back above threshold + minimum reclaim (grace periods assumed
// served: the what-if is that the pressure lasts).
func (s *simulation) active(obs map[Signal]observation, prev []Threshold) []Threshold {
	var out []Threshold
	for _, t := range s.ths {
		if o, ok := obs[t.Signal]; ok && met(t, o, false) {
			out = append(out, t)
		}
	}
	for _, t := range prev {
		if o, ok := obs[t.Signal]; ok && met(t, o, true) && !slices.ContainsFunc(out, func(u Threshold) bool { return sameThreshold(t, u) }) {
			out = append(out, t)
		}
	}
	return out
}

// softGracesDiffer: two met soft thresholds have different grace periods.
func softGracesDiffer(active []Threshold) bool {
	var first time.Duration
	for _, t := range active {
		switch {
		case t.Hard():
		case first == 0:
			first = t.GracePeriod
		case t.GracePeriod != first:
			return true
		}
	}
	return false
}

func sameThreshold(a, b Threshold) bool {
	return a.Signal == b.Signal && a.GracePeriod == b.GracePeriod && a.Value.Text == b.Value.Text && a.Value.Percentage == b.Value.Percentage
}

// choices is byEvictionPriority + getReclaimableThreshold: a memory
// threshold if any is met (which one is map order: they rank alike), else
// one of the others in map order, each ranking with equal odds.
func (s *simulation) choices(active []Threshold) []Threshold {
	s.softGraceOrder = s.softGraceOrder || softGracesDiffer(active)
	var mem, other []Threshold
	for _, t := range active {
		if t.Signal.isMemory() {
			mem = append(mem, t)
		} else {
			other = append(other, t)
		}
	}
	if len(mem) > 0 {
		hard, soft := false, false
		for _, t := range mem {
			hard = hard || t.Hard()
			soft = soft || !t.Hard()
		}
		if hard && soft {
			s.graceRace = true
		}
		return mem[:1]
	}
	var out []Threshold
	seen := map[ranking]bool{}
	for _, t := range other {
		r := rankingFor(t.Signal, s.layout)
		if !seen[r] {
			seen[r] = true
			out = append(out, t)
		}
	}
	if len(out) > 1 {
		names := make([]string, len(out))
		for i, t := range out {
			names[i] = string(t.Signal)
		}
		s.signalRace = fmt.Sprintf("%s are met together: the kubelet acts on whichever its map yields first, and they rank pods differently (shown: equal odds)", strings.Join(names, ", "))
	}
	return out
}

// anyMet: some threshold is met, minimum reclaim aside (what
// reclaimNodeLevelResources checks after garbage collection before 1.22).
func (s *simulation) anyMet(obs map[Signal]observation) bool {
	return slices.ContainsFunc(s.ths, func(t Threshold) bool {
		o, ok := obs[t.Signal]
		return ok && met(t, o, false)
	})
}

func (s *simulation) remaining(st *simState) []*podInfo {
	var out []*podInfo
	for c, m := range s.members {
		for _, i := range m[st.evicted[c]:] {
			out = append(out, s.pods[i])
		}
	}
	return out
}

// addGraces records the grace periods pod i may get when t's ranking
// evicts it. With hard and soft memory thresholds met, map order picks the
// one acted on; with disk thresholds that rank alike but differ in grace
// period, map order and when each grace period ends do: either grace.
func (s *simulation) addGraces(i int, t Threshold, act []Threshold, rep *podInfo) {
	r := rankingFor(t.Signal, s.layout)
	for _, a := range act {
		alike := a.Signal == t.Signal || !t.Signal.isMemory() && !a.Signal.isMemory() && rankingFor(a.Signal, s.layout) == r
		if (!t.Signal.isMemory() || !a.Signal.isMemory()) && !alike {
			continue
		}
		g := s.graceFor(a, rep)
		if !t.Signal.isMemory() && a.GracePeriod != t.GracePeriod && g != s.graceFor(t, rep) {
			s.diskGraceRace = true
		}
		s.grace[i][g] = true
	}
}

func (s *simulation) indexOf(p *podInfo) int { return slices.Index(s.pods, p) }

// run follows synchronize step by step from the snapshot: the local
// storage violators first, then one ranking's first group per step, every
// branch of a tie or of a choice of thresholds weighed.
func (s *simulation) run() {
	st := &simState{evicted: make([]int, len(s.members)), prob: 1, obs: s.obs0}
	s.firstActive = s.active(s.obs0, nil)
	step := s.evictLocalStorage(st)
	if s.noRanking {
		return
	}
	states := []*simState{st}
	for ; len(states) > 0 && step <= len(s.pods)+1; step++ {
		next := map[string]*simState{}
		for _, st := range states {
			s.syncStep(st, step, next)
		}
		states = slices.Collect(maps.Values(next))
		if len(states) > maxStates {
			s.truncated = true
			slices.SortFunc(states, func(a, b *simState) int { return cmp.Compare(b.prob, a.prob) })
			states = states[:maxStates]
		}
	}
}

// evictLocalStorage is the first sync's local storage evictions: every
// violator at once. It returns the next step.
func (s *simulation) evictLocalStorage(st *simState) int {
	var violators []int
	for i, p := range s.pods {
		if p.LocalStorage == "" {
			continue
		}
		ls := LocalStorage{Pod: p.Name, Reason: p.LocalStorage, GracePeriodSeconds: s.hardGrace(), Evicted: p.Critical == ""}
		s.localStorage = append(s.localStorage, ls)
		if p.Critical == "" {
			violators = append(violators, i)
		}
	}
	if len(violators) == 0 {
		return 1
	}
	// synchronize records the thresholds met before it evicts for local
	// storage: the next sync still owes their minimum reclaim. It records
	// only those whose grace period is served, and this sync is the first
	// to see a soft threshold (the what-if starts now), so only hard ones
	// are owed.
	st.prev = slices.DeleteFunc(slices.Clone(s.firstActive), func(t Threshold) bool { return !t.Hard() })
	for _, i := range violators {
		c := s.classOf[i]
		// Violation is part of the class key: the whole class goes.
		s.acc[c][1] += 1.0 / float64(len(s.members[c]))
		st.evicted[c]++
		st.obs = s.free(st.obs, s.pods[i])
		s.grace[i][s.hardGrace()] = true
	}
	return 2
}

// syncStep is one synchronize from st: for each threshold it may act on,
// the ranking's first group, each class of it a branch into next.
func (s *simulation) syncStep(st *simState, step int, next map[string]*simState) {
	act := s.active(st.obs, st.prev)
	if len(act) == 0 {
		return
	}
	choices := s.choices(act)
	for _, t := range choices {
		r := rankingFor(t.Signal, s.layout)
		if s.firstRanking == nil {
			s.firstRanking, s.firstSignal = &r, t.Signal
		}
		if r.Kind == "disk" {
			s.diskReclaim = true
		}
		if !s.in.Rules.Kubelet.NodeReclaimMinReclaim && s.layout.garbageCollects(t.Signal) && !s.anyMet(st.obs) {
			// Only minimum reclaim holds the threshold: the garbage
			// collection is taken to have reclaimed enough.
			s.reclaimSettles = true
			continue
		}
		group := s.firstGroup(r, st)
		if group == nil {
			s.stuck = true
			continue
		}
		s.branch(st, step, t, act, group, st.prob/float64(len(choices)), next)
	}
}

// firstGroup is the ranking's first tie group of evictable pods left;
// nil when every pod left is critical.
func (s *simulation) firstGroup(r ranking, st *simState) []*podInfo {
	sorted, groups := r.rank(s.remaining(st))
	first := slices.IndexFunc(sorted, func(p *podInfo) bool { return p.Critical == "" })
	if first < 0 {
		return nil
	}
	var group []*podInfo
	for j := range sorted {
		if groups[j] == groups[first] && sorted[j].Critical == "" {
			group = append(group, sorted[j])
		}
	}
	return group
}

// branch evicts one of group (of probability p): a state per class, the
// class's odds its share of the group; states alike are merged in next.
func (s *simulation) branch(st *simState, step int, t Threshold, act []Threshold, group []*podInfo, p float64, next map[string]*simState) {
	perClass := map[int]int{}
	for _, g := range group {
		perClass[s.classOf[s.indexOf(g)]]++
	}
	for c, n := range perClass {
		pc := p * float64(n) / float64(len(group))
		s.acc[c][step] += pc / float64(len(s.members[c]))
		rep := s.pods[s.members[c][st.evicted[c]]]
		for _, i := range s.members[c] {
			s.addGraces(i, t, act, rep)
		}
		ns := &simState{evicted: slices.Clone(st.evicted), prob: pc, obs: s.free(st.obs, rep), prev: act}
		ns.evicted[c]++
		key := fmt.Sprint(ns.evicted, thresholdsKey(act))
		if old, ok := next[key]; ok {
			old.prob += pc
		} else {
			next[key] = ns
		}
	}
}

func thresholdsKey(ts []Threshold) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s/%s/%s;", t.Signal, t.GracePeriod, t.Value.Text)
	}
	return b.String()
}

// closest is the configured signal nearest its threshold, relative to
// capacity: the ranking shown when nothing is met.
func (s *simulation) closest() (Signal, bool) {
	best, found := Signal(""), false
	bestMargin := 0.0
	for _, t := range s.ths {
		o, ok := s.obs0[t.Signal]
		if !ok || o.Capacity <= 0 {
			continue
		}
		q := t.Value.resolve(o.Capacity)
		margin := float64(o.Available-q.Value()) / float64(o.Capacity)
		if !found || margin < bestMargin {
			best, bestMargin, found = t.Signal, margin, true
		}
	}
	return best, found
}

// fill writes the order, fates and grace periods into the result.
func (s *simulation) fill(res *Result) {
	res.LocalStorage = append(res.LocalStorage, s.localStorage...)
	sig := s.shownSignal(res)
	r := rankingFor(sig, s.layout)
	res.Signal, res.Ranking = string(sig), r.String()
	if s.stuck {
		res.Notes = append(res.Notes, "every pod left is critical: the kubelet evicts no more (\"unable to evict any pods from the node\")")
	}
	sorted, groups := r.rank(s.pods)
	size := map[int]int{}
	for _, g := range groups {
		size[g]++
	}
	for j, p := range sorted {
		c := s.candidate(r, sorted, j)
		if size[groups[j]] > 1 {
			g := groups[j]
			c.TieGroup = &g
		}
		s.fate(&c, s.indexOf(p))
		res.Order = append(res.Order, c)
	}
	// The number evicted: certain when every branch evicts as many, even
	// if chance decides which pods.
	expected := 0.0
	for _, c := range res.Order {
		expected += c.EvictProbability
	}
	res.Cut = int(math.Round(expected))
	res.Victims = likeliestVictims(res.Order, res.Cut)
}

// shownSignal is the signal whose ranking the order shows: the first one
// acted on, else the one nearest its threshold (noted).
func (s *simulation) shownSignal(res *Result) Signal {
	if s.firstRanking != nil {
		return s.firstSignal
	}
	sig, ok := s.closest()
	if !ok {
		sig = MemoryAvailable
	}
	if res.UnderPressure && len(s.localStorage) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the local-storage evictions free enough: no pod is evicted for pressure; shown is the order the kubelet would use for %s", sig))
	} else {
		res.Notes = append(res.Notes, fmt.Sprintf("no threshold is met: shown is the order the kubelet would use for %s, the signal nearest its threshold (try --assume %s=...)", sig, sig))
	}
	return sig
}

// candidate is sorted[j] in the order, with the rule that puts it before
// the next.
func (s *simulation) candidate(r ranking, sorted []*podInfo, j int) Candidate {
	p := sorted[j]
	use, _, req := r.usage(p)
	if r.Kind == "disk" && r.Inodes {
		req = p.InodeRequest
	}
	c := Candidate{Pod: p.Name, UID: string(p.Pod.UID), QOSClass: p.QOS, Priority: p.Priority, Usage: use, Request: req,
		InStats: p.Stats != nil, Position: j + 1, Exempt: p.Critical}
	if j+1 < len(sorted) {
		_, d := r.compare(p, sorted[j+1])
		if d.Rule == RuleTie {
			d.Text = "exact tie: the kubelet's unstable sort over pods in map order decides"
		}
		c.DecidedBy = &d
	}
	return c
}

// fate is pod i's odds of eviction, its likeliest step and grace period.
func (s *simulation) fate(c *Candidate, i int) {
	const sure = 1 - 1e-9
	probs := s.acc[s.classOf[i]]
	total := 0.0
	bestStep, bestP := 0, 0.0
	for _, st := range slices.Sorted(maps.Keys(probs)) {
		total += probs[st]
		if probs[st] > bestP {
			bestStep, bestP = st, probs[st]
		}
	}
	if 1-total > bestP {
		bestStep, bestP = 0, 1-total
	}
	c.Step = bestStep
	if bestP < sure {
		c.PossibleSteps = slices.Sorted(maps.Keys(probs))
	}
	c.EvictProbability = min(max(total, 0), 1)
	c.Certain = bestP >= sure
	if gs := slices.Sorted(maps.Keys(s.grace[i])); len(gs) > 0 && total > 0 {
		g := gs[0]
		c.GracePeriodSeconds = &g
		if len(gs) > 1 {
			c.GraceAlternatives = gs
		}
	}
}

// likeliestVictims are the cut pods most likely evicted (a tie at the cut
// goes to the earlier in the order), in eviction order: as many as are
// evicted, like a scale-in's victims; the odds of a tie are in Order.
func likeliestVictims(order []Candidate, cut int) []string {
	idx := make([]int, 0, len(order))
	for i, c := range order {
		if c.EvictProbability > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(order[b].EvictProbability, order[a].EvictProbability) })
	idx = idx[:min(cut, len(idx))]
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(stepOf(order[a]), stepOf(order[b])), cmp.Compare(a, b))
	})
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = order[j].Pod
	}
	return out
}

// stepOf is the sync most likely to evict a pod that may be evicted.
func stepOf(c Candidate) int {
	if c.Step > 0 || len(c.PossibleSteps) == 0 {
		return c.Step
	}
	return c.PossibleSteps[0]
}
