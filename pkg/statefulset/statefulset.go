package statefulset

import (
	"errors"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Input is everything the prediction reads. Nothing else is consulted.
type Input struct {
	Set *appsv1.StatefulSet
	// Pods are all pods of the set's namespace; Predict does the claiming.
	Pods []*corev1.Pod
	// Claims are the namespace's PersistentVolumeClaims. ClaimsKnown says
	// whether they could be read; when false, Claims is ignored.
	Claims      []*corev1.PersistentVolumeClaim
	ClaimsKnown bool
	// Replicas is the desired spec.replicas (Set.Spec.Replicas is ignored).
	Replicas int32
	// Now is the controller's clock at the sync; it decides availability.
	Now time.Time
	// Minor is the kube-controller-manager's minor version, 21..37.
	Minor int
	// Gates are the effective feature gates for that version. A gate the
	// map does not name takes its default for Minor (see pkg/rules).
	Gates map[string]bool
}

// Pod fates.
const (
	FateDelete      = prediction.FateDelete      // the controller deletes it for the scale-down
	FateKeep        = prediction.FateKeep        // in range, left alone
	FateTerminating = prediction.FateTerminating // already being deleted; the controller waits or skips
	FateIgnored     = prediction.FateIgnored     // not claimed, or no usable ordinal
	FateRecreate    = prediction.FateRecreate    // in range but finished (Failed/Succeeded): deleted and created again
	FateCreate      = "create"                   // in-range ordinal with no pod: the controller creates it
)

// PodFate is the verdict on one pod (or, for FateCreate, one missing ordinal).
type PodFate struct {
	Pod     *corev1.Pod // nil for FateCreate
	Name    string
	Ordinal int // -1 when the name gives none
	Fate    string
	// Position is the 1-based deletion order of FateDelete pods.
	Position int
	Reason   string
	// BeforeStall: OrderedReady deletes it before the scale-down stalls
	// (always true for deleted pods when nothing stalls).
	BeforeStall bool
}

// Claim fates.
const (
	ClaimDelete = prediction.ClaimDelete
	ClaimRetain = prediction.ClaimRetain
)

// ClaimFate is what happens to one PersistentVolumeClaim of a condemned pod.
type ClaimFate struct {
	Name     string // <template>-<set>-<ordinal>
	Template string
	Ordinal  int
	Pod      string
	Fate     string // ClaimDelete or ClaimRetain
	Reason   string
	// Checked: the claim was found among Input.Claims. False when it is
	// not there (or the claims could not be read): the name is then only
	// the expected one.
	Checked bool
}

// Result is the prediction.
type Result struct {
	// Pods: condemned pods in deletion order (terminating ones where they
	// fall), then the in-range ordinals ascending, then ignored pods by name.
	Pods []PodFate
	// Victims are the pods the scale-down deletes, in order. For
	// OrderedReady that includes the pods after a stall, deleted once the
	// blocking condition clears.
	Victims []string
	// FirstSync are the pods the very next sync deletes (victims and pods
	// deleted for recreation); FirstSyncCreates the pods it creates.
	FirstSync        []string
	FirstSyncCreates []string
	// Start and End bound the kept ordinals, inclusive; End = Start-1 when
	// Replicas is 0.
	Start, End int
	Policy     string // "OrderedReady" or "Parallel"
	// Stalled: the scale-down stops before deleting every victim. StallPod
	// is the pod whose state blocks, StallReason the rule. StallUntil is set
	// when the block lifts by itself at that time (minReadySeconds).
	Stalled            bool
	StallPod           string
	StallReason        string
	StallUntil         time.Time
	DeletedBeforeStall []string
	// Waits names condemned pods that were already terminating and that
	// OrderedReady waits for (they disappear by themselves) before going on.
	Waits       []string
	Claims      []ClaimFate
	ClaimPolicy string // effective whenScaled
	Notes       []string
}

const (
	policyOrdered  = "OrderedReady"
	policyParallel = "Parallel"
	// maxCreateFates caps how many missing ordinals are listed.
	maxCreateFates = 100
)

type member struct {
	pod *corev1.Pod
	ord int
}

func (m *member) name() string { return m.pod.Name }

// switches are the version's StatefulSet rules and its availability
// boundary, with the checks built on them.
type switches struct {
	rules.StatefulSetRules
	AvailableAtBoundary bool
}

// Predict models one StatefulSet's scale-down to in.Replicas.
func Predict(in Input) (Result, error) {
	if in.Set == nil {
		return Result{}, errors.New("statefulset: no StatefulSet")
	}
	if in.Minor < rules.Oldest || in.Minor > rules.Newest {
		return Result{}, fmt.Errorf("statefulset: Kubernetes 1.%d is outside 1.%d–1.%d", in.Minor, rules.Oldest, rules.Newest)
	}
	if in.Replicas < 0 {
		return Result{}, fmt.Errorf("statefulset: negative replicas %d", in.Replicas)
	}
	if in.Now.IsZero() {
		return Result{}, errors.New("statefulset: Now is zero")
	}
	set := in.Set
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		// The controller logs this and never syncs the set.
		return Result{}, fmt.Errorf("statefulset: selector of %s: %w (the controller does not sync this set)", set.Name, err)
	}
	rs := rules.Resolve(in.Minor, in.Gates)
	r := switches{rs.StatefulSet, rs.AvailableAtBoundary}
	s := &sim{in: in, r: r, set: set, minReady: set.Spec.MinReadySeconds}
	if !r.MinReadySeconds {
		s.minReady = 0
		if set.Spec.MinReadySeconds > 0 {
			s.note("minReadySeconds is not applied in 1.%d with these gates", in.Minor)
		}
	}
	s.res.Policy = policyOrdered
	if set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement {
		s.res.Policy = policyParallel
	}
	start := 0
	if set.Spec.Ordinals != nil {
		if r.StartOrdinal {
			start = int(set.Spec.Ordinals.Start)
		} else if set.Spec.Ordinals.Start != 0 {
			s.note("spec.ordinals.start=%d is ignored in 1.%d (StatefulSetStartOrdinal off or absent): ordinals start at 0", set.Spec.Ordinals.Start, in.Minor)
		}
	}
	s.start, s.end = start, start+int(in.Replicas)-1
	s.res.Start, s.res.End = s.start, s.end

	s.partition(sel)
	switch {
	case set.DeletionTimestamp != nil:
		s.stall("", "the StatefulSet is being deleted: the controller only updates its status; the garbage collector removes the pods")
		for _, m := range s.condemned {
			if f := s.fates[m.pod]; f.Fate == FateDelete {
				f.Fate, f.Reason = FateKeep, f.Reason+"; not deleted by a scale-down: the StatefulSet is being deleted"
			}
		}
	case r.RecreateStrategy && set.Spec.UpdateStrategy.Type == appsv1.RecreateStatefulSetStrategyType && !r.RecreateGate:
		s.stall("", "updateStrategy Recreate with the StatefulSetRecreateStrategy gate off: every sync fails before touching pods")
		s.finishCondemnedAfterStall()
	default:
		if r.RecreateStrategy && set.Spec.UpdateStrategy.Type == appsv1.RecreateStatefulSetStrategyType {
			s.recreateOldRevision()
		}
		if s.res.Policy == policyParallel {
			s.parallel()
		} else {
			s.ordered()
		}
	}
	if s.res.Stalled && len(s.res.DeletedBeforeStall) == len(s.res.Victims) {
		// Nothing is left to delete, so nothing of the scale-down stalls.
		s.note("%s", s.res.StallReason)
		s.res.Stalled, s.res.StallPod, s.res.StallReason, s.res.StallUntil = false, "", "", time.Time{}
	}
	s.rolloutNote()
	s.assemble()
	s.claims()
	return s.res, nil
}

