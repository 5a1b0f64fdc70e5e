package drain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// waitState is what a waiting eviction waits on.
type waitState struct {
	l        listed
	why      string // the latest 429's arithmetic
	budget   *budgetState
	waitsFor []string // replacements (by the pod they replace) it waited for
	unknown  bool     // one of them may never become Ready
}

// evictAll is evictPods: every pod's eviction is retried on 429 until
// it succeeds; between retries the cluster moves on (advance). It
// returns true when kubectl would wait forever (no --timeout).
func (s *state) evictAll(nr *NodeResult, acted []listed) bool {
	waiting := map[string]*waitState{}
	contended := map[*budgetState]bool{}
	todo := acted
	lastRound := 0
	for round := 0; len(todo) > 0; round++ {
		lastRound = round
		var next []listed
		passed := map[*budgetState]bool{}
		for _, l := range todo {
			a := s.evict(l.p)
			if a.budget != nil {
				l.res.PDB = a.budget.b.PDB.Name
				s.doubt(nr, a.budget.unknown)
			}
			switch a.code {
			case evOK:
				s.evicted(nr, l, a, waiting[l.p.key], round)
				passed[a.budget] = a.budget != nil
			case evError:
				l.res.Action, l.res.Why = ActionBlocking, a.why+"; unblock: "+s.unblockError(a)
			case evWait:
				if passed[a.budget] {
					contended[a.budget] = true
				}
				s.wait(waiting, l, a)
				next = append(next, l)
			}
		}
		todo = next
		if len(todo) == 0 || s.timesOut(round+1) || round >= s.maxRounds() || !s.advance() {
			break
		}
	}
	timedOut := s.timesOut(lastRound + 1)
	for _, l := range todo {
		s.blocked(nr, waiting[l.p.key], contended, timedOut)
	}
	return len(todo) > 0 && s.in.Options.Timeout == 0
}

// maxRounds bounds the retries: each round that changes something ends a
// pod, binds a replacement, makes a pod Ready or a back-off pass, so more
// rounds than that change nothing (a guard: advance already stops then).
func (s *state) maxRounds() int {
	return 4*len(s.pods) + len(s.budgets) + 8
}

// retryDelay is kubectl's EvictErrorRetryDelay: a 429 is retried after it.
const retryDelay = 5 * time.Second

// timesOut: kubectl's --timeout ends before retry number round.
func (s *state) timesOut(round int) bool {
	t := s.in.Options.Timeout
	return t > 0 && time.Duration(round)*retryDelay > t
}

// closeToTimeout: the retries alone take half of --timeout or more, so
// how long the pods take to become Ready decides.
func (s *state) closeToTimeout(round int) bool {
	t := s.in.Options.Timeout
	return t > 0 && 2*time.Duration(round)*retryDelay >= t
}

// doubt makes the node uncertain for a reason the snapshot cannot settle.
func (s *state) doubt(nr *NodeResult, why string) {
	if why != "" {
		nr.Certain = false
		s.note(why)
	}
}

// evicted records a successful eviction.
func (s *state) evicted(nr *NodeResult, l listed, a answer, w *waitState, round int) {
	s.remove(l.p)
	if l.p.ownerMissing {
		s.doubt(nr, fmt.Sprintf("node %s: pod %s's owner is missing from the input, so its replacement (and the budgets that count it) are guessed", nr.Node, l.p.key))
	}
	nr.Evicted = append(nr.Evicted, l.p.key)
	if round == 0 || w == nil {
		l.res.Action, l.res.Why = ActionEvicted, a.why
		return
	}
	l.res.Action = ActionEvictedAfterWait
	l.res.WaitsFor = w.waitsFor
	l.res.Why = w.why + " until " + readyPhrase(w.waitsFor)
	if s.closeToTimeout(round) {
		s.doubt(nr, fmt.Sprintf("node %s: pod %s goes after %d retries of 5 s, close to --timeout=%s: whether it goes in time depends on how fast pods become Ready", nr.Node, l.p.key, round, s.in.Options.Timeout))
	}
	if w.unknown {
		nr.Certain = false
		s.note(fmt.Sprintf("pod %s waits for replacements whose readiness the snapshot cannot tell", l.p.key))
	}
}

func readyPhrase(waitsFor []string) string {
	if len(waitsFor) == 0 {
		return "the disruption controller recomputes the budget"
	}
	return strings.Join(waitsFor, ", ") + " is Ready"
}

