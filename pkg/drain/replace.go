package drain

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// remove starts p's termination (eviction or delete) and lets its
// controller react: ReplicaSet, ReplicationController and Job pods are
// replaced at once; a StatefulSet pod only once it is gone (advance).
func (s *state) remove(p *podState) {
	pod := p.pod.DeepCopy()
	if pod.DeletionTimestamp == nil {
		t := metav1.NewTime(s.in.Now)
		pod.DeletionTimestamp = &t
	}
	s.setPod(p, pod)
	if disruption.Finished(pod) {
		return // the controller replaced it when it finished
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ref.Kind != "StatefulSet" {
		s.replace(p)
	}
}

// replace creates the owner's new pod for old, if its owner makes one.
func (s *state) replace(old *podState) {
	ref := metav1.GetControllerOfNoCopy(old.pod)
	r := &Replacement{For: old.key, Owner: ref.Kind + "/" + ref.Name, Certain: true}
	if ref.Kind == "DaemonSet" {
		return // a DaemonSet pod is not made elsewhere
	}
	owner := s.owners.Get(old.pod.Namespace, ref)
	r.Owner = disruption.OwnerName(ref, owner)
	if owner != nil && !s.wantsMore(owner, ref) {
		return // the controller already has all the pods it wants
	}
	tmpl, ok := disruption.Template(owner)
	if !ok {
		if disruption.ModelledKind(ref) && s.in.OwnersRead[ref.Kind] {
			s.note(fmt.Sprintf("the owner %s of pod %s does not exist (the garbage collector deletes the pod): nothing replaces it", r.Owner, old.key))
			return
		}
		r.Certain = false
		s.note(fmt.Sprintf("the owner %s of pod %s is not in the input: assumed it replaces the pod with the same spec", r.Owner, old.key))
		tmpl = corev1.PodTemplateSpec{ObjectMeta: old.pod.ObjectMeta, Spec: old.pod.Spec}
	}
	pod := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
	pod.Namespace, pod.OwnerReferences = old.pod.Namespace, old.pod.OwnerReferences
	pod.Spec.NodeName, pod.Spec.Priority, pod.Spec.PreemptionPolicy = "", old.pod.Spec.Priority, old.pod.Spec.PreemptionPolicy
	pod.DeletionTimestamp, pod.Status = nil, corev1.PodStatus{Phase: corev1.PodPending}
	s.created++
	pod.Name = fmt.Sprintf("%s (replacement %d)", ref.Name, s.created)
	pod.UID = "" // a new pod
	if ref.Kind == "StatefulSet" {
		pod.Name = old.pod.Name // same identity
	}
	np := &podState{pod: pod, key: pod.Namespace + "/" + pod.Name, replaces: old.key, pending: true, repl: r}
	r.batch, r.class = s.passes, raceClass(np)
	np.willReady, np.readyUnknown = s.readiness(old, ref)
	if ref.Kind == "Job" {
		np.hold = s.v.jobHold // the controller's back-off first
		s.seen.job = true
	}
	s.add(np)
	s.repls = append(s.repls, r)
}

// wantsMore: the owner creates a pod for the one leaving. A ReplicaSet or
// ReplicationController counts its active pods (not terminating, not
// finished) against spec.replicas; a finished Job creates none.
func (s *state) wantsMore(owner metav1.Object, ref *metav1.OwnerReference) bool {
	want, counted, replaces := disruption.ActiveWanted(owner)
	if !counted {
		return replaces
	}
	var active int32
	for _, p := range s.ownedBy(ref) {
		if !p.gone && !p.terminating() && !disruption.Finished(p.pod) && metav1.IsControlledBy(p.pod, owner) {
			active++
		}
	}
	return active < want
}

// readiness guesses whether a new pod of the owner becomes Ready: yes
// when every other live pod of the owner is Ready, no when none is; mixed
// is unknown (assumed yes).
func (s *state) readiness(old *podState, ref *metav1.OwnerReference) (ready, unknown bool) {
	var readyN, notReady int
	for _, p := range s.ownedBy(ref) {
		if p == old || p.gone || p.pending || p.terminating() || p.pod.Namespace != old.pod.Namespace || p.pod.Spec.NodeName == "" {
			continue
		}
		r := metav1.GetControllerOfNoCopy(p.pod)
		if r == nil || r.UID != ref.UID || r.Name != ref.Name {
			continue
		}
		if disruption.IsReady(p.pod) {
			readyN++
		} else {
			notReady++
		}
	}
	if readyN == 0 && notReady == 0 {
		if p := old.pod; p.Spec.NodeName != "" && !disruption.Finished(p) && p.DeletionTimestamp == nil && !disruption.IsReady(p) {
			return true, true // a lone pod that is starting: it may or may not become Ready
		}
		return disruption.IsReady(old.pod), !disruption.IsReady(old.pod)
	}
	return readyN > 0, readyN > 0 && notReady > 0
}

// schedule runs the filters for every pending replacement and binds
// those that fit. The order is creation order, or the run's script where
// the round's evictions race (branches.go); Job replacements after the
// others (they come after the back-off), held ones not yet.
func (s *state) schedule() bool {
	s.passes++
	changed := false
	var ready [2][]*podState // by backsOff: the Job's replacements come last
	for _, p := range s.queue() {
		if p.hold > 0 {
			p.hold--
			changed = true // time passes for the back-off
			continue
		}
		ready[backsOff(p)] = append(ready[backsOff(p)], p)
	}
	for _, round := range ready {
		changed = s.placeRound(round) || changed
	}
	return changed
}

// placeRound places replacements created together, in the run's order,
// then checks whether they competed: whose feasible nodes shrank because
// another was bound. Such a round is a branch point (branches.go).
func (s *state) placeRound(q []*podState) bool {
	if len(q) < 2 {
		return len(q) == 1 && s.place(q[0])
	}
	order := s.orderRound(q)
	changed := false
	for _, p := range order {
		changed = s.place(p) || changed
	}
	alone, aloneNode := s.aloneFeasible(order)
	if s.checkRace(order, alone, aloneNode) {
		s.markRaced(q)
	}
	return changed
}

// aloneFeasible are the nodes each of q fits on with none of q bound,
// and, for those the scores placed, the node they would pick then ("?"
// when undetermined); a pod that fits every schedulable node anyway and
// was not scored needs no second look.
func (s *state) aloneFeasible(q []*podState) ([][]string, []string) {
	open := 0
	for _, n := range s.schedNodes() {
		if !n.Spec.Unschedulable {
			open++
		}
	}
	alone, aloneNode := make([][]string, len(q)), make([]string, len(q))
	look := false
	for i, p := range q {
		alone[i] = p.repl.Candidates
		look = look || len(alone[i]) < open || p.scored
	}
	if !look {
		return alone, aloneNode
	}
	for _, p := range q {
		s.forget(p.pod)
	}
	for i, p := range q {
		if len(alone[i]) >= open && !p.scored {
			continue
		}
		pod := p.pod.DeepCopy()
		pod.Spec.NodeName = ""
		if pl, ch, err := s.placement(pod); err == nil {
			alone[i] = pl.Feasible
			if p.scored {
				aloneNode[i] = cmp.Or(ch.Node, "?")
			}
		}
	}
	for _, p := range q {
		s.remember(p.pod)
	}
	return alone, aloneNode
}

// checkRace: kubectl evicts a node's pods in parallel, so the order in
// which a round's replacements reach the scheduler is timing. Where one's
// binding took a node another could use, or moved another's best score,
// every replacement that could use it is uncertain; where one then fit nowhere, whether each is scheduled
// is uncertain too (raced). It returns whether the round raced.
func (s *state) checkRace(q []*podState, alone [][]string, aloneNode []string) bool {
	contested := map[string]bool{}
	starved := false
	for i, p := range q {
		if aloneNode[i] != "" && aloneNode[i] != p.repl.Node {
			// Alone it would be scored elsewhere: the round's order moved it.
			contested[p.repl.Node] = true
			if aloneNode[i] != "?" {
				contested[aloneNode[i]] = true
			}
		}
		if sameSlice(alone[i], p.repl.Candidates) {
			continue // not placed again: nothing to compare
		}
		got := sets.New(p.repl.Candidates...)
		for _, n := range alone[i] {
			if !got.Has(n) {
				contested[n] = true
			}
		}
		starved = starved || (len(alone[i]) > 0 && len(p.repl.Candidates) == 0)
	}
	if len(contested) == 0 {
		return false
	}
	for i, p := range q {
		if !slices.ContainsFunc(alone[i], func(n string) bool { return contested[n] }) {
			continue
		}
		p.repl.Certain, p.repl.raced = false, true
		if starved {
			s.raced = append(s.raced, p.repl)
		}
	}
	return true
}

func sameSlice(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// queue is the pending replacements in the order the run schedules them.
func (s *state) queue() []*podState {
	var q []*podState
	for _, p := range s.pods {
		if p.pending && !p.gone {
			q = append(q, p)
		}
	}
	slices.SortStableFunc(q, func(a, b *podState) int { return cmp.Compare(backsOff(a), backsOff(b)) })
	return q
}

// backsOff: the Job controller creates this replacement after its back-off.
func backsOff(p *podState) int {
	if ref := metav1.GetControllerOfNoCopy(p.pod); ref != nil && ref.Kind == "Job" {
		return 1
	}
	return 0
}

// releaseHolds ends every back-off: the drain is over, the Job's
// replacement is created anyway.
func (s *state) releaseHolds() {
	for _, p := range s.pods {
		p.hold = 0
	}
}

// place runs the filters for p and binds it where it fits: where the
// scheduler's scores determine the node, there; else on the run's pick.
func (s *state) place(p *podState) bool {
	pl, ch, err := s.placement(p.pod)
	if err != nil {
		p.repl.Reason, p.repl.Certain = err.Error(), false
		return false
	}
	for _, u := range pl.Unmodelled {
		s.note(fmt.Sprintf("replacement for %s: %s", p.replaces, u))
	}
	p.repl.Candidates, p.repl.Reason = pl.Feasible, pl.FitError
	if len(pl.Feasible) == 0 {
		return false
	}
	node := ch.Node
	p.scored = ch.Determined() && len(pl.Feasible) > 1
	if !ch.Determined() {
		node = s.pick(pl)
		s.choiceMade = s.choiceMade || len(pl.Feasible) > 1
	}
	if node != ch.Node || len(ch.Unmodelled) > 0 || len(pl.Unmodelled) > 0 {
		p.repl.Certain = false
	}
	s.bind(p, node)
	return true
}

// pick is the node a run binds to: the least allocated (the scheduler's
// likeliest choice; ties to the first), or the first or last feasible one
// in the runs that test whether the choice matters.
func (s *state) pick(pl scheduling.Placement) string {
	switch s.v.pick {
	case pickFirst:
		return pl.Feasible[0]
	case pickLast:
		return pl.Feasible[len(pl.Feasible)-1]
	}
	return pl.Likeliest()
}

func (s *state) bind(p *podState, node string) {
	pod := p.pod.DeepCopy()
	pod.Spec.NodeName = node
	pod.Status.Phase = corev1.PodRunning
	s.setPod(p, pod)
	p.pending = false
	p.repl.Node, p.repl.Reason = node, ""
}

// becomeReady marks the bound pods that become Ready (replacements and
// pods that were starting) as Ready.
func (s *state) becomeReady() bool {
	changed := false
	for _, p := range s.pods {
		if p.pending || p.gone || p.terminating() || !p.willReady || disruption.IsReady(p.pod) || (p.readyUnknown && s.v.unreadyStays) {
			continue
		}
		s.setPod(p, withReady(p.pod))
		s.seen.assumed = s.seen.assumed || p.readyUnknown
		changed = true
	}
	return changed
}

// withReady is a copy of pod with its Ready condition True: the existing
// condition is replaced (the first Ready condition is the one that counts).
func withReady(pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			pod.Status.Conditions[i] = ready
			return pod
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, ready)
	return pod
}

// terminate ends every terminating pod (after its grace period); a
// StatefulSet then recreates its pod under the same name.
func (s *state) terminate() bool {
	changed := false
	n := len(s.pods)
	for i := 0; i < n; i++ {
		p := s.pods[i]
		if p.gone || !p.terminating() {
			continue
		}
		p.gone, changed = true, true
		s.forget(p.pod)
		s.touch(p)
		if ref := metav1.GetControllerOfNoCopy(p.pod); ref != nil && ref.Kind == "StatefulSet" && !disruption.Finished(p.pod) && p.repl == nil {
			s.replace(p)
		}
	}
	return changed
}
