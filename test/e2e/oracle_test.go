package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/controller"
)

// The oracle is a second, plugin-independent check of the harness: it runs
// the real v1.37.1 comparator (k8s.io/kubernetes/pkg/controller
// ActivePodsWithRanks) on the pods as they were just before the scale, over
// many input permutations and a few values of "now". When every run picks
// the same victims, the controllers must have deleted exactly those. For
// StatefulSets it applies the documented ordinal rules. It is not used for
// Deployments with several ReplicaSets (the rollout logic is not modelled
// here).
type oracleResult struct {
	reason  string   // why there is no certain answer
	victims []string // certain victims; ordered for OrderedReady StatefulSets
	ordered bool
	outcome int // number of distinct outcomes seen
}

func (o *oracleResult) certain() bool { return o != nil && o.reason == "" }

func computeOracle(r *scenarioRun) *oracleResult {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	switch r.sc.kind {
	case kindSTS:
		return stsOracle(ctx, r)
	default:
		return rsOracle(ctx, r)
	}
}

func rsOracle(ctx context.Context, r *scenarioRun) *oracleResult {
	c := env.cp.admin
	var uid types.UID
	var sel labels.Selector
	owned := false // RS controlled by a Deployment: ranks count related pods
	switch r.sc.kind {
	case kindRC:
		rc, err := c.CoreV1().ReplicationControllers(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return &oracleResult{reason: err.Error()}
		}
		uid, sel = rc.UID, labels.SelectorFromSet(rc.Spec.Selector)
	case kindRS:
		rs, err := c.AppsV1().ReplicaSets(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return &oracleResult{reason: err.Error()}
		}
		s, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil {
			return &oracleResult{reason: err.Error()}
		}
		uid, sel = rs.UID, s
	case kindDeployment:
		rss, err := c.AppsV1().ReplicaSets(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return &oracleResult{reason: err.Error()}
		}
		if len(rss.Items) != 1 {
			return &oracleResult{reason: fmt.Sprintf("%d ReplicaSets: rollout logic not modelled by the oracle", len(rss.Items))}
		}
		rs := rss.Items[0]
		s, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil {
			return &oracleResult{reason: err.Error()}
		}
		uid, sel, owned = rs.UID, s, metav1.GetControllerOf(&rs) != nil
	}
	var cands, related []*corev1.Pod
	for _, p := range r.before {
		matches := sel.Matches(labels.Set(p.Labels))
		if matches && owned {
			related = append(related, p)
		}
		cu := controllerUID(p)
		if isActive(p) && matches && (cu == uid || cu == "") {
			cands = append(cands, p)
		}
	}
	diff := len(cands) - int(r.sc.target)
	switch {
	case diff <= 0:
		return &oracleResult{victims: nil, outcome: 1}
	case diff >= len(cands):
		var all []string
		for _, p := range cands {
			all = append(all, p.Name)
		}
		return &oracleResult{victims: all, outcome: 1}
	case diff > 500:
		return &oracleResult{reason: "more than 500 deletions: several rounds"}
	}
	podsOnNode := map[string]int{}
	for _, p := range related {
		if isActive(p) {
			podsOnNode[p.Spec.NodeName]++
		}
	}
	outcomes := map[string][]string{}
	rng := rand.New(rand.NewPCG(uint64(len(cands)), 42))
	base := time.Now()
	// The controller sorts with its own "now", some milliseconds after the
	// snapshot; an answer must not depend on it.
	for _, offset := range []time.Duration{0, 300 * time.Millisecond, time.Second} {
		for perm := 0; perm < 120; perm++ {
			pods := slices.Clone(cands)
			rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
			ranks := make([]int, len(pods))
			for i, p := range pods {
				ranks[i] = podsOnNode[p.Spec.NodeName]
			}
			s := controller.ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(base.Add(offset))}
			sort.Sort(s)
			var names []string
			for _, p := range s.Pods[:diff] {
				names = append(names, p.Name)
			}
			slices.Sort(names)
			outcomes[strings.Join(names, ",")] = names
		}
	}
	if len(outcomes) != 1 {
		keys := make([]string, 0, len(outcomes))
		for k := range outcomes {
			keys = append(keys, "{"+k+"}")
		}
		slices.Sort(keys)
		return &oracleResult{reason: fmt.Sprintf("%d possible victim sets: %s", len(outcomes), strings.Join(keys, " ")), outcome: len(outcomes)}
	}
	for _, v := range outcomes {
		return &oracleResult{victims: v, outcome: 1}
	}
	return nil
}

func runningAndReady(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && isReady(p) }

// stsOracle applies the v1.37 StatefulSet scale-down rules (the StatefulSet controller,
// minReadySeconds 0) to the snapshot, assuming each deleted pod disappears
// before the next sync (the runner force-deletes it).
func stsOracle(ctx context.Context, r *scenarioRun) *oracleResult {
	set, err := env.cp.admin.AppsV1().StatefulSets(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
	if err != nil {
		return &oracleResult{reason: err.Error()}
	}
	start := 0
	if set.Spec.Ordinals != nil {
		start = int(set.Spec.Ordinals.Start)
	}
	end := start + int(r.sc.target) - 1
	monotonic := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	byOrd := map[int]*corev1.Pod{}
	var condemned []*corev1.Pod
	for _, p := range r.before {
		if controllerUID(p) != set.UID {
			continue
		}
		if isTerminating(p) {
			return &oracleResult{reason: "a pod is already terminating"}
		}
		ord := statefulOrdinal(p.Name)
		if ord < 0 {
			continue
		}
		byOrd[ord] = p
		if ord < start || ord > end {
			condemned = append(condemned, p)
		}
	}
	sort.Slice(condemned, func(i, j int) bool { return statefulOrdinal(condemned[i].Name) > statefulOrdinal(condemned[j].Name) })
	if !monotonic {
		var names []string
		for _, p := range condemned {
			names = append(names, p.Name)
		}
		return &oracleResult{victims: names, outcome: 1}
	}
	for ord := start; ord <= end; ord++ {
		p := byOrd[ord]
		if p == nil || !runningAndReady(p) {
			// Blocked: a missing, not Running or not Ready in-range pod.
			return &oracleResult{victims: nil, ordered: true, outcome: 1}
		}
	}
	var victims []string
	for len(condemned) > 0 {
		var firstUnhealthy *corev1.Pod
		for i := len(condemned) - 1; i >= 0; i-- {
			if !isReady(condemned[i]) {
				firstUnhealthy = condemned[i]
				break
			}
		}
		c := condemned[0]
		if !runningAndReady(c) && c != firstUnhealthy {
			break
		}
		victims = append(victims, c.Name)
		condemned = condemned[1:]
	}
	return &oracleResult{victims: victims, ordered: true, outcome: 1}
}

// checkOracle compares the oracle with what the controllers did.
func (r *scenarioRun) checkOracle(t *testing.T) {
	o := r.oracle
	if o == nil {
		return
	}
	if !o.certain() {
		t.Logf("  oracle: no single answer (%s)", o.reason)
		return
	}
	got := slices.Clone(r.deleted)
	want := slices.Clone(o.victims)
	if o.ordered {
		if !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("the real controllers deleted %v in this order; the StatefulSet rules say %v", got, want)
			return
		}
	} else {
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("the real controllers deleted %v; the real comparator on the snapshot says %v", r.deleted, o.victims)
			return
		}
	}
	t.Logf("  oracle agrees with the controllers: %v", o.victims)
}
