package drain

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// podState is one pod as the simulation moves it.
type podState struct {
	pod   *corev1.Pod // a copy the simulation may change
	key   string
	index int // in state.pods
	gone  bool
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
	// scored: the scheduler's scores chose its node among several
	// feasible ones (a race in its round may change them: checkRace).
	scored bool
}

// add puts a pod into the state and its indexes.
func (s *state) add(p *podState) {
	p.index = len(s.pods)
	s.pods = append(s.pods, p)
	if ref := metav1.GetControllerOfNoCopy(p.pod); ref != nil {
		s.byOwner[ref.UID] = append(s.byOwner[ref.UID], p)
	}
	for _, bs := range s.budgets {
		if bs.b.EvictionSelects(p.pod) {
			bs.members, bs.synced = append(bs.members, p), false
		}
	}
}

// touch: p changed (or went); the budgets that select it are stale.
func (s *state) touch(p *podState) {
	for _, bs := range s.budgets {
		if bs.synced && bs.b.EvictionSelects(p.pod) {
			bs.synced = false
		}
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
	b *disruption.Budget
	// members are the pods it selects (EvictionSelects), gone ones too,
	// in the state's order; labels never change in a drain.
	members []*podState
	status  disruption.Status
	lag     bool // observedGeneration < generation: 429 until a sync
	// synced: status is what the controller computes for the members as
	// they are; a change to one of them (touch) or an eviction clears it.
	synced  bool
	unknown string
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
	// script orders the rounds past which the enumeration branched; rounds
	// counts the rounds of several replacements, passes the scheduling
	// passes (branches.go).
	script   script
	frontier int
	rounds   int
	passes   int
	// choiceMade: some replacement had more than one feasible node.
	choiceMade bool
	// seen records what the run met, so Predict skips variants that
	// cannot differ.
	seen   facts
	repls  []*Replacement
	raced  []*Replacement // replacements whose scheduling depends on eviction order
	broken []string       // budgets --disable-eviction breaks
	sched  []*corev1.Node // the nodes as the scheduler sees them: cordoned ones unschedulable
	// view is the scheduler's cache of the live pods, built with the
	// start and kept current by setPod, forget and remember (rebuilt at
	// the next placement if an Add failed).
	view    *scheduling.View
	viewErr error
	byOwner map[types.UID][]*podState // by controller UID
}

// Placement strategies of the runs.
const (
	pickLeastAllocated = iota
	pickFirst
	pickLast
)

// variant is one run's assumption about scoring and timing: which
// feasible node a replacement gets (pick), and how many scheduling passes
// a Job's replacement waits (DefaultJobPodFailureBackOff, 10 s: two of
// kubectl's 5 s retries). The order of a round's replacements is
// enumerated instead (branches.go).
type variant struct {
	pick    int
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
	choice  bool    // a replacement had several feasible nodes
	job     bool    // a Job's pod was replaced
	assumed bool    // a pod of unknown readiness was made Ready
	races   []point // rounds whose order mattered, past the frontier
}

// newState is the cluster once kubectl has cordoned every named node,
// before any eviction: the start of every run (clone).
func newState(in Input) *state {
	s := &state{in: in, owners: disruption.NewOwners(in.Workloads), cordoned: map[string]bool{}}
	s.byOwner = map[types.UID][]*podState{}
	for _, p := range in.Pods {
		s.add(&podState{pod: p, key: p.Namespace + "/" + p.Name})
	}
	for _, p := range s.pods {
		s.markStarting(p)
		if ref := metav1.GetControllerOfNoCopy(p.pod); ref != nil && s.owners.Get(p.pod.Namespace, ref) == nil {
			p.ownerMissing = ref.Kind != "DaemonSet" || in.OwnersRead["DaemonSet"]
		}
	}
	for _, n := range in.Drain {
		s.cordoned[n] = true // kubectl cordons every named node first
	}
	for _, bs := range s.selectMembers(disruption.Parse(in.PDBs)) {
		s.initialBudget(bs)
		s.budgets = append(s.budgets, bs)
	}
	s.buildView()
	return s
}

// labelGroup is the pods of one namespace that share one label map.
type labelGroup struct {
	ns string
	m  unsafe.Pointer
}

// selectMembers gives each budget the pods it selects, in the state's
// order. The readers give the pods of one workload one label map, so
// each distinct map is matched once, not every pod.
func (s *state) selectMembers(budgets []*disruption.Budget) []*budgetState {
	groups := map[labelGroup][]*podState{}
	var order []labelGroup
	for _, p := range s.pods {
		g := labelGroup{ns: p.pod.Namespace, m: reflect.ValueOf(p.pod.Labels).UnsafePointer()}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], p)
	}
	out := make([]*budgetState, 0, len(budgets))
	for _, b := range budgets {
		bs := &budgetState{b: b}
		for _, g := range order {
			if members := groups[g]; b.EvictionSelects(members[0].pod) {
				bs.members = append(bs.members, members...)
			}
		}
		slices.SortFunc(bs.members, func(x, y *podState) int { return x.index - y.index })
		out = append(out, bs)
	}
	return out
}

