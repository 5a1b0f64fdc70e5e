// Package preemption predicts what kube-scheduler's DefaultPreemption
// PostFilter does for a pod that scheduling.Fits on no node: whether it may preempt,
// the node it nominates and the pods it deletes there, with the criterion
// that decided the node. It reimplements pkg/scheduler/framework/preemption
// and the Filter plugins whose answer changes when pods are removed; it
// never imports k8s.io/kubernetes (the test module compares it with the
// real scheduler).
package preemption

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// cluster is the scheduler's view with the preemption steps on it.
type cluster struct {
	*scheduling.Cluster
	// scored keeps each candidate's criteria: the random offsets give
	// thousands of overlapping candidate sets at scale.
	scored map[*Candidate]scored
}

// scored is a candidate with pickOneNodeForPreemption's criteria.
type scored struct {
	cd    *Candidate
	s     [5]int64
	known bool
}

// Input is everything the scheduler reads for one preemption attempt.
type Input struct {
	Nodes []*corev1.Node
	// Pods is every pod of the cluster: bound ones, and pending ones that
	// hold a nomination.
	Pods []*corev1.Pod
	PDBs []*policyv1.PodDisruptionBudget
	// Namespaces are needed only for namespaceSelectors in inter-pod
	// (anti-)affinity; nil means they were not read.
	Namespaces []*corev1.Namespace
	// Preemptor is the pending pod, its spec.Priority resolved (see
	// ResolvePriority for a manifest).
	Preemptor *corev1.Pod
	Rules     rules.SchedulerRules
	// Unmodelled names what the caller knows the prediction cannot see
	// (a non-default profile, extenders): the answer becomes uncertain.
	Unmodelled []string
}

// Victim is a pod the scheduler deletes.
type Victim struct {
	Pod      *corev1.Pod
	Priority int32
	// PDBs are the budgets selecting the pod; Violates says it counts as a
	// PDB violation (its budget had no disruption left).
	PDBs     []string
	Violates bool
}

// Candidate is a node where preemption makes room, with its victims in
// the scheduler's order (most important first).
type Candidate struct {
	Node          string
	Victims       []Victim
	PDBViolations int
}

// Outcome is one possible nomination and its probability.
type Outcome struct {
	Candidate
	Probability float64
}

// Separation explains why the winner beat the runner-up.
type Separation struct {
	RunnerUp  string
	Criterion string // one of the Criterion* names; "" for an exact tie
	Winner    string // the winner's value of that criterion
	Other     string // the runner-up's value
}

// The node-selection criteria of pickOneNodeForPreemption, in order.
const (
	CriterionPDBViolations   = "fewest PDB violations"
	CriterionHighestPriority = "lowest highest-victim priority"
	CriterionSumPriorities   = "lowest sum of victim priorities"
	CriterionFewestVictims   = "fewest victims"
	CriterionLatestStart     = "latest start of the highest-priority victims"
)

// Result is the prediction.
type Result struct {
	// FitsOn lists nodes where the pod scheduling.Fits without preemption: the
	// scheduler binds it and preempts nothing.
	FitsOn []string
	// Eligible is false when the pod may not preempt; Reason says why.
	Eligible bool
	Reason   string
	// Excluded gives, per node that is no candidate, the reason.
	Excluded map[string]string
	// PotentialNodes is how many nodes failed only resolvable filters;
	// Tried how many of them the scheduler dry-runs (all, or a sample from
	// a random offset).
	PotentialNodes, Tried int
	Candidates            []Candidate
	// Outcomes are the possible nominations, most likely first; empty when
	// preemption does not help.
	Outcomes   []Outcome
	Separation *Separation
	Certain    bool
	// Uncertain says why the answer is not certain.
	Uncertain []string
}

// Nominated is the most likely nominated node, "" when none.
func (r *Result) Nominated() string {
	if len(r.Outcomes) == 0 {
		return ""
	}
	return r.Outcomes[0].Node
}

// ErrNoNodes is returned for an empty node list.
var ErrNoNodes = errors.New("no nodes: the scheduler has nothing to preempt on")

