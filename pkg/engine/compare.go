package engine

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Rule identifies the comparator rule that decided a comparison.
type Rule int

// The rules of ActivePodsWithRanks.Less, in the order they are applied.
const (
	Tie          Rule = iota // no rule separates the pods
	Unassigned               // R1: unscheduled first
	Phase                    // R2: Pending < Unknown < Running
	Readiness                // R3: not ready first
	DeletionCost             // R4: lower pod-deletion-cost first
	Colocation               // R5: more related pods on the node first
	ReadyTime                // R6: more recently ready first
	Restarts                 // R7: more restarts first
	CreationTime             // R8: newer first
)

var ruleNames = [...]string{"tie", "unassigned", "phase", "readiness", "deletion-cost", "colocation", "ready-time", "restarts", "creation-time"}

// ID is "R1".."R8", or "TIE".
func (r Rule) ID() string {
	if r == Tie {
		return "TIE"
	}
	return fmt.Sprintf("R%d", int(r))
}

// Name is a short machine-friendly name, e.g. "ready-time".
func (r Rule) Name() string { return ruleNames[r] }

// How says which branch of a rule decided.
type How string

// Branches of rules 6, 7 and 8.
const (
	ByValue   How = ""        // a plain comparison of the rule's values
	ByZero    How = "zero"    // a zero time counts as newest
	ByBucket  How = "bucket"  // different log2 age buckets
	ByUID     How = "uid"     // same bucket, different times: lower UID first
	ByLinear  How = "linear"  // exact time comparison (log scale off)
	ByRegular How = "regular" // regular container restarts
	BySidecar How = "sidecar" // restartable init container restarts (1.32+)
)

// Decision is the outcome of comparing two pods a and b.
type Decision struct {
	Rule   Rule
	How    How
	AFirst bool   // a is deleted before b; false for a tie
	A, B   string // the compared values of a and b, rendered
}

// Comparator is ActivePodsWithRanks.Less for one rule set and one now.
type Comparator struct {
	Rules rules.RuleSet
	Now   time.Time
}

// Less reports whether a is deleted before b. It is the exact controller
// comparator, with per-pod buckets precomputed into keys.
func (c *Comparator) less(a, b *key) bool {
	if a.assigned != b.assigned {
		return !a.assigned
	}
	if a.phase != b.phase {
		return a.phase < b.phase
	}
	if a.ready != b.ready {
		return !a.ready
	}
	if c.Rules.DeletionCost && a.cost != b.cost {
		return a.cost < b.cost
	}
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	if a.ready && a.readyNs != b.readyNs {
		if a.readyZero || b.readyZero {
			return a.readyZero
		}
		if c.Rules.LogScale {
			if a.readyBucket != b.readyBucket {
				return a.readyBucket < b.readyBucket
			}
			return a.uid < b.uid
		}
		return a.readyNs > b.readyNs
	}
	if a.restarts != b.restarts {
		return a.restarts > b.restarts
	}
	if c.Rules.SidecarRestarts && a.sidecar != b.sidecar {
		return a.sidecar > b.sidecar
	}
	if a.createdNs != b.createdNs {
		if a.createdZero || b.createdZero {
			return a.createdZero
		}
		if c.Rules.LogScale {
			if a.createdBucket != b.createdBucket {
				return a.createdBucket < b.createdBucket
			}
			return a.uid < b.uid
		}
		return a.createdNs > b.createdNs
	}
	return false
}

// key is a pod's comparator inputs, flattened for a fast sort.
type key struct {
	assigned                   bool
	phase                      int
	ready                      bool
	cost                       int32
	rank                       int
	readyZero, createdZero     bool
	readyNs, createdNs         int64 // meaningful only when not zero
	readyBucket, createdBucket int64
	restarts, sidecar          int
	uid                        string
}

func (c *Comparator) keyOf(p *Pod) key {
	k := key{
		assigned:    p.Node != "",
		phase:       phaseOrdinal(p.Phase),
		ready:       p.Ready,
		cost:        p.Cost,
		rank:        p.Rank,
		readyZero:   p.ReadyTime.IsZero(),
		createdZero: p.Created.IsZero(),
		restarts:    p.Restarts,
		sidecar:     p.SidecarRestarts,
		uid:         p.UID,
	}
	if !k.readyZero {
		k.readyNs = p.ReadyTime.UnixNano()
		k.readyBucket = Bucket(p.ReadyTime, c.Now)
	}
	if !k.createdZero {
		k.createdNs = p.Created.UnixNano()
		k.createdBucket = Bucket(p.Created, c.Now)
	}
	return k
}

