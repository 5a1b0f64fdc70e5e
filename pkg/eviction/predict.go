package eviction

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// Input is one node's snapshot.
type Input struct {
	Node    *v1.Node
	Pods    []*v1.Pod // the pods bound to the node
	Summary *statsapi.Summary
	Config  Config
	Rules   rules.RuleSet
	Now     time.Time
	// Assume replaces observed values (available) of signals: the what-if.
	Assume map[Signal]string
	// MaxSummaryAge: an older summary makes the answer uncertain (0: 2m).
	MaxSummaryAge time.Duration
	// Layout overrides the filesystem layout read from the summary.
	Layout *Layout
	// NoPodStats: the summary was made up from other sources (nodes/proxy
	// forbidden) and has no pods; the caller lists what it assumed.
	NoPodStats bool
}

// MismatchError is a summary that cannot be this node's.
type MismatchError struct{ Msg string }

func (e *MismatchError) Error() string { return e.Msg }

// ThresholdStatus is one threshold against its signal's observation.
type ThresholdStatus struct {
	Kind string `json:"kind"` // hard | soft
	// Value as configured ("10%", "100Mi") and resolved against capacity.
	Value       string `json:"value"`
	Quantity    int64  `json:"quantity"`
	GracePeriod string `json:"gracePeriod,omitempty"`
	MinReclaim  string `json:"minReclaim,omitempty"`
	// Target is quantity + minimum reclaim: eviction goes on until the
	// signal is back at or above it.
	Target int64 `json:"target"`
	Met    bool  `json:"met"`
	// Derived: copied by the kubelet from another signal's threshold
	// ("allocatable" from memory.available, "nodefs.available", ...).
	Derived string `json:"derivedFrom,omitempty"`
}

// SignalStatus is one signal: observed, thresholds, pressure.
type SignalStatus struct {
	Signal     string            `json:"signal"`
	Unit       string            `json:"unit"`
	Observed   bool              `json:"observed"`
	Available  int64             `json:"available"`
	Capacity   int64             `json:"capacity"`
	Assumed    bool              `json:"assumed,omitempty"`
	Condition  string            `json:"condition"`
	Pressure   bool              `json:"underPressure"`
	Thresholds []ThresholdStatus `json:"thresholds"`
}

// Candidate is one active pod in eviction order.
type Candidate struct {
	Pod      string `json:"pod"` // namespace/name
	UID      string `json:"uid"`
	QOSClass string `json:"qosClass"`
	Priority int32  `json:"priority"`
	// Usage and Request are what the ranking compares (bytes, inodes or
	// processes); InStats is false when the summary has no figures for it.
	Usage   int64 `json:"usage"`
	Request int64 `json:"request"`
	InStats bool  `json:"inSummary"`
	// Position is 1-based in the ranking; TieGroup numbers exact ties.
	Position int  `json:"position"`
	TieGroup *int `json:"tieGroup,omitempty"`
	// Step is the sync (1-based) whose single eviction kills it; 0 when it
	// survives. EvictProbability and Certain say how sure that is.
	Step int `json:"step"`
	// PossibleSteps lists the syncs that may evict it when chance decides
	// (empty when determined).
	PossibleSteps    []int   `json:"possibleSteps,omitempty"`
	EvictProbability float64 `json:"evictProbability"`
	Certain          bool    `json:"certain"`
	// GracePeriodSeconds is what the kubelet gives it if evicted.
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	// GraceAlternatives lists every grace period it may get when map
	// order decides between a hard and a soft threshold.
	GraceAlternatives []int64   `json:"gracePeriodAlternatives,omitempty"`
	DecidedBy         *Decision `json:"decidedBy,omitempty"`
	// Exempt says why the kubelet never evicts it ("" when it may).
	Exempt string `json:"exempt,omitempty"`
}

// LocalStorage is a pod evicted whatever the pressure.
type LocalStorage struct {
	Pod                string `json:"pod"`
	Reason             string `json:"reason"`
	GracePeriodSeconds int64  `json:"gracePeriodSeconds"`
	Evicted            bool   `json:"evicted"` // false: critical, kept
}