// Predict runs one scheduling cycle's Filter and DefaultPreemption.
func Predict(in Input) (*Result, error) {
	if len(in.Nodes) == 0 {
		return nil, ErrNoNodes
	}
	sc, err := scheduling.NewCluster(scheduling.Input{Nodes: in.Nodes, Pods: in.Pods, Namespaces: in.Namespaces, Pod: in.Preemptor, Rules: in.Rules})
	if err != nil {
		return nil, err
	}
	c := &cluster{Cluster: sc, scored: map[*Candidate]scored{}}
	res := &Result{Excluded: map[string]string{}, Certain: true}
	c.Unmodelled = append(c.Unmodelled, in.Unmodelled...)
	c.Unmodelled = append(c.Unmodelled, scheduling.UnmodelledSpec(in.Preemptor)...)
	defer c.doubtUnmodelled(res)

	statuses := c.filterAll(res)
	if len(res.FitsOn) > 0 {
		res.Eligible = true
		res.Reason = "the pod scheduling.Fits without preemption"
		return res, nil
	}
	res.Eligible, res.Reason = c.eligible(in.Preemptor, statuses)
	if !res.Eligible {
		return res, nil
	}
	potential := c.potentialNodes(statuses, res)
	if len(potential) == 0 {
		res.Reason = "preemption is not helpful: no node fails only filters that removing pods can fix"
		return res, nil
	}
	cs := &candidates{c: c, pdbs: schedulerBudgets(in.PDBs), res: res, byNode: map[string]*Candidate{}}
	if num := numCandidates(int32(len(potential)), in.Rules); int(num) >= len(potential) {
		res.Tried = len(potential)
		res.Outcomes = c.pick(cs.of(potential), 1, res)
	} else {
		res.Tried = int(num)
		res.Outcomes = c.pickSampled(potential, int(num), cs, res)
	}
	for _, n := range potential {
		if cd := cs.byNode[n.Node.Name]; cd != nil {
			res.Candidates = append(res.Candidates, *cd)
		}
	}
	if len(res.Outcomes) == 0 {
		res.Reason = "preemption is not helpful: no node has room even with all lower-priority pods removed"
		return res, nil
	}
	if len(res.Outcomes) > 1 {
		res.Certain = false
	}
	res.Separation = separate(res.Outcomes[0].Candidate, res.Candidates)
	return res, nil
}

// doubtUnmodelled: anything the filters do not model makes the answer
// uncertain, said first.
func (c *cluster) doubtUnmodelled(res *Result) {
	if len(c.Unmodelled) > 0 {
		res.Certain = false
		res.Uncertain = append(c.Unmodelled, res.Uncertain...)
	}
}

// filterAll runs the filters on every node, noting where the pod fits.
func (c *cluster) filterAll(res *Result) []scheduling.Verdict {
	statuses := make([]scheduling.Verdict, len(c.Nodes))
	for i, n := range c.Nodes {
		statuses[i] = c.FilterWithNominated(n)
		if statuses[i].Code == scheduling.Fits {
			res.FitsOn = append(res.FitsOn, n.Node.Name)
		}
	}
	return statuses
}

// potentialNodes are nodesWherePreemptionMightHelp: those that failed
// only filters removing pods can fix; the others are excluded.
func (c *cluster) potentialNodes(statuses []scheduling.Verdict, res *Result) []*scheduling.NodeState {
	var potential []*scheduling.NodeState
	for i, n := range c.Nodes {
		if statuses[i].Code == scheduling.Unschedulable {
			potential = append(potential, n)
		} else {
			res.Excluded[n.Node.Name] = statuses[i].Reason
		}
	}
	res.PotentialNodes = len(potential)
	return potential
}

// candidates selects each node's victims once, however many candidate
// sets the node is in.
type candidates struct {
	c      *cluster
	pdbs   []*disruption.Budget
	res    *Result
	byNode map[string]*Candidate // nil where preemption cannot help
}

func (cs *candidates) get(n *scheduling.NodeState) *Candidate {
	if cd, ok := cs.byNode[n.Node.Name]; ok {
		return cd
	}
	cd, why := cs.c.selectVictims(n, cs.pdbs, cs.res)
	if cd == nil {
		cs.res.Excluded[n.Node.Name] = why
	}
	cs.byNode[n.Node.Name] = cd
	return cd
}

// of are the candidates of the nodes, in order.
func (cs *candidates) of(nodes []*scheduling.NodeState) []*Candidate {
	var out []*Candidate
	for _, n := range nodes {
		if cd := cs.get(n); cd != nil {
			out = append(out, cd)
		}
	}
	return out
}