type sim struct {
	in       Input
	r        switches
	set      *appsv1.StatefulSet
	minReady int32
	start    int
	end      int

	holders   []*member // one pod per in-range ordinal, ascending
	condemned []*member // descending ordinal, then name
	fates     map[*corev1.Pod]*PodFate
	ignored   []*PodFate
	creates   []*PodFate
	// gone are in-range ordinals whose pod the Recreate pre-step deletes;
	// sync1Used says that step took the first sync.
	gone      map[int]bool
	sync1Used bool
	pos       int
	res       Result
}

func (s *sim) note(format string, args ...any) {
	s.res.Notes = append(s.res.Notes, fmt.Sprintf(format, args...))
}

func (s *sim) inRange(ord int) bool { return ord >= s.start && ord <= s.end }

func (s *sim) podName(ord int) string { return fmt.Sprintf("%s-%d", s.set.Name, ord) }

// partition claims pods and splits them like updateStatefulSet: in-range
// replicas (one per ordinal), condemned (valid ordinal outside the range),
// and the rest ignored.
func (s *sim) partition(sel labels.Selector) {
	s.fates = map[*corev1.Pod]*PodFate{}
	byOrd := map[int][]*member{}
	adopted := 0
	seen := map[string]bool{}
	for _, p := range s.in.Pods {
		if p == nil || seen[p.Namespace+"/"+p.Name] {
			continue
		}
		seen[p.Namespace+"/"+p.Name] = true
		_, ord := ParentAndOrdinal(p.Name)
		claimed, adopt, related, why := s.r.claim(s.set, sel, p)
		if !claimed {
			if related {
				s.ignore(p, ord, why)
			}
			continue
		}
		if adopt {
			adopted++
		}
		if ord < 0 {
			s.ignore(p, ord, fmt.Sprintf("ordinal suffix of %s overflows int32: claimed but neither kept nor condemned", p.Name))
			continue
		}
		m := &member{pod: p, ord: ord}
		if s.inRange(ord) {
			byOrd[ord] = append(byOrd[ord], m)
		} else {
			s.condemned = append(s.condemned, m)
		}
	}
	if adopted > 0 {
		s.note("%d orphan pod(s) match the selector and name: the controller adopts them in the same sync", adopted)
	}
	for ord, ms := range byOrd {
		// The controller keeps the last pod listed for an ordinal; the
		// listing order is random, so prefer the canonical name.
		sort.Slice(ms, func(i, j int) bool {
			ci, cj := ms[i].pod.Name == s.podName(ord), ms[j].pod.Name == s.podName(ord)
			if ci != cj {
				return ci
			}
			return ms[i].pod.Name < ms[j].pod.Name
		})
		s.holders = append(s.holders, ms[0])
		for _, m := range ms[1:] {
			s.ignore(m.pod, ord, fmt.Sprintf("shares ordinal %d with %s: the controller sees one pod per in-range ordinal (the last listed, which is random) and never deletes the other", ord, ms[0].pod.Name))
			s.note("pods %s and %s share ordinal %d; which one the controller sees varies between syncs", ms[0].pod.Name, m.pod.Name, ord)
		}
	}
	sort.Slice(s.holders, func(i, j int) bool { return s.holders[i].ord < s.holders[j].ord })
	sort.Slice(s.condemned, func(i, j int) bool {
		if s.condemned[i].ord != s.condemned[j].ord {
			return s.condemned[i].ord > s.condemned[j].ord
		}
		return s.condemned[i].pod.Name < s.condemned[j].pod.Name
	})
	for i := 1; i < len(s.condemned); i++ {
		if s.condemned[i].ord == s.condemned[i-1].ord {
			s.note("condemned pods %s and %s share ordinal %d: their relative order is random (sort.Sort is unstable)", s.condemned[i-1].pod.Name, s.condemned[i].pod.Name, s.condemned[i].ord)
		}
	}
	for _, m := range s.holders {
		s.fates[m.pod] = &PodFate{Pod: m.pod, Name: m.pod.Name, Ordinal: m.ord, Fate: FateKeep,
			Reason: fmt.Sprintf("ordinal %d in [%d, %d]", m.ord, s.start, s.end)}
	}
	for _, m := range s.condemned {
		f := &PodFate{Pod: m.pod, Name: m.pod.Name, Ordinal: m.ord, Fate: FateDelete, Reason: s.condemnWhy(m.ord)}
		if isTerminating(m.pod) {
			f.Fate = FateTerminating
		}
		s.fates[m.pod] = f
	}
}

