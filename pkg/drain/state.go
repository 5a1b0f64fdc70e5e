package drain

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// podState is one pod as the simulation moves it.
type podState struct {
	pod  *corev1.Pod // a copy the simulation may change
	key  string
	gone bool
	// replacement bookkeeping: who it replaces, whether it will become
	// Ready (willReady), and whether that is only assumed.
	replaces     string
	willReady    bool
	readyUnknown bool
	pending      bool // created, not yet scheduled
	ownerMissing bool // its controller is not in the input
	repl         *Replacement
}

// display names the pod in a sentence; a replacement by what it replaces.
func (p *podState) display() string {
	if p.repl != nil {
		return "the replacement of " + p.replaces
	}
	return p.key
}

func (p *podState) terminating() bool { return p.pod.DeletionTimestamp != nil }

// budgetState is a budget's status as the Eviction API reads it: the
// recorded one until the controller recomputes it.
type budgetState struct {
	b          *disruption.Budget
	status     disruption.Status
	lag        bool // observedGeneration < generation: 429 until a sync
	recomputed bool
	unknown    string
}

// state is the cluster as the drain changes it.
type state struct {
	in       Input
	owners   *disruption.Owners
	pods     []*podState
	byKey    map[string]*podState
	cordoned map[string]bool
	budgets  []*budgetState
	created  int // replacements created, for unique names
	notes    []string
	// pickLast: among feasible nodes take the last instead of the first
	// (the second run that tells whether scoring matters).
	pickLast bool
	repls    []*Replacement
	broken   []string       // budgets --disable-eviction breaks
	sched    []*corev1.Node // the nodes as the scheduler sees them: cordoned ones unschedulable

	// podCache keeps what placement reads of each pod across replacements.
	podCache scheduling.PodCache
}

func newState(in Input, pickLast bool) *state {
	s := &state{in: in, owners: disruption.NewOwners(in.Workloads), byKey: map[string]*podState{}, cordoned: map[string]bool{}, pickLast: pickLast}
	for _, p := range in.Pods {
		ps := &podState{pod: p, key: p.Namespace + "/" + p.Name}
		s.pods = append(s.pods, ps)
		s.byKey[ps.key] = ps
	}
	for _, p := range s.pods {
		s.markStarting(p)
		if ref := metav1.GetControllerOf(p.pod); ref != nil && s.owners.Get(p.pod.Namespace, ref) == nil {
			p.ownerMissing = ref.Kind != "DaemonSet" || in.OwnersRead["DaemonSet"]
		}
	}
	for _, n := range in.Drain {
		s.cordoned[n] = true // kubectl cordons every named node first
	}
	for _, b := range disruption.Parse(in.PDBs) {
		s.budgets = append(s.budgets, s.initialBudget(b))
	}
	return s
}

// initialBudget takes the recorded status; a budget whose status was
// never written, or lags its generation, waits for the controller.
func (s *state) initialBudget(b *disruption.Budget) *budgetState {
	bs := &budgetState{b: b}
	st := b.PDB.Status
	bs.status = disruption.Status{ExpectedPods: st.ExpectedPods, DesiredHealthy: st.DesiredHealthy, CurrentHealthy: st.CurrentHealthy,
		DisruptionsAllowed: st.DisruptionsAllowed, DisruptedPods: copyTimes(st.DisruptedPods)}
	if b.Selector == nil {
		return bs
	}
	bs.lag = st.ObservedGeneration < b.PDB.Generation
	if st.ObservedGeneration == 0 && b.PDB.Generation == 0 {
		bs.unknown = fmt.Sprintf("PodDisruptionBudget %s has no status (the controller never synced it, or the file omits it): its allowed disruptions are computed, not read", b.Name())
		bs.lag = true
	}
	if err := disruption.CheckStatus(b); err != nil {
		bs.unknown = err.Error() + ": recomputed from the pods instead"
		bs.lag = true
	}
	s.checkRecorded(bs)
	return bs
}

// checkRecorded compares the recorded status with what the controller
// would write for the snapshot; a difference means stale or partial input.
func (s *state) checkRecorded(bs *budgetState) {
	if bs.lag {
		return
	}
	c := disruption.Compute(bs.b, s.livePods(), s.owners, s.in.Now)
	if c.Unknown != "" {
		bs.unknown = c.Unknown
		return
	}
	if c.SyncFailed == "" && c.DisruptionsAllowed != bs.status.DisruptionsAllowed {
		s.note(fmt.Sprintf("PodDisruptionBudget %s records %d disruptions allowed, but its pods give %d: the status is stale or the input partial", bs.b.Name(), bs.status.DisruptionsAllowed, c.DisruptionsAllowed))
	}
}

func copyTimes(m map[string]metav1.Time) map[string]metav1.Time {
	out := make(map[string]metav1.Time, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *state) note(msg string) {
	if !slices.Contains(s.notes, msg) {
		s.notes = append(s.notes, msg)
	}
}

// livePods are the pods that still exist.
func (s *state) livePods() []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(s.pods))
	for _, p := range s.pods {
		if !p.gone {
			out = append(out, p.pod)
		}
	}
	return out
}

// recompute is one disruption controller sync of every budget.
func (s *state) recompute() {
	live := s.livePods()
	for _, bs := range s.budgets {
		if bs.b.Selector == nil {
			continue
		}
		c := disruption.Compute(bs.b, live, s.owners, s.in.Now)
		bs.status, bs.lag, bs.recomputed = c, false, true
		if c.Unknown != "" {
			bs.unknown = c.Unknown
		}
	}
}

// budgetsOf are the budgets the Eviction API finds for p.
func (s *state) budgetsOf(p *corev1.Pod) []*budgetState {
	var out []*budgetState
	for _, bs := range s.budgets {
		if bs.b.EvictionSelects(p) {
			out = append(out, bs)
		}
	}
	return out
}

// schedNodes are the nodes with the cordoned ones unschedulable.
func (s *state) schedNodes() []*corev1.Node {
	if s.sched != nil {
		return s.sched
	}
	out := make([]*corev1.Node, 0, len(s.in.Nodes))
	for _, n := range s.in.Nodes {
		if s.cordoned[n.Name] && !n.Spec.Unschedulable {
			n = n.DeepCopy()
			n.Spec.Unschedulable = true
		}
		out = append(out, n)
	}
	s.sched = out
	return out
}

// markStarting guesses whether a bound pod that is not Ready yet becomes
// Ready, as for a replacement (readiness).
func (s *state) markStarting(p *podState) {
	pod := p.pod
	ref := metav1.GetControllerOf(pod)
	if ref == nil || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || finished(pod) || disruption.IsReady(pod) {
		return
	}
	p.willReady, p.readyUnknown = s.readiness(p, ref)
}