// pickSampled is the scheduler's dry run of num of the potential nodes
// from a random offset: every offset equally likely, each giving its own
// candidate set (nodes without PDB violations first, then the others,
// until num).
func (c *cluster) pickSampled(potential []*scheduling.NodeState, num int, cs *candidates, res *Result) []Outcome {
	res.Certain = false
	res.Uncertain = append(res.Uncertain, fmt.Sprintf("the scheduler dry-runs %d of %d nodes from a random offset, in parallel: probabilities assume each offset equally likely and nodes checked in order", num, len(potential)))
	weights := map[string]*Outcome{}
	for off := range potential {
		var nv, v []*Candidate
		for i := range potential {
			cd := cs.get(potential[(off+i)%len(potential)])
			if cd == nil {
				continue
			}
			if cd.PDBViolations == 0 {
				if len(nv) < num {
					nv = append(nv, cd)
				}
			} else if len(v) < num {
				v = append(v, cd)
			}
			if len(nv) > 0 && len(nv)+len(v) >= num {
				break
			}
		}
		for _, o := range c.pick(append(nv, v...), 1/float64(len(potential)), res) {
			if w, ok := weights[o.Node]; ok {
				w.Probability += o.Probability
			} else {
				o := o
				weights[o.Node] = &o
			}
		}
	}
	var out []Outcome
	for _, o := range weights {
		out = append(out, *o)
	}
	sortOutcomes(out)
	return out
}

func numCandidates(nodes int32, r rules.SchedulerRules) int32 {
	n := nodes * r.MinCandidateNodesPercentage / 100
	n = max(n, r.MinCandidateNodesAbsolute)
	return min(n, nodes)
}

// eligible is PodEligibleToPreemptOthers.
func (c *cluster) eligible(pod *corev1.Pod, statuses []scheduling.Verdict) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		return false, "the pod's preemptionPolicy is Never"
	}
	nom := pod.Status.NominatedNodeName
	if nom == "" {
		return true, ""
	}
	n := c.ByName[nom]
	if n == nil {
		return true, ""
	}
	if statuses[slices.Index(c.Nodes, n)].Code == scheduling.Unresolvable {
		return true, ""
	}
	for _, p := range n.Pods {
		if p.Priority < c.Pre.Priority && c.terminatingByPreemption(p.Pod) {
			return false, fmt.Sprintf("pod %s/%s on the nominated node %s is still terminating after an earlier preemption", p.Pod.Namespace, p.Pod.Name, nom)
		}
	}
	return true, ""
}

func (c *cluster) terminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	if !c.Rules.TerminatingNeedsPreemptionCondition {
		return true
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.DisruptionTarget {
			return cond.Status == corev1.ConditionTrue && cond.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// schedulerBudgets are the budgets the scheduler reads: it skips one whose
// selector does not parse.
func schedulerBudgets(in []*policyv1.PodDisruptionBudget) []*disruption.Budget {
	var out []*disruption.Budget
	for _, b := range disruption.Parse(in) {
		if b.Selector != nil {
			out = append(out, b)
		}
	}
	return out
}

// moreImportant is MoreImportantVictim for single pods: higher priority,
// then earlier start (a pod without a start time starts "now").
func moreImportant(a, b *scheduling.PodInfo) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	ta, oka := a.StartTime()
	tb, okb := b.StartTime()
	switch {
	case oka && okb:
		return ta.Before(tb)
	case oka:
		return true
	}
	return false
}

func sameRank(a, b *scheduling.PodInfo) bool { return !moreImportant(a, b) && !moreImportant(b, a) }

// selectVictims is SelectVictimsOnNode; nil and the reason when the node
// is no candidate.
func (c *cluster) selectVictims(n *scheduling.NodeState, pdbs []*disruption.Budget, res *Result) (*Candidate, string) {
	var potential []*scheduling.PodInfo
	for _, p := range n.Pods {
		if p.Priority < c.Pre.Priority {
			potential = append(potential, p)
		}
	}
	if len(potential) == 0 {
		return nil, "no pods of lower priority to preempt"
	}
	victims, violations, why := c.reprieve(n, potential, pdbs)
	if victims == nil {
		return nil, why
	}
	// Pods of equal rank are ordered by sort.Slice on the cache's order,
	// which this plugin cannot know: when another order spares other pods,
	// say so.
	if hasTies(potential) {
		rev := slices.Clone(potential)
		slices.Reverse(rev)
		alt, _, _ := c.reprieve(n, rev, pdbs)
		if !sameVictims(victims, alt) {
			res.Uncertain = append(res.Uncertain, fmt.Sprintf("on node %s pods of equal priority and start time compete to be spared: which ones the scheduler deletes depends on its cache order", n.Node.Name))
			res.Certain = false
		}
	}
	cd := &Candidate{Node: n.Node.Name, PDBViolations: len(violations)}
	for _, v := range victims {
		vic := c.victim(v, pdbs)
		vic.Violates = violations[v]
		cd.Victims = append(cd.Victims, vic)
	}
	return cd, ""
}

func hasTies(ps []*scheduling.PodInfo) bool {
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			if sameRank(ps[i], ps[j]) {
				return true
			}
		}
	}
	return false
}