func (s *sim) ignore(p *corev1.Pod, ord int, why string) {
	s.ignored = append(s.ignored, &PodFate{Pod: p, Name: p.Name, Ordinal: ord, Fate: FateIgnored, Reason: why})
}

func (s *sim) condemnWhy(ord int) string {
	if ord < s.start {
		return fmt.Sprintf("ordinal %d below start %d: deleted after every ordinal above the range", ord, s.start)
	}
	if s.start == 0 {
		return fmt.Sprintf("ordinal %d >= replicas %d: reverse ordinal", ord, s.in.Replicas)
	}
	return fmt.Sprintf("ordinal %d > end %d (start %d + replicas %d - 1): reverse ordinal", ord, s.end, s.start, s.in.Replicas)
}

// stall records the first blocking point; later calls are ignored.
func (s *sim) stall(pod, reason string) {
	if s.res.Stalled {
		return
	}
	s.res.Stalled, s.res.StallPod, s.res.StallReason = true, pod, reason
}

// deleteCondemned records the next scale-down deletion.
func (s *sim) deleteCondemned(m *member, firstSync bool) {
	s.pos++
	f := s.fates[m.pod]
	f.Position = s.pos
	f.BeforeStall = !s.res.Stalled
	s.res.Victims = append(s.res.Victims, m.name())
	if !s.res.Stalled {
		s.res.DeletedBeforeStall = append(s.res.DeletedBeforeStall, m.name())
	}
	if firstSync {
		s.res.FirstSync = append(s.res.FirstSync, m.name())
	}
}