// Exempt is a pod the kubelet never evicts.
type Exempt struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

// Result is the eviction preview of one node.
type Result struct {
	Node       string         `json:"node"`
	DiskLayout string         `json:"diskLayout"`
	Signals    []SignalStatus `json:"signals"`
	// Signal is the one whose ranking orders Order; Ranking names it.
	Signal        string `json:"signal"`
	Ranking       string `json:"ranking"`
	UnderPressure bool   `json:"underPressure"`
	// Order is every active pod in the kubelet's order for Signal.
	Order   []Candidate `json:"order"`
	Victims []string    `json:"victims"` // the Cut pods most likely evicted, in eviction order
	// Cut is how many pods are evicted before every threshold is resolved
	// (the expected number, rounded, where chance decides).
	Cut          int            `json:"cut"`
	Never        []Exempt       `json:"neverEvicted"`
	LocalStorage []LocalStorage `json:"localStorage"`
	// Assumed lists the figures that were not observed.
	Assumed []string `json:"assumed,omitempty"`
	Certain bool     `json:"certain"`
	// Uncertain says why not every fate is determined.
	Uncertain []string `json:"uncertain,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// KubeletReads say how the summary and configz were read (node/NAME
	// sets them; the model does not read them).
	KubeletReads []snapshot.KubeletRead `json:"kubeletReads,omitempty"`
}

// Predict runs the eviction manager's loop on the snapshot: one eviction
// per sync until no threshold is met or still short of its minimum reclaim.
func Predict(in Input) (*Result, error) {
	res, err := newResult(in)
	if err != nil {
		return nil, err
	}
	k := in.Rules.Kubelet
	layout, noRanking := diskLayout(in, res)
	obs := observe(in.Summary)
	if err := applyAssume(obs, in); err != nil {
		return nil, err
	}
	checkSummaryAge(in, obs, res)
	noteAssumed(in, res)
	ths := WithContainerFs(in.Config.Thresholds, layout)
	pods := activePods(in, obs, res)

	sim := newSimulation(in, k, layout, ths, obs, pods)
	sim.noRanking = noRanking
	sim.run()
	res.Signals = signalTable(ths, obs, res)
	sim.fill(res)
	sim.doubts(res)
	for _, c := range res.Order {
		if !c.Certain {
			res.Certain = false
			break
		}
	}
	return res, nil
}

// newResult checks that the summary is the node's and starts the result.
func newResult(in Input) (*Result, error) {
	if in.Node == nil || in.Summary == nil {
		return nil, errors.New("eviction preview needs the Node and its kubelet's stats summary")
	}
	s := in.Summary
	if s.Node.NodeName != "" && s.Node.NodeName != in.Node.Name {
		return nil, &MismatchError{fmt.Sprintf("the stats summary is node %q's, not %q's", s.Node.NodeName, in.Node.Name)}
	}
	res := &Result{Node: in.Node.Name, Certain: true, Signals: []SignalStatus{}, Order: []Candidate{}, Victims: []string{}, Never: []Exempt{}, LocalStorage: []LocalStorage{}}
	if s.Node.NodeName == "" {
		res.doubt("the stats summary names no node: it may not be %s's", in.Node.Name)
	}
	return res, nil
}

// doubt makes the answer uncertain, saying why.
func (res *Result) doubt(format string, a ...any) {
	res.Certain = false
	res.Uncertain = append(res.Uncertain, fmt.Sprintf(format, a...))
}

// diskLayout is the filesystems as the kubelet sees them; noRanking: this
// kubelet's eviction manager has no ranking functions.
func diskLayout(in Input, res *Result) (layout Layout, noRanking bool) {
	layout = InferLayout(in.Summary)
	if in.Layout != nil {
		layout = *in.Layout
	}
	res.DiskLayout = layout.String()
	noRanking = layout.Split && !in.Rules.Kubelet.SplitContainerFs
	if noRanking {
		res.Notes = append(res.Notes, "the runtime has a separate container filesystem and KubeletSeparateDiskGC is off: this kubelet's eviction manager fails its first sync and is left without ranking functions, so it evicts only pods over their local-storage limits")
		layout.Split = false
	}
	return layout, noRanking
}

// checkSummaryAge doubts a summary older than MaxSummaryAge at --now.
func checkSummaryAge(in Input, obs map[Signal]observation, res *Result) {
	maxAge := in.MaxSummaryAge
	if maxAge == 0 {
		maxAge = 2 * time.Minute
	}
	for _, sig := range AllSignals {
		o, ok := obs[sig]
		if ok && !o.Assumed && !o.Time.IsZero() && !in.Now.IsZero() && in.Now.Sub(o.Time) > maxAge {
			res.doubt("the summary's %s figures are from %s, %s before --now: the node may have changed since", sig, o.Time.UTC().Format(time.RFC3339), in.Now.Sub(o.Time).Round(time.Second))
			return
		}
	}
}

// noteAssumed lists the figures that were not observed.
func noteAssumed(in Input, res *Result) {
	if in.Config.Assumed {
		res.Assumed = append(res.Assumed, "thresholds: the kubelet's defaults for 1."+fmt.Sprint(in.Rules.Minor)+" (its configz was not read)")
	}
	for _, sig := range slices.Sorted(maps.Keys(in.Assume)) {
		res.Assumed = append(res.Assumed, fmt.Sprintf("%s=%s (--assume)", sig, in.Assume[sig]))
	}
}

// activePods are the pods the kubelet's GetActivePods returns: not
// finished, not being deleted. It doubts a summary that lacks pods that
// have run long enough to be in it, or that has pods the list lacks.
func activePods(in Input, obs map[Signal]observation, res *Result) []*podInfo {
	byUID := map[string]*statsapi.PodStats{}
	for i := range in.Summary.Pods {
		byUID[in.Summary.Pods[i].PodRef.UID] = &in.Summary.Pods[i]
	}
	var pods []*podInfo
	var missing, unstarted []string
	seen := map[string]bool{}
	for _, p := range in.Pods {
		if p.Spec.NodeName != "" && p.Spec.NodeName != in.Node.Name ||
			p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		uid := string(p.UID)
		if m, ok := p.Annotations[configMirrorAnnotation]; ok && m != "" {
			uid = m // the kubelet's static pod, whose mirror this is
		}
		st := byUID[uid]
		seen[uid] = true
		switch {
		case st != nil:
		case notYetInSummary(p, summaryTime(obs)):
			unstarted = append(unstarted, p.Namespace+"/"+p.Name)
		default:
			missing = append(missing, p.Namespace+"/"+p.Name)
		}
		pods = append(pods, newPodInfo(p, st, in.Rules.Kubelet))
	}
	notePodStats(in, res, missing, unstarted, unlisted(in.Summary, seen))
	if len(pods) == 0 {
		res.Notes = append(res.Notes, "the node has no active pods: nothing to evict")
	}
	for _, pi := range pods {
		if pi.Critical != "" {
			res.Never = append(res.Never, Exempt{Pod: pi.Name, Reason: pi.Critical})
		}
	}
	return pods
}

// unlisted are the summary's pods that the pod list lacks.
func unlisted(s *statsapi.Summary, seen map[string]bool) []string {
	var extra []string
	for _, ps := range s.Pods {
		if !seen[ps.PodRef.UID] {
			extra = append(extra, ps.PodRef.Namespace+"/"+ps.PodRef.Name)
		}
	}
	return extra
}

// notePodStats says what the summary and the pod list disagree on.
func notePodStats(in Input, res *Result, missing, unstarted, extra []string) {
	if len(missing) > 0 && !in.NoPodStats {
		res.doubt("%d running pod(s) are missing from the summary (%s): the kubelet ranks such pods first, but the summary is more likely stale or another node's", len(missing), strings.Join(firstN(missing, 3), ", "))
	}
	if len(unstarted) > 0 && !in.NoPodStats {
		res.Notes = append(res.Notes, fmt.Sprintf("%d pod(s) had no container running long enough to be in the summary (%s): the kubelet has no stats for them either and ranks them first", len(unstarted), strings.Join(firstN(unstarted, 3), ", ")))
	}
	if len(extra) > 0 {
		res.doubt("the summary has %d pod(s) not in the pod list (%s): the pod list or the summary is out of date", len(extra), strings.Join(firstN(extra, 3), ", "))
	}
}

// signalTable is every signal with a threshold or an observation, before
// any eviction, and sets UnderPressure.
func signalTable(ths []Threshold, obs map[Signal]observation, res *Result) []SignalStatus {
	out := []SignalStatus{}
	for _, sig := range AllSignals {
		o, ok := obs[sig]
		st := SignalStatus{Signal: string(sig), Unit: sig.Unit(), Observed: ok, Available: o.Available, Capacity: o.Capacity, Assumed: o.Assumed, Condition: sig.Condition(), Thresholds: []ThresholdStatus{}}
		for _, t := range ths {
			if t.Signal == sig {
				ts := thresholdStatus(t, o, ok)
				st.Pressure = st.Pressure || ts.Met
				st.Thresholds = append(st.Thresholds, ts)
			}
		}
		if !ok && len(st.Thresholds) == 0 {
			continue
		}
		out = append(out, st)
		res.UnderPressure = res.UnderPressure || st.Pressure
	}
	return out
}

// thresholdStatus is one threshold against its signal's observation.
func thresholdStatus(t Threshold, o observation, observed bool) ThresholdStatus {
	ts := ThresholdStatus{Kind: "hard", Value: t.Value.Text, Derived: t.Derived}
	if !t.Hard() {
		ts.Kind, ts.GracePeriod = "soft", t.GracePeriod.String()
	}
	if t.MinReclaim != nil {
		ts.MinReclaim = t.MinReclaim.Text
	}
	if observed {
		q := t.Value.resolve(o.Capacity)
		ts.Quantity = q.Value()
		if t.MinReclaim != nil {
			q.Add(t.MinReclaim.resolve(o.Capacity))
		}
		ts.Target = q.Value()
		ts.Met = met(t, o, false)
	}
	return ts
}

// doubts says what the simulation could not settle.
func (s *simulation) doubts(res *Result) {
	if s.signalRace != "" {
		res.doubt("%s", s.signalRace)
	}
	if s.diskGraceRace {
		res.doubt("disk thresholds with different grace periods that rank pods alike are met together: which one the kubelet acts on (and so the grace period) is left to map order and to when each grace period ends")
	}
	if s.softGraceOrder {
		res.doubt("soft thresholds with different grace periods are met together: the kubelet acts only on those met for their whole grace period, and the order is taken here as if every grace period were served; when the pressure began (which the snapshot does not show) can change which signal is acted on first")
	}
	if s.graceRace {
		res.doubt("hard and soft memory thresholds are both met: which one the kubelet acts on (and so the grace period) is left to map order")
	}
	if s.truncated {
		res.doubt("too many ways the ties can fall: the probabilities are from the %d likeliest", maxStates)
	}
	if s.reclaimSettles {
		res.Notes = append(res.Notes, "a disk threshold is held only by its minimum reclaim: this kubelet takes its garbage collection to have reclaimed enough and evicts no more pods for it (1.22 on checks the minimum reclaim too)")
	}
	if s.diskReclaim {
		res.doubt("a disk signal is met: the kubelet first deletes unused containers and images, which the summary does not show; it may free enough to evict nobody, and what an evicted pod frees on disk depends on that garbage collection too")
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// applyAssume replaces observed values: "200Mi", "5%" of capacity.
func applyAssume(obs map[Signal]observation, in Input) error {
	for sig, val := range in.Assume {
		if !sig.Valid(in.Rules.Kubelet) {
			return fmt.Errorf("--assume: unknown signal %q for Kubernetes 1.%d (known: %s)", sig, in.Rules.Minor, knownSignals(in.Rules.Kubelet))
		}
		o, ok := obs[sig]
		if !ok && sig == MemoryAvailable && in.Node != nil {
			if c, has := in.Node.Status.Capacity[v1.ResourceMemory]; has {
				o, ok = observation{Capacity: c.Value()}, true
			}
		}
		if !ok {
			return fmt.Errorf("--assume %s: the summary has no %s figures to take its capacity from", sig, sig)
		}
		var v int64
		if strings.HasSuffix(val, "%") {
			p, err := parsePercentage(val)
			if err != nil || p < 0 || p > 1 {
				return fmt.Errorf("--assume %s=%s: want a quantity or a percentage between 0%% and 100%%", sig, val)
			}
			v = int64(float64(o.Capacity) * float64(p))
		} else {
			q, err := resource.ParseQuantity(val)
			if err != nil || q.Sign() < 0 {
				return fmt.Errorf("--assume %s=%s: want a non-negative quantity such as 200Mi, or a percentage", sig, val)
			}
			v = q.Value()
		}
		o.Available, o.Assumed = v, true
		obs[sig] = o
	}
	return nil
}

func knownSignals(k rules.KubeletRules) string {
	var out []string
	for _, s := range AllSignals {
		if s.Valid(k) {
			out = append(out, string(s))
		}
	}
	return strings.Join(out, ", ")
}

// met is thresholdsMet for one threshold: the threshold (plus minimum
// reclaim when enforced) is above what is available.
func met(t Threshold, o observation, enforceMinReclaim bool) bool {
	q := t.Value.resolve(o.Capacity)
	if enforceMinReclaim && t.MinReclaim != nil {
		q.Add(t.MinReclaim.resolve(o.Capacity))
	}
	return q.Cmp(*resource.NewQuantity(o.Available, resource.BinarySI)) > 0
}

// statsLag is how long a started container may be missing from the
// summary: cadvisor's longest housekeeping interval
// (pkg/kubelet/cadvisor/cadvisor_linux.go maxHousekeepingInterval).
const statsLag = 15 * time.Second

// summaryTime is the latest time of the summary's node figures.
func summaryTime(obs map[Signal]observation) time.Time {
	var t time.Time
	for _, o := range obs {
		if !o.Assumed && o.Time.After(t) {
			t = o.Time
		}
	}
	return t
}

// notYetInSummary: the kubelet's stats providers list a pod only once a
// container of it exists in the runtime (pkg/kubelet/stats: the CRI
// provider builds pods from ListContainerStats, cadvisor from its
// housekeeping). A pod none of whose containers had started statsLag
// before the summary is expected to be missing from it; a pod that had
// run that long is not, and its absence says the summary is doubtful.
func notYetInSummary(p *v1.Pod, at time.Time) bool {
	if at.IsZero() {
		return false
	}
	first, started := firstContainerStart(p)
	if !started {
		if p.Status.Phase == v1.PodPending {
			return true // no container has started: nothing to measure
		}
		if p.Status.StartTime == nil {
			return false
		}
		first = p.Status.StartTime.Time
	}
	return first.After(at.Add(-statsLag))
}

// firstContainerStart is the earliest start of any container of the pod,
// running or finished, and whether one has started at all.
func firstContainerStart(p *v1.Pod) (time.Time, bool) {
	var first time.Time
	found := false
	see := func(t metav1.Time) {
		if !t.IsZero() && (!found || t.Time.Before(first)) {
			first, found = t.Time, true
		}
	}
	for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range list {
			for _, st := range []v1.ContainerState{cs.State, cs.LastTerminationState} {
				if st.Running != nil {
					see(st.Running.StartedAt)
				}
				if st.Terminated != nil {
					see(st.Terminated.StartedAt)
				}
			}
		}
	}
	return first, found
}
