package engine

import (
	"cmp"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/scale-preview/scale-preview/pkg/prediction"
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

// ID is the rule's identifier in the output contract: R1..R8, or TIE.
func (r Rule) ID() string {
	if r == Tie {
		return prediction.RuleTie
	}
	return prediction.RuleIDs[r-1]
}

// BeforeCost reports whether the rule is one of rules 1-3, which decide
// before any deletion cost is read, so no annotation can overturn them.
func (r Rule) BeforeCost() bool { return r != Tie && r < DeletionCost }

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
	// ages, when not nil, remembers ageText's results: a large round
	// explains many pods ready or created in the same second.
	ages map[ageKey]string
}

// cmp is ActivePodsWithRanks.Less as a three-way comparison on precomputed
// keys: negative when a is deleted first, positive when b is, 0 when Less
// holds neither way. It also returns the rule that decided and, for rules
// 6-8, the branch. Every other ordering in this package is built from it.
func (c *Comparator) cmp(a, b *key) (int, Rule, How) { return c.compare(a, b, true) }

// compare is cmp; without uid, a ByUID result is 0 instead of the UIDs'
// order, which saves comparing strings where only the branch matters.
func (c *Comparator) compare(a, b *key, uid bool) (int, Rule, How) {
	// 1. Unassigned < assigned.
	if a.assigned != b.assigned {
		return boolFirst(!a.assigned), Unassigned, ByValue
	}
	// 2. PodPending < PodUnknown < PodRunning (any other phase counts as Pending).
	if a.phase != b.phase {
		return cmp.Compare(a.phase, b.phase), Phase, ByValue
	}
	// 3. Not ready < ready.
	if a.ready != b.ready {
		return boolFirst(!a.ready), Readiness, ByValue
	}
	// 4. Lower pod-deletion-cost < higher (only while the rule is in force).
	if c.Rules.DeletionCost && a.cost != b.cost {
		return cmp.Compare(a.cost, b.cost), DeletionCost, ByValue
	}
	// 5. More related pods on the same node < fewer.
	if a.rank != b.rank {
		return cmp.Compare(b.rank, a.rank), Colocation, ByValue
	}
	// 6. Both ready: empty ready time < ready more recently < ready longer.
	if a.ready && a.readyNs != b.readyNs {
		r, how := c.timeCmp(a.readyZero, b.readyZero, a.readyNs, b.readyNs, a.readyBucket, b.readyBucket)
		if how == ByUID && uid {
			r = uidCmp(a, b)
		}
		return r, ReadyTime, how
	}
	// 7. More container restarts < fewer; restartable init containers
	// (sidecars) are compared after the regular ones where the rule set says so.
	if a.restarts != b.restarts {
		return cmp.Compare(b.restarts, a.restarts), Restarts, ByRegular
	}
	if c.Rules.SidecarRestarts && a.sidecar != b.sidecar {
		return cmp.Compare(b.sidecar, a.sidecar), Restarts, BySidecar
	}
	// 8. Empty creation time < newer < older.
	if a.createdNs != b.createdNs {
		r, how := c.timeCmp(a.createdZero, b.createdZero, a.createdNs, b.createdNs, a.createdBucket, b.createdBucket)
		if how == ByUID && uid {
			r = uidCmp(a, b)
		}
		return r, CreationTime, how
	}
	return 0, Tie, ByValue
}

// timeCmp is the time comparison rules 6 and 8 share: a zero time counts as
// newest; otherwise newer first, or, on the log scale, the lower log2 age
// bucket first and within one bucket the lower UID (ByUID, left to the
// caller: 0 here).
func (c *Comparator) timeCmp(az, bz bool, an, bn, ab, bb int64) (int, How) {
	switch {
	case az || bz:
		return boolFirst(az), ByZero
	case !c.Rules.LogScale:
		return cmp.Compare(bn, an), ByLinear
	case ab != bb:
		return cmp.Compare(ab, bb), ByBucket
	}
	return 0, ByUID
}