// finishCondemnedAfterStall lists the condemned pods that go once the block
// clears, in order.
func (s *sim) finishCondemnedAfterStall() {
	for _, m := range s.condemned {
		if s.fates[m.pod].Fate == FateDelete && s.fates[m.pod].Position == 0 {
			s.deleteCondemned(m, false)
		}
	}
}

// recreateOldRevision is recreateDeleteAndWait (1.37 Recreate strategy):
// every created pod, in range or condemned, whose revision label is not the
// update revision is deleted in one sync, and nothing else happens until
// all of them are gone.
func (s *sim) recreateOldRevision() {
	upd := s.set.Status.UpdateRevision
	if upd == "" {
		s.note("updateStrategy Recreate: status.updateRevision is empty, so old-revision pods cannot be told apart; assumed none")
		return
	}
	s.note("updateStrategy Recreate: taking status.updateRevision %q as the update revision", upd)
	old := func(p *corev1.Pod) bool {
		return p.Status.Phase != "" && p.Labels[appsv1.StatefulSetRevisionLabel] != upd
	}
	s.gone = map[int]bool{}
	for _, m := range s.holders {
		if !old(m.pod) {
			continue
		}
		f := s.fates[m.pod]
		s.gone[m.ord] = true
		if isTerminating(m.pod) {
			f.Fate, f.Reason = FateTerminating, "old revision, already terminating: Recreate waits for it, then creates it again"
			continue
		}
		f.Fate, f.Reason = FateRecreate, "old revision: the Recreate strategy deletes it first and creates it again"
		s.res.FirstSync = append(s.res.FirstSync, m.name())
		s.sync1Used = true
	}
	for _, m := range s.condemned {
		if !old(m.pod) || isTerminating(m.pod) {
			continue
		}
		s.fates[m.pod].Reason += "; old revision, so the Recreate strategy deletes it before any scale-down step"
		s.deleteCondemned(m, true)
		s.sync1Used = true
	}
}