// wait records a 429 and the replacements it waits for.
func (s *state) wait(waiting map[string]*waitState, l listed, a answer) {
	w := waiting[l.p.key]
	if w == nil {
		w = &waitState{l: l}
		waiting[l.p.key] = w
	}
	w.why, w.budget = a.why, a.budget // the latest arithmetic, after the controller's sync
	if a.budget == nil {
		return
	}
	for _, p := range a.budget.members {
		if !p.willReady && !p.pending || p.gone || p.terminating() || disruption.IsReady(p.pod) {
			continue
		}
		if name := p.display(); !slices.Contains(w.waitsFor, name) {
			w.waitsFor = append(w.waitsFor, name)
		}
		if p.readyUnknown {
			w.unknown = true
		}
	}
}

// advance lets time pass: terminating pods end, the scheduler binds the
// replacements, they become Ready, and the controller recomputes every
// budget. It returns false when nothing changed.
func (s *state) advance() bool {
	before := s.budgetSignature()
	changed := s.terminate()
	changed = s.schedule() || changed
	changed = s.becomeReady() || changed
	s.recompute()
	return changed || s.budgetSignature() != before
}

func (s *state) budgetSignature() string {
	var b strings.Builder
	for _, bs := range s.budgets {
		fmt.Fprintf(&b, "%d/%t;", bs.status.DisruptionsAllowed, bs.lag)
	}
	return b.String()
}

// blocked records a pod whose eviction never succeeds, with the one thing
// that would unblock it.
func (s *state) blocked(nr *NodeResult, w *waitState, contended map[*budgetState]bool, timedOut bool) {
	l := w.l
	l.res.Action = ActionBlocking
	l.res.WaitsFor = w.waitsFor
	l.res.Why = w.why + "; unblock: " + s.unblockWait(w)
	if timedOut {
		l.res.Why = fmt.Sprintf("%s; kubectl's --timeout=%s ends first (it retries every 5 s), else %s", w.why, s.in.Options.Timeout, s.unblockWait(w))
	}
	if w.unknown {
		nr.Certain = false
		s.note(fmt.Sprintf("node %s: pod %s waits for pods whose readiness the snapshot cannot tell", nr.Node, l.p.key))
	}
	if b := w.budget; b != nil {
		if contended[b] {
			nr.Certain = false
			s.note(fmt.Sprintf("node %s: pods under PDB %s race for its disruptions; which of them stay depends on which eviction request arrives first", nr.Node, b.b.PDB.Name))
		}
		s.doubt(nr, b.unknown)
	}
}

// unblockWait names what would let a waiting eviction through.
func (s *state) unblockWait(w *waitState) string {
	b := w.budget
	if b == nil {
		return "nothing the snapshot shows"
	}
	st := b.status
	name := b.b.PDB.Name
	if st.SyncFailed != "" {
		return fmt.Sprintf("fix PDB %s so that the disruption controller can compute it (%s)", name, st.SyncFailed)
	}
	if r := s.unplacedUnder(b); r != nil {
		return fmt.Sprintf("the replacement of %s fits on no node (%s): the drain blocks until capacity is added", r.For, r.Reason)
	}
	if r := s.unreadyUnder(b); r != nil {
		return fmt.Sprintf("the replacement of %s must become Ready (the pods of %s are not Ready now)", r.replaces, r.repl.Owner)
	}
	if !disruption.IsReady(w.l.p.pod) && !b.b.UnhealthyAlwaysAllow(s.in.Disruption.UnhealthyPodEvictionPolicy) {
		return fmt.Sprintf("the pod is not Ready and PDB %s is not healthy (%d < %d): set unhealthyPodEvictionPolicy: AlwaysAllow or make its pods Ready", name, st.CurrentHealthy, st.DesiredHealthy)
	}
	if st.DesiredHealthy >= st.ExpectedPods && st.ExpectedPods > 0 {
		return fmt.Sprintf("PDB %s needs %d healthy of %d pods: it never allows a disruption; lower it or scale the workload up", name, st.DesiredHealthy, st.ExpectedPods)
	}
	return fmt.Sprintf("PDB %s must allow a disruption (%d healthy, %d needed)", name, st.CurrentHealthy, st.DesiredHealthy)
}

func (s *state) unplacedUnder(b *budgetState) *Replacement {
	for _, p := range b.members {
		if p.repl != nil && p.pending && !p.gone {
			return p.repl
		}
	}
	return nil
}

func (s *state) unreadyUnder(b *budgetState) *podState {
	for _, p := range b.members {
		if p.repl != nil && !p.pending && !p.gone && !disruption.IsReady(p.pod) {
			return p
		}
	}
	return nil
}

// unblockError names what would end an Eviction API error.
func (s *state) unblockError(a answer) string {
	if strings.Contains(a.why, "PodDisruptionBudgets select it") {
		return "leave one PodDisruptionBudget selecting the pod"
	}
	return "fix the budget's status (the disruption controller rewrites it)"
}
