package eviction

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// fsSet is which of a pod's usages a disk ranking adds up (fsStatsType).
type fsSet struct{ Root, Logs, Volumes bool }

func (s fsSet) String() string {
	var parts []string
	if s.Root {
		parts = append(parts, "writable layers")
	}
	if s.Logs {
		parts = append(parts, "logs")
	}
	if s.Volumes {
		parts = append(parts, "local volumes")
	}
	return strings.Join(parts, "+")
}

// ranking is one of the kubelet's rank functions.
type ranking struct {
	Kind   string // "memory", "pid", "disk"
	Set    fsSet  // disk only
	Inodes bool   // disk only: inodes rather than bytes
}

func (r ranking) String() string {
	if r.Kind != "disk" {
		return r.Kind
	}
	unit := "bytes"
	if r.Inodes {
		unit = "inodes"
	}
	return fmt.Sprintf("disk (%s, %s)", unit, r.Set)
}

// rankingFor is buildSignalToRankFunc.
func rankingFor(sig Signal, l Layout) ranking {
	switch {
	case sig.isMemory():
		return ranking{Kind: "memory"}
	case sig == PIDAvailable:
		return ranking{Kind: "pid"}
	}
	inodes := sig.Unit() == "inodes"
	isNode := sig == NodeFsAvailable || sig == NodeFsInodesFree
	isImage := sig == ImageFsAvailable || sig == ImageFsInodesFree
	all := fsSet{Root: true, Logs: true, Volumes: true}
	switch {
	case l.ImageFs && !l.Split:
		if isNode {
			return ranking{"disk", fsSet{Logs: true, Volumes: true}, inodes}
		}
		return ranking{"disk", fsSet{Root: true}, inodes} // imagefs and containerfs
	case l.ImageFs && l.Split:
		if isImage {
			return ranking{"disk", fsSet{}, inodes} // images only: no pod usage
		}
		return ranking{"disk", all, inodes}
	}
	return ranking{"disk", all, inodes}
}

// garbageCollects: the kubelet deletes unused containers and images before
// evicting pods for sig (buildSignalToNodeReclaimFuncs): imagefs with a
// dedicated image filesystem, every disk signal without; a split layout
// collects for both (writable layers on nodefs, images on imagefs).
func (l Layout) garbageCollects(sig Signal) bool {
	isNode := sig == NodeFsAvailable || sig == NodeFsInodesFree
	isImage := sig == ImageFsAvailable || sig == ImageFsInodesFree
	return isImage || isNode && (!l.ImageFs || l.Split)
}

func (pi *podInfo) disk(s fsSet) fsUsage {
	var u fsUsage
	if s.Root {
		u = u.plus(pi.Root)
	}
	if s.Logs {
		u = u.plus(pi.Logs)
	}
	if s.Volumes {
		u = u.plus(pi.Volumes)
	}
	return u
}

// Decision is the comparison that put one pod before the next.
type Decision struct {
	Rule  string `json:"rule"`  // no-stats, exceeds-request, priority, usage-over-request, processes, TIE
	This  string `json:"this"`  // this pod's value
	Other string `json:"other"` // the next pod's
	Text  string `json:"text"`
}

// Rule names, in the order the comparators run.
const (
	RuleNoStats   = "no-stats"
	RuleExceeds   = "exceeds-request"
	RulePriority  = "priority"
	RuleUsage     = "usage-over-request"
	RuleProcesses = "processes"
	RuleTie       = "TIE"
)

func cmpBool(a, b bool) int { // true first
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// usage is the figure the ranking compares and the request it is set
// against (disk compares usage minus the ephemeral-storage request even
// for inodes, and "exceeds" uses the inodes request: as the source does).
func (r ranking) usage(pi *podInfo) (use, exceedsAgainst, overAgainst int64) {
	switch r.Kind {
	case "memory":
		return pi.WorkingSet, pi.MemRequest, pi.MemRequest
	case "pid":
		return pi.Processes, 0, 0
	}
	u := pi.disk(r.Set)
	if r.Inodes {
		return u.Inodes, pi.InodeRequest, pi.StorageRequest
	}
	return u.Bytes, pi.StorageRequest, pi.StorageRequest
}

// compare is orderedBy(...).Less's three-way form for this ranking:
// negative when a is evicted before b. It names the comparator that decided.
func (r ranking) compare(a, b *podInfo) (int, Decision) {
	ua, ea, oa := r.usage(a)
	ub, eb, ob := r.usage(b)
	noStats := func() (int, Decision) {
		c := cmpBool(a.Stats == nil, b.Stats == nil)
		return c, Decision{Rule: RuleNoStats, This: statsWord(a), Other: statsWord(b), Text: "a pod missing from the summary goes first"}
	}
	prio := func() (int, Decision) {
		return cmp.Compare(a.Priority, b.Priority), Decision{Rule: RulePriority, This: fmt.Sprint(a.Priority), Other: fmt.Sprint(b.Priority), Text: "lower priority goes first"}
	}
	if r.Kind == "pid" {
		if c, d := prio(); c != 0 {
			return c, d
		}
		if a.Stats == nil || b.Stats == nil {
			if c, d := noStats(); c != 0 {
				return c, d
			}
			return 0, Decision{Rule: RuleTie}
		}
		if c := cmp.Compare(ub, ua); c != 0 {
			return c, Decision{Rule: RuleProcesses, This: fmt.Sprint(ua), Other: fmt.Sprint(ub), Text: "more processes go first"}
		}
		return 0, Decision{Rule: RuleTie}
	}
	if a.Stats == nil || b.Stats == nil {
		if c, d := noStats(); c != 0 {
			return c, d
		}
	} else {
		xa, xb := ua > ea, ub > eb
		if c := cmpBool(xa, xb); c != 0 {
			return c, Decision{Rule: RuleExceeds, This: exceedsWord(xa), Other: exceedsWord(xb), Text: "a pod using more than its request goes first"}
		}
	}
	if c, d := prio(); c != 0 {
		return c, d
	}
	if a.Stats == nil || b.Stats == nil {
		return 0, Decision{Rule: RuleTie}
	}
	da, db := ua-oa, ub-ob
	if c := cmp.Compare(db, da); c != 0 {
		return c, Decision{Rule: RuleUsage, This: fmt.Sprint(da), Other: fmt.Sprint(db), Text: "larger usage above its request goes first"}
	}
	return 0, Decision{Rule: RuleTie}
}

func statsWord(p *podInfo) string {
	if p.Stats == nil {
		return "missing"
	}
	return "present"
}

func exceedsWord(b bool) string {
	if b {
		return "over"
	}
	return "within"
}

// rank orders pods as the ranking does, equal ones (exact ties, which the
// kubelet's unstable sort over map-ordered pods leaves to chance) kept in
// input order; groups[i] is the tie group of pods[i].
func (r ranking) rank(pods []*podInfo) (sorted []*podInfo, groups []int) {
	sorted = slices.Clone(pods)
	slices.SortStableFunc(sorted, func(a, b *podInfo) int { c, _ := r.compare(a, b); return c })
	groups = make([]int, len(sorted))
	for i := 1; i < len(sorted); i++ {
		groups[i] = groups[i-1]
		if c, _ := r.compare(sorted[i-1], sorted[i]); c != 0 {
			groups[i]++
		}
	}
	return sorted, groups
}