func (s *sim) parallel() {
	failed := ""
	next := s.start
	const why = "missing: Parallel creates it in the same sync, without waiting"
	for _, m := range s.holders {
		s.createRange(next, m.ord-1, why)
		next = m.ord + 1
		f := s.fates[m.pod]
		switch {
		case s.gone[m.ord]:
			// Deleted by the Recreate pre-step, created again later.
		case s.r.isTerminal(m.pod) && !isTerminating(m.pod):
			f.Fate, f.Reason = FateRecreate, fmt.Sprintf("%s in range: deleted and created again (Parallel does not wait for it)", m.pod.Status.Phase)
			s.recreateTerminal(m)
		case isTerminating(m.pod):
			f.Fate, f.Reason = FateTerminating, "in range and terminating: created again once gone"
		case failed == "" && m.pod.Name != s.podName(m.ord):
			failed = m.name()
		}
	}
	s.createRange(next, s.end, why)
	if failed != "" {
		s.stall(failed, s.identityReason(failed))
		s.finishCondemnedAfterStall()
		return
	}
	for _, m := range s.condemned {
		f := s.fates[m.pod]
		if f.Fate == FateTerminating {
			f.Reason += "; already terminating: Parallel skips it"
			continue
		}
		if f.Position != 0 {
			continue // deleted by the Recreate pre-step
		}
		s.deleteCondemned(m, !s.sync1Used)
	}
	if s.r.ConcurrentParallel {
		if len(s.res.FirstSync) > 1 {
			s.note("Parallel issues the deletions in one sync, concurrently in slow-start batches (1, 2, 4, … up to 500); the order is not guaranteed")
		}
	} else if len(s.res.FirstSync) > 1 {
		s.note("Parallel issues the deletions in one sync, one after another, stopping at the first error")
	}
}

// createRange records the missing in-range ordinals from..to, listing at
// most maxCreateFates of them (replicas can be huge).
func (s *sim) createRange(from, to int, why string) {
	for ord := from; ord <= to; ord++ {
		if len(s.creates) == maxCreateFates {
			s.note("%d more missing in-range ordinals from %s on are not listed", to-ord+1, s.podName(ord))
			return
		}
		s.creates = append(s.creates, &PodFate{Name: s.podName(ord), Ordinal: ord, Fate: FateCreate, Reason: why})
		if !s.sync1Used {
			s.res.FirstSyncCreates = append(s.res.FirstSyncCreates, s.podName(ord))
		}
	}
}

func (s *sim) identityReason(name string) string {
	return fmt.Sprintf("%s is in range but its name is not the canonical %s-<ordinal>: the controller tries to update its identity to the canonical name, the update fails, and the sync ends with an error before any scale-down deletion (inferred from the source, not run)", name, s.set.Name)
}

// ordered simulates OrderedReady sync after sync: processReplica over the
// in-range ordinals ascending, then one processCondemned step per sync.
func (s *sim) ordered() {
	if s.orderedReplicas() {
		s.finishCondemnedAfterStall()
		return
	}
	var alive []*member
	for _, m := range s.condemned {
		if s.fates[m.pod].Position == 0 { // else deleted by the Recreate pre-step
			alive = append(alive, m)
		}
	}
	firstSync := !s.sync1Used
	for len(alive) > 0 {
		c := alive[0]
		f := s.fates[c.pod]
		if isTerminating(c.pod) {
			f.Reason += "; already terminating: OrderedReady waits for it to disappear, then goes on"
			s.res.Waits = append(s.res.Waits, c.name())
			alive = alive[1:]
			firstSync = false
			continue
		}
		first := s.firstUnhealthy(alive)
		blockedReady := !isRunningAndReady(c.pod) && c != first
		blockedAvail := !blockedReady && s.minReady > 0 && !engine.Available(c.pod, s.minReady, s.in.Now, s.r.AvailableAtBoundary) && c != first
		if blockedReady || blockedAvail {
			if rest := s.dropTerminating(alive); len(rest) < len(alive) {
				// Lower terminating pods count as unhealthy until they
				// are gone, which they will be: the block is temporary.
				alive, firstSync = rest, false
				continue
			}
		}
		if blockedReady {
			s.stall(c.name(), fmt.Sprintf("%s (condemned) is not Running and Ready (%s) and is not the first unhealthy pod (%s is): the controller deletes nothing until %s is Running and Ready or every pod below it is healthy", c.name(), healthWord(c.pod), nameOr(first), c.name()))
			break
		}
		if blockedAvail {
			s.stall(c.name(), fmt.Sprintf("%s (condemned) is Ready but not available (minReadySeconds %d) and is not the first unhealthy pod (%s): the controller deletes nothing until it is available%s", c.name(), s.minReady, s.firstWord(first), s.untilWord(c.pod)))
			s.res.StallUntil = s.r.availableAt(c.pod, s.minReady)
			break
		}
		if c == first {
			f.Reason += "; unhealthy but the first unhealthy pod, so it may go"
		}
		s.deleteCondemned(c, firstSync)
		firstSync = false
		alive = alive[1:]
	}
	s.finishCondemnedAfterStall()
}