func sameVictims(a, b []*scheduling.PodInfo) bool {
	if len(a) != len(b) {
		return false
	}
	set := map[*scheduling.PodInfo]bool{}
	for _, p := range a {
		set[p] = true
	}
	for _, p := range b {
		if !set[p] {
			return false
		}
	}
	return true
}

func (c *cluster) victim(p *scheduling.PodInfo, pdbs []*disruption.Budget) Victim {
	v := Victim{Pod: p.Pod, Priority: p.Priority}
	for _, b := range pdbs {
		if b.SchedulerSelects(p.Pod) {
			v.PDBs = append(v.PDBs, b.PDB.Name)
		}
	}
	return v
}

// reprieve removes every potential victim, checks the pod scheduling.Fits, then adds
// them back one by one (PDB-violating first, most important first) while
// it still scheduling.Fits. It leaves the node as it found it.
func (c *cluster) reprieve(n *scheduling.NodeState, potential []*scheduling.PodInfo, pdbs []*disruption.Budget) ([]*scheduling.PodInfo, map[*scheduling.PodInfo]bool, string) {
	for _, p := range potential {
		c.Move(p, n, -1)
	}
	if v := c.FilterWithNominated(n); v.Code != scheduling.Fits {
		for _, p := range potential {
			c.Move(p, n, 1)
		}
		return nil, nil, "does not fit even with all lower-priority pods removed: " + v.Reason
	}
	sorted := slices.Clone(potential)
	sort.SliceStable(sorted, func(i, j int) bool { return moreImportant(sorted[i], sorted[j]) })
	violating, nonViolating := splitByPDB(sorted, pdbs)
	var victims []*scheduling.PodInfo
	violations := map[*scheduling.PodInfo]bool{}
	try := func(p *scheduling.PodInfo) bool {
		c.Move(p, n, 1)
		if c.FilterWithNominated(n).Code == scheduling.Fits {
			return true
		}
		c.Move(p, n, -1)
		victims = append(victims, p)
		return false
	}
	for _, p := range violating {
		if !try(p) {
			violations[p] = true
		}
	}
	for _, p := range nonViolating {
		try(p)
	}
	for _, p := range victims {
		c.Move(p, n, 1)
	}
	if c.Rules.VictimsSortedAfterReprieve && len(violating) > 0 && len(nonViolating) > 0 {
		sort.SliceStable(victims, func(i, j int) bool { return moreImportant(victims[i], victims[j]) })
	}
	if len(victims) == 0 {
		return nil, nil, "scheduling.Fits after reprieving every pod (the scheduler reports an error)"
	}
	return victims, violations, ""
}

// splitByPDB is FilterVictimsWithPDBViolation: budgets are spent in the
// victims' order; a pod violates at the first budget that goes negative.
func splitByPDB(sorted []*scheduling.PodInfo, pdbs []*disruption.Budget) (violating, nonViolating []*scheduling.PodInfo) {
	allowed := make([]int32, len(pdbs))
	for i, b := range pdbs {
		allowed[i] = b.PDB.Status.DisruptionsAllowed
	}
	for _, p := range sorted {
		violates := false
		if len(p.Pod.Labels) > 0 {
			for i, b := range pdbs {
				if !b.SchedulerSelects(p.Pod) {
					continue
				}
				if _, ok := b.PDB.Status.DisruptedPods[p.Pod.Name]; ok {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violates = true
					break
				}
			}
		}
		if violates {
			violating = append(violating, p)
		} else {
			nonViolating = append(nonViolating, p)
		}
	}
	return violating, nonViolating
}