// Less reports whether a is deleted before b.
func (c *Comparator) Less(a, b *Pod) bool {
	ka, kb := c.keyOf(a), c.keyOf(b)
	return c.less(&ka, &kb)
}

// Compare explains the comparison of a and b: which rule decided it and the
// values it compared. It agrees with Less by construction (tested).
func (c *Comparator) Compare(a, b *Pod) Decision {
	ka, kb := c.keyOf(a), c.keyOf(b)
	return c.compareKeys(a, b, &ka, &kb)
}

func (c *Comparator) compareKeys(a, b *Pod, ka, kb *key) Decision {
	d := Decision{AFirst: c.less(ka, kb)}
	switch {
	case ka.assigned != kb.assigned:
		d.Rule, d.A, d.B = Unassigned, nodeText(a.Node), nodeText(b.Node)
	case ka.phase != kb.phase:
		d.Rule, d.A, d.B = Phase, phaseText(a.Phase), phaseText(b.Phase)
	case ka.ready != kb.ready:
		d.Rule, d.A, d.B = Readiness, readyText(a.Ready), readyText(b.Ready)
	case c.Rules.DeletionCost && ka.cost != kb.cost:
		d.Rule, d.A, d.B = DeletionCost, strconv.Itoa(int(ka.cost)), strconv.Itoa(int(kb.cost))
	case ka.rank != kb.rank:
		d.Rule, d.A, d.B = Colocation, strconv.Itoa(ka.rank), strconv.Itoa(kb.rank)
	case ka.ready && ka.readyNs != kb.readyNs:
		d.Rule = ReadyTime
		d.How, d.A, d.B = c.timeHow(a.ReadyTime, b.ReadyTime, ka.readyBucket, kb.readyBucket, a.UID, b.UID)
	case ka.restarts != kb.restarts:
		d.Rule, d.How, d.A, d.B = Restarts, ByRegular, strconv.Itoa(ka.restarts), strconv.Itoa(kb.restarts)
	case c.Rules.SidecarRestarts && ka.sidecar != kb.sidecar:
		d.Rule, d.How, d.A, d.B = Restarts, BySidecar, strconv.Itoa(ka.sidecar), strconv.Itoa(kb.sidecar)
	case ka.createdNs != kb.createdNs:
		d.Rule = CreationTime
		d.How, d.A, d.B = c.timeHow(a.Created, b.Created, ka.createdBucket, kb.createdBucket, a.UID, b.UID)
	default:
		d.Rule = Tie
	}
	return d
}

func (c *Comparator) timeHow(ta, tb time.Time, ba, bb int64, ua, ub string) (How, string, string) {
	switch {
	case ta.IsZero() || tb.IsZero():
		return ByZero, c.ageText(ta, -2), c.ageText(tb, -2)
	case !c.Rules.LogScale:
		return ByLinear, c.ageText(ta, -2), c.ageText(tb, -2)
	case ba != bb:
		return ByBucket, c.ageText(ta, ba), c.ageText(tb, bb)
	default:
		return ByUID, c.ageText(ta, ba) + " uid " + shortUID(ua), c.ageText(tb, bb) + " uid " + shortUID(ub)
	}
}

func (c *Comparator) ageText(t time.Time, bucket int64) string {
	if t.IsZero() {
		return "no time"
	}
	s := HumanAge(c.Now.Sub(t))
	if bucket >= -1 {
		s += " (bucket " + strconv.FormatInt(bucket, 10) + ")"
	}
	return s
}

func nodeText(n string) string {
	if n == "" {
		return "unassigned"
	}
	return "on " + n
}

func phaseText(p corev1.PodPhase) string {
	if p == "" {
		return `""`
	}
	return string(p)
}

func readyText(r bool) string {
	if r {
		return "ready"
	}
	return "not ready"
}

func shortUID(u string) string {
	if u == "" {
		return `""`
	}
	if len(u) > 8 {
		return u[:8] + "…"
	}
	return u
}

// HumanAge renders a duration the way kubectl prints ages (2d3h, 5m10s).
func HumanAge(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	s := humanAge(d)
	if neg {
		return "in " + s
	}
	return s
}

func humanAge(d time.Duration) string {
	sec := int64(d / time.Second)
	i := strconv.FormatInt
	switch {
	case sec < 120:
		return i(sec, 10) + "s"
	case sec < 3600:
		return i(sec/60, 10) + "m" + i(sec%60, 10) + "s"
	case sec < 48*3600:
		return i(sec/3600, 10) + "h" + i((sec%3600)/60, 10) + "m"
	case sec < 365*86400:
		return i(sec/86400, 10) + "d" + i((sec%86400)/3600, 10) + "h"
	}
	return i(sec/(365*86400), 10) + "y" + i((sec%(365*86400))/86400, 10) + "d"
}