// dropTerminating lets the terminating pods of alive disappear, recording
// that the controller waits for them.
func (s *sim) dropTerminating(alive []*member) []*member {
	var rest []*member
	for _, m := range alive {
		if isTerminating(m.pod) {
			s.fates[m.pod].Reason += "; already terminating: counts as the first unhealthy pod until it disappears, then the scale-down goes on"
			s.res.Waits = append(s.res.Waits, m.name())
			continue
		}
		rest = append(rest, m)
	}
	return rest
}

func nameOr(m *member) string {
	if m == nil {
		return "none"
	}
	return m.name()
}

func (s *sim) firstWord(m *member) string {
	if m == nil {
		if s.r.UnavailableFirst {
			return "none"
		}
		return "none: up to 1.33 that pick ignores minReadySeconds"
	}
	return m.name() + " is"
}

func (s *sim) untilWord(p *corev1.Pod) string {
	at := s.r.availableAt(p, s.minReady)
	if at.IsZero() {
		return " (its Ready condition has no transition time, so it never becomes available)"
	}
	return fmt.Sprintf(" in %s", at.Sub(s.in.Now).Round(time.Second))
}

// firstUnhealthy: the lowest in-range replica that is unhealthy, else the
// lowest unhealthy condemned pod.
func (s *sim) firstUnhealthy(alive []*member) *member {
	for _, m := range s.holders {
		if s.r.unhealthy(m.pod, s.minReady, s.in.Now) {
			return m
		}
	}
	for i := len(alive) - 1; i >= 0; i-- {
		if s.r.unhealthy(alive[i].pod, s.minReady, s.in.Now) {
			return alive[i]
		}
	}
	return nil
}

// orderedReplicas walks the in-range ordinals like processReplica in
// monotonic mode; it reports whether one of them ends every sync. Those pods
// do not change between syncs, so the first sync's verdict holds.
func (s *sim) orderedReplicas() bool {
	next := s.start
	for _, m := range s.holders {
		if next < m.ord {
			return s.missing(next)
		}
		next = m.ord + 1
		f := s.fates[m.pod]
		p := m.pod
		switch {
		case s.gone[m.ord]:
			return s.missing(m.ord)
		case s.r.isTerminal(p):
			if !isTerminating(p) {
				f.Fate, f.Reason = FateRecreate, fmt.Sprintf("%s in range: deleted and created again", p.Status.Phase)
				s.recreateTerminal(m)
			} else {
				f.Fate, f.Reason = FateTerminating, fmt.Sprintf("%s and terminating: created again once gone", p.Status.Phase)
			}
			s.stall(p.Name, fmt.Sprintf("%s (kept) is %s: the controller deletes it to create it again and deletes nothing else until the new pod is Running and Ready", p.Name, p.Status.Phase))
			return true
		case isTerminating(p):
			f.Fate, f.Reason = FateTerminating, "in range and terminating: created again once gone"
			s.stall(p.Name, fmt.Sprintf("%s (kept) is terminating: the controller waits for it to go, creates it again, and deletes nothing until the new pod is Running and Ready", p.Name))
			return true
		case !isRunningAndReady(p):
			s.stall(p.Name, fmt.Sprintf("%s (kept) is not Running and Ready (%s): the controller deletes nothing until it is", p.Name, healthWord(p)))
			return true
		case s.minReady > 0 && !engine.Available(p, s.minReady, s.in.Now, s.r.AvailableAtBoundary):
			s.stall(p.Name, fmt.Sprintf("%s (kept) is Ready but not yet available (minReadySeconds %d): the controller deletes nothing until it is%s", p.Name, s.minReady, s.untilWord(p)))
			s.res.StallUntil = s.r.availableAt(p, s.minReady)
			return true
		case p.Name != s.podName(m.ord):
			s.stall(p.Name, s.identityReason(p.Name))
			return true
		}
	}
	if next <= s.end {
		return s.missing(next)
	}
	return false
}