// scores are pickOneNodeForPreemption's criteria, higher is better; ok is
// false for the start-time score when it reads the clock.
func scores(cd *Candidate) ([5]int64, bool) {
	var s [5]int64
	s[0] = -int64(cd.PDBViolations)
	s[1] = -int64(cd.Victims[0].Priority)
	var sum int64
	for _, v := range cd.Victims {
		sum += int64(v.Priority) + int64(math.MaxInt32+1)
	}
	s[2] = -sum
	s[3] = -int64(len(cd.Victims))
	maxPrio := cd.Victims[0].Priority
	var earliest *metav1.Time
	known := true
	for _, v := range cd.Victims {
		if v.Priority > maxPrio {
			maxPrio, earliest = v.Priority, nil
		}
		if v.Priority != maxPrio {
			continue
		}
		if v.Pod.Status.StartTime == nil {
			known = false
			continue
		}
		if earliest == nil || v.Pod.Status.StartTime.Before(earliest) {
			earliest = v.Pod.Status.StartTime
		}
	}
	if earliest != nil {
		s[4] = earliest.UnixNano()
	} else {
		s[4] = math.MaxInt64 // "now"
	}
	return s, known
}

var criteria = [5]string{CriterionPDBViolations, CriterionHighestPriority, CriterionSumPriorities, CriterionFewestVictims, CriterionLatestStart}

// pick is pickOneNodeForPreemption over these candidates; weight is the
// probability of this candidate set. The scheduler breaks an exact tie by
// Go map order: each tied node gets an equal share.
func (c *cluster) pick(cands []*Candidate, weight float64, res *Result) []Outcome {
	if len(cands) == 0 {
		return nil
	}
	if len(cands) == 1 {
		return []Outcome{{Candidate: *cands[0], Probability: weight}}
	}
	left := make([]scored, len(cands))
	for i, cd := range cands {
		sc, ok := c.scored[cd]
		if !ok { // each candidate's scores once, not once per set and criterion
			sc.cd = cd
			sc.s, sc.known = scores(cd)
			c.scored[cd] = sc
		}
		left[i] = sc
	}
	for k := range criteria {
		best := int64(math.MinInt64)
		sel := left[:0] // filtered in place: it never passes the element read
		for _, sc := range left {
			if k == 4 && !sc.known {
				res.Certain = false
				res.Uncertain = appendOnce(res.Uncertain, "victims without a start time count as starting now: the last criterion compares clock readings")
			}
			if sc.s[k] > best {
				best, sel = sc.s[k], sel[:0]
			}
			if sc.s[k] == best {
				sel = append(sel, sc)
			}
		}
		left = sel
		if len(left) == 1 {
			break
		}
	}
	out := make([]Outcome, 0, len(left))
	for _, sc := range left {
		out = append(out, Outcome{Candidate: *sc.cd, Probability: weight / float64(len(left))})
	}
	if len(left) > 1 {
		res.Uncertain = appendOnce(res.Uncertain, "candidate nodes tie on every criterion: the scheduler takes the first in Go map order")
	}
	return out
}

func appendOnce(s []string, msg string) []string {
	if slices.Contains(s, msg) {
		return s
	}
	return append(s, msg)
}

func sortOutcomes(o []Outcome) {
	slices.SortStableFunc(o, func(a, b Outcome) int {
		return cmp.Or(cmp.Compare(b.Probability, a.Probability), cmp.Compare(a.Node, b.Node))
	})
}

// separate finds the best other candidate and the first criterion that
// tells it from the winner.
func separate(winner Candidate, all []Candidate) *Separation {
	ws, _ := scores(&winner)
	var runner *Candidate
	var rs [5]int64
	for i := range all {
		cd := &all[i]
		if cd.Node == winner.Node {
			continue
		}
		s, _ := scores(cd)
		if runner == nil || slices.Compare(s[:], rs[:]) > 0 {
			runner, rs = cd, s
		}
	}
	if runner == nil {
		return nil
	}
	sep := &Separation{RunnerUp: runner.Node}
	for k := range criteria {
		if ws[k] != rs[k] {
			sep.Criterion = criteria[k]
			sep.Winner, sep.Other = criterionValue(k, &winner, ws[k]), criterionValue(k, runner, rs[k])
			break
		}
	}
	return sep
}

func criterionValue(k int, cd *Candidate, s int64) string {
	switch k {
	case 4:
		if s == math.MaxInt64 {
			return "now (no start time)"
		}
		for _, v := range cd.Victims {
			if st := v.Pod.Status.StartTime; st != nil && st.UnixNano() == s {
				return st.UTC().Format("2006-01-02T15:04:05Z")
			}
		}
		return fmt.Sprint(s)
	case 2:
		var sum int64
		for _, v := range cd.Victims {
			sum += int64(v.Priority)
		}
		return fmt.Sprint(sum)
	default:
		return fmt.Sprint(-s)
	}
}