// clone is one run's own copy of the start, under variant v. The runs
// share what never changes: the input, the owners, the nodes and what
// placement read of each pod (the view's pod infos).
func (s *state) clone(v variant) *state {
	c := &state{in: s.in, owners: s.owners, cordoned: s.cordoned, notes: slices.Clone(s.notes), v: v, sched: s.sched, frontier: -1}
	backing := make([]podState, len(s.pods))
	c.pods = make([]*podState, len(s.pods))
	for i, p := range s.pods {
		backing[i] = *p
		c.pods[i] = &backing[i]
	}
	c.byOwner = make(map[types.UID][]*podState, len(s.byOwner))
	for uid, list := range s.byOwner {
		c.byOwner[uid] = c.same(list)
	}
	for _, bs := range s.budgets {
		cp := *bs
		cp.status.DisruptedPods = copyTimes(bs.status.DisruptedPods)
		cp.members = c.same(bs.members)
		c.budgets = append(c.budgets, &cp)
	}
	if s.view != nil {
		c.view = s.view.Clone()
	}
	c.viewErr = s.viewErr
	return c
}

// same are c's pods in the places of list's, list being of the state c
// was cloned from.
func (c *state) same(list []*podState) []*podState {
	out := make([]*podState, len(list))
	for i, p := range list {
		out[i] = c.pods[p.index]
	}
	return out
}

// initialBudget takes the recorded status; a budget whose status was
// never written, or lags its generation, waits for the controller.
func (s *state) initialBudget(bs *budgetState) {
	b := bs.b
	st := b.PDB.Status
	bs.status = disruption.Status{ExpectedPods: st.ExpectedPods, DesiredHealthy: st.DesiredHealthy, CurrentHealthy: st.CurrentHealthy,
		DisruptionsAllowed: st.DisruptionsAllowed, DisruptedPods: copyTimes(st.DisruptedPods)}
	if b.Selector == nil {
		return
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
}

// checkRecorded compares the recorded status with what the controller
// would write for the snapshot; a difference means stale or partial input.
func (s *state) checkRecorded(bs *budgetState) {
	if bs.lag {
		return
	}
	c := bs.compute(s)
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
	for _, bs := range s.budgets {
		if bs.b.Selector == nil {
			continue
		}
		if bs.synced {
			continue // none of its pods changed since
		}
		c := bs.compute(s)
		bs.status, bs.lag, bs.synced = c, false, true
		if c.Unknown != "" {
			bs.unknown = c.Unknown
		}
	}
}

// compute is the status the controller would write now.
func (bs *budgetState) compute(s *state) disruption.Status {
	live := make([]*corev1.Pod, 0, len(bs.members))
	for _, p := range bs.members {
		if !p.gone {
			live = append(live, p.pod)
		}
	}
	return disruption.ComputeSelected(bs.b, live, s.owners, s.in.Now)
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
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || disruption.Finished(pod) || disruption.IsReady(pod) {
		return
	}
	p.willReady, p.readyUnknown = s.readiness(p, ref)
}

// buildView is the scheduler's cache of the live pods as they are now.
func (s *state) buildView() {
	s.view, s.viewErr = scheduling.NewView(s.schedNodes(), s.livePods(), s.in.Namespaces, s.in.Scheduler)
}

// placement runs the scheduler's filters for pod over the live pods.
func (s *state) placement(pod *corev1.Pod) (scheduling.Placement, scheduling.Choice, error) {
	if s.view == nil && s.viewErr == nil { // remember met an error
		s.buildView()
	}
	if s.viewErr != nil {
		return scheduling.Placement{}, scheduling.Choice{}, s.viewErr
	}
	var owner *metav1.LabelSelector
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		owner = s.owners.Selector(pod.Namespace, ref)
	}
	return s.view.Choose(pod, scheduling.ScoreInput{OwnerSelector: owner})
}

// setPod replaces p's object (terminating, bound, Ready) in the state and
// in the scheduler's view.
func (s *state) setPod(p *podState, pod *corev1.Pod) {
	s.forget(p.pod)
	p.pod = pod
	s.remember(pod)
	s.touch(p)
}

// forget takes a pod object out of the scheduler's view (gone, or
// about to change).
func (s *state) forget(pod *corev1.Pod) {
	if s.view != nil {
		s.view.Remove(pod)
	}
}

// remember puts a pod object into the scheduler's view.
func (s *state) remember(pod *corev1.Pod) {
	if s.view != nil && s.view.Add(pod) != nil {
		s.view, s.viewErr = nil, nil // rebuilt, and the error met, at the next placement
	}
}