// recreateTerminal records the first sync's deletion of a finished in-range
// pod and, where the version does it at once, its creation.
func (s *sim) recreateTerminal(m *member) {
	if s.sync1Used {
		return
	}
	s.res.FirstSync = append(s.res.FirstSync, m.name())
	if s.r.RecreateSameSync {
		s.res.FirstSyncCreates = append(s.res.FirstSyncCreates, m.name())
	}
}

func (s *sim) missing(ord int) bool {
	name := s.podName(ord)
	if s.gone[ord] {
		s.stall(name, fmt.Sprintf("%s (kept) is deleted by the Recreate strategy: the controller creates it again and deletes nothing until it is Running and Ready", name))
		return true
	}
	s.createRange(ord, ord, "missing: OrderedReady creates it and waits for it")
	s.stall(name, fmt.Sprintf("%s (kept) does not exist: the controller creates it and deletes nothing until it is Running and Ready", name))
	return true
}

// rolloutNote warns when a rolling update would follow the scale-down.
func (s *sim) rolloutNote() {
	st := s.set.Status
	if s.set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType ||
		s.set.Spec.UpdateStrategy.Type == appsv1.RecreateStatefulSetStrategyType || st.UpdateRevision == "" {
		return
	}
	for _, m := range s.holders {
		if rev := m.pod.Labels[appsv1.StatefulSetRevisionLabel]; rev != "" && rev != st.UpdateRevision {
			s.note("in-range pod %s is not at the update revision %s: once the scale-down is done the rolling update deletes in-range pods too (not modelled here)", m.name(), st.UpdateRevision)
			return
		}
	}
}

// assemble orders Result.Pods: condemned in deletion order, in range
// ascending, ignored by name.
func (s *sim) assemble() {
	// Deleted pods by position; an undeleted one just after the pod that
	// precedes it in ordinal order.
	type keyed struct {
		f   *PodFate
		key float64
	}
	var cond []keyed
	last := 0.0
	for _, m := range s.condemned {
		f := s.fates[m.pod]
		if f.Position != 0 {
			last = float64(f.Position)
			cond = append(cond, keyed{f, last})
		} else {
			cond = append(cond, keyed{f, last + 0.5})
		}
	}
	sort.SliceStable(cond, func(i, j int) bool { return cond[i].key < cond[j].key })
	for _, c := range cond {
		s.res.Pods = append(s.res.Pods, *c.f)
	}
	var kept []*PodFate
	for _, m := range s.holders {
		kept = append(kept, s.fates[m.pod])
	}
	kept = append(kept, s.creates...)
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Ordinal < kept[j].Ordinal })
	for _, f := range kept {
		s.res.Pods = append(s.res.Pods, *f)
	}
	sort.SliceStable(s.ignored, func(i, j int) bool { return s.ignored[i].Name < s.ignored[j].Name })
	for _, f := range s.ignored {
		s.res.Pods = append(s.res.Pods, *f)
	}
}