// uidCmp orders by UID, the lower first; by uidRank when both have one.
func uidCmp(a, b *key) int {
	if a.uidRank > 0 && b.uidRank > 0 {
		return cmp.Compare(a.uidRank, b.uidRank)
	}
	return cmp.Compare(a.uid, b.uid)
}

// less is the controller's Less: a is deleted before b.
func (c *Comparator) less(a, b *key) bool {
	r, _, _ := c.cmp(a, b)
	return r < 0
}

// consistentCmp is cmp restricted to the rules up to and including
// through, and without the UID tie-break within one log2 bucket: the part
// of the comparator that is a strict weak order. Pods it calls equal form
// the classes the ordering settles one by one.
func (c *Comparator) consistentCmp(a, b *key, through Rule) int {
	r, rule, how := c.compare(a, b, false)
	if rule > through || how == ByUID {
		return 0
	}
	return r
}

func boolFirst(aFirst bool) int {
	if aFirst {
		return -1
	}
	return 1
}

// key is a pod's comparator inputs, flattened for a fast sort.
type key struct {
	assigned, ready        bool
	readyZero, createdZero bool
	cost                   int32
	// uidRank, when set (from 1), is the UID's rank among the keys it is
	// compared with: the same order, compared as an integer.
	uidRank int32
	// node numbers the pod's node for the rounds (nodeCounts); not compared.
	node                       int32
	phase                      int
	rank                       int
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
// values it compared.
func (c *Comparator) Compare(a, b *Pod) Decision {
	ka, kb := c.keyOf(a), c.keyOf(b)
	return c.decide(a, b, &ka, &kb)
}

func (c *Comparator) decide(a, b *Pod, ka, kb *key) Decision {
	r, rule, how := c.cmp(ka, kb)
	d := Decision{Rule: rule, How: how, AFirst: r < 0}
	d.A, d.B = c.values(rule, how, a, ka), c.values(rule, how, b, kb)
	return d
}

// values renders what the deciding rule compared for one pod.
func (c *Comparator) values(rule Rule, how How, p *Pod, k *key) string {
	switch rule {
	case Unassigned:
		return nodeText(p.Node)
	case Phase:
		return phaseText(p.Phase)
	case Readiness:
		return readyText(p.Ready)
	case DeletionCost:
		return strconv.Itoa(int(k.cost))
	case Colocation:
		return strconv.Itoa(k.rank)
	case ReadyTime:
		return c.timeText(how, p.ReadyTime, k.readyBucket, p.UID)
	case Restarts:
		if how == BySidecar {
			return strconv.Itoa(k.sidecar)
		}
		return strconv.Itoa(k.restarts)
	case CreationTime:
		return c.timeText(how, p.Created, k.createdBucket, p.UID)
	}
	return ""
}

func (c *Comparator) timeText(how How, t time.Time, bucket int64, uid string) string {
	switch how {
	case ByBucket:
		return c.ageText(t, bucket)
	case ByUID:
		return c.ageText(t, bucket) + " uid " + shortUID(uid)
	}
	return c.ageText(t, -2)
}

func (c *Comparator) ageText(t time.Time, bucket int64) string {
	if t.IsZero() {
		return "no time"
	}
	k := ageKey{sec: t.Unix(), bucket: bucket, nsec: t.Nanosecond()}
	if s, ok := c.ages[k]; ok {
		return s
	}
	s := HumanAge(c.Now.Sub(t))
	if bucket >= -1 {
		s += " (bucket " + strconv.FormatInt(bucket, 10) + ")"
	}
	if c.ages != nil {
		c.ages[k] = s
	}
	return s
}

// ageKey is what ageText renders besides the reference time.
type ageKey struct {
	sec, bucket int64
	nsec        int
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

// HumanAge renders a duration as kubectl prints ages (apimachinery's
// duration.HumanDuration: 45s, 5m10s, 60m, 3h, 2d3h); a negative one, a
// time in the future, as "in 5m".
func HumanAge(d time.Duration) string {
	if d < 0 {
		return "in " + duration.HumanDuration(-d)
	}
	return duration.HumanDuration(d)
}
