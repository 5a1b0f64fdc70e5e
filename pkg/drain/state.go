package drain

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	// hold: scheduling passes a Job's replacement sits out (the Job
	// controller's failure back-off before it creates the pod).
	hold         int
	ownerMissing bool // its controller is not in the input
	repl         *Replacement
}

// add puts a pod into the state and its indexes.
func (s *state) add(p *podState) {
	s.pods = append(s.pods, p)
	if ref := metav1.GetControllerOf(p.pod); ref != nil {
		s.byOwner[ref.UID] = append(s.byOwner[ref.UID], p)
	}
}

// ownedBy are the pods whose controller is ref (by UID; all pods when the
// reference has none, which the caller filters).
func (s *state) ownedBy(ref *metav1.OwnerReference) []*podState {
	if ref.UID == "" {
		return s.pods
	}
	return s.byOwner[ref.UID]
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
	cordoned map[string]bool
	budgets  []*budgetState
	created  int // replacements created, for unique names
	notes    []string
	// v is the run's take on what the snapshot cannot settle (variant).
	v variant
	// choiceMade: some replacement had more than one feasible node.
	choiceMade bool
	// seen records what the run met, so Predict skips variants that
	// cannot differ.
	seen    facts
	repls   []*Replacement
	raced   []*Replacement // replacements whose scheduling depends on eviction order
	broken  []string       // budgets --disable-eviction breaks
	sched   []*corev1.Node // the nodes as the scheduler sees them: cordoned ones unschedulable
	infos   *scheduling.InfoCache
	byOwner map[types.UID][]*podState // by controller UID
}

// Placement strategies of the runs.
const (
	pickLeastAllocated = iota
	pickFirst
	pickLast
)

// variant is one run's assumption about scoring and timing: which
// feasible node a replacement gets (pick), whether the replacements of one
// round reach the scheduler in reverse (kubectl evicts a node's pods in
// parallel), and how many scheduling passes a Job's replacement waits
// (DefaultJobPodFailureBackOff, 10 s: two of kubectl's 5 s retries).
type variant struct {
	pick    int
	reverse bool
	jobHold int
	// unreadyStays: pods whose readiness the snapshot cannot tell
	// (readyUnknown) never become Ready in this run.
	unreadyStays bool
	// differs says what a difference from the first run depends on.
	differs string
	// needs: the first run met what this variant changes.
	needs func(f facts) bool
}

// facts are what a run met that the variants change.
type facts struct {
	choice    bool // a replacement had several feasible nodes
	contested bool // replacements of one round competed for a node
	job       bool // a Job's pod was replaced
	assumed   bool // a pod of unknown readiness was made Ready
}

func newState(in Input, v variant, infos *scheduling.InfoCache) *state {
	s := &state{in: in, owners: disruption.NewOwners(in.Workloads), cordoned: map[string]bool{}, v: v, infos: infos}
	s.byOwner = map[types.UID][]*podState{}
	for _, p := range in.Pods {
		s.add(&podState{pod: p, key: p.Namespace + "/" + p.Name})
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
	live := byNamespace(s.livePods())
	for _, b := range disruption.Parse(in.PDBs) {
		s.budgets = append(s.budgets, s.initialBudget(b, live))
	}
	return s
}

// initialBudget takes the recorded status; a budget whose status was
// never written, or lags its generation, waits for the controller.
func (s *state) initialBudget(b *disruption.Budget, live map[string][]*corev1.Pod) *budgetState {
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
	s.checkRecorded(bs, live[b.PDB.Namespace])
	return bs
}

// checkRecorded compares the recorded status with what the controller
// would write for the snapshot; a difference means stale or partial input.
func (s *state) checkRecorded(bs *budgetState, pods []*corev1.Pod) {
	if bs.lag {
		return
	}
	c := disruption.Compute(bs.b, pods, s.owners, s.in.Now)
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

// byNamespace groups pods by namespace: a budget reads only its own.
func byNamespace(pods []*corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		out[p.Namespace] = append(out[p.Namespace], p)
	}
	return out
}

// recompute is one disruption controller sync of every budget.
func (s *state) recompute() {
	live := byNamespace(s.livePods())
	for _, bs := range s.budgets {
		if bs.b.Selector == nil {
			continue
		}
		c := disruption.Compute(bs.b, live[bs.b.PDB.Namespace], s.owners, s.in.Now)
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
