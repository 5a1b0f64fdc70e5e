// Package conformance checks the plugin's engine against the real
// kube-controller-manager code of Kubernetes 1.37 (k8s.io/kubernetes
// pkg/controller), on seeded random pod sets.
package conformance

import (
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/features"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

func seed(t *testing.T) uint64 {
	s := uint64(20261122)
	if v := os.Getenv("CONFORMANCE_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		s = n
	}
	t.Logf("seed %d (set CONFORMANCE_SEED to vary)", s)
	return s
}

func sets(t *testing.T) int {
	if testing.Short() {
		return 300
	}
	return 3000
}

// Every pairwise comparison agrees with the real Less, both ways, with the
// gate on and off. This is stronger than agreeing on orders.
func TestComparatorAgreesPairwise(t *testing.T) {
	for _, costGate := range []bool{true, false} {
		t.Run("PodDeletionCost="+strconv.FormatBool(costGate), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.PodDeletionCost, costGate)
			r, err := rules.For(37, map[string]bool{rules.PodDeletionCost: costGate})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed(t), 1))
			pairs := 0
			for s := 0; s < sets(t); s++ {
				pods := randomPods(rng, 2+rng.IntN(10))
				var related []*corev1.Pod
				if rng.IntN(4) > 0 {
					related = pods
				}
				ranks, _ := ranksFor(pods, related)
				real := controller.ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(refNow)}
				c := engine.Comparator{Rules: r, Now: refNow}
				ep := make([]engine.Pod, len(pods))
				for i, p := range pods {
					ep[i] = engine.FromPod(p)
					ep[i].Rank = ranks[i]
				}
				for i := range pods {
					for j := range pods {
						if i == j {
							continue
						}
						pairs++
						want := real.Less(i, j)
						if got := c.Less(&ep[i], &ep[j]); got != want {
							t.Fatalf("set %d: Less(%s, %s) = %v, real controller says %v\n%s", s, pods[i].Name, pods[j].Name, got, want, describe(pods[i], pods[j], ranks[i], ranks[j]))
						}
						if d := c.Compare(&ep[i], &ep[j]); d.AFirst != want {
							t.Fatalf("Compare disagrees with Less for %s, %s", pods[i].Name, pods[j].Name)
						}
					}
				}
			}
			t.Logf("%d ordered pairs agree with controller.ActivePodsWithRanks.Less", pairs)
		})
	}
}

// Run the real sort.Sort(ActivePodsWithRanks) over many shuffled inputs,
// as the controller does on its randomly ordered informer list: every pod
// the engine calls certain always meets that fate, and the engine's
// probabilities match the observed frequencies.
func TestOutcomesAgreeWithRealSort(t *testing.T) {
	r := rules.Default()
	rng := rand.New(rand.NewPCG(seed(t), 2))
	const shuffles = 500
	const tolerance = 0.12 // see README: > 4.5 sigma at 500 shuffles and 2000 engine trials
	var checked, certain, open, strict int
	for s := 0; s < sets(t); s++ {
		n := 2 + rng.IntN(14)
		pods := randomPods(rng, n)
		var related []*corev1.Pod
		if rng.IntN(4) > 0 {
			related = pods
		}
		ranks, onNode := ranksFor(pods, related)
		diff := 1 + rng.IntN(n-1)
		cands := make([]engine.Pod, n)
		for i, p := range pods {
			cands[i] = engine.FromPod(p)
		}
		res := engine.Predict(engine.Input{Candidates: cands, Related: onNode, Delete: diff, Now: refNow, Rules: r, Seed: uint64(s)})
		deleted := map[string]int{}
		work := make([]*corev1.Pod, n)
		for k := 0; k < shuffles; k++ {
			perm := rng.Perm(n)
			wr := make([]int, n)
			for i, pi := range perm {
				work[i], wr[i] = pods[pi], ranks[pi]
			}
			sort.Sort(controller.ActivePodsWithRanks{Pods: work, Rank: wr, Now: metav1.NewTime(refNow)})
			for _, p := range work[:diff] {
				deleted[p.Name]++
			}
		}
		allCertain := true
		for _, pl := range res.Order {
			checked++
			freq := float64(deleted[pl.Pod.Name]) / shuffles
			if pl.Certain {
				certain++
				want := 0.0
				if pl.Delete {
					want = 1
				}
				if freq != want {
					t.Fatalf("set %d: engine says %s is certainly delete=%v, real sort deleted it in %.0f%% of %d runs", s, pl.Pod.Name, pl.Delete, 100*freq, shuffles)
				}
			} else {
				open++
				allCertain = false
			}
			if math.Abs(freq-pl.Probability) > tolerance {
				t.Fatalf("set %d: %s engine probability %.3f, real sort %.3f (group %d)", s, pl.Pod.Name, pl.Probability, freq, pl.Group)
			}
		}
		if allCertain {
			strict++
		}
	}
	t.Logf("%d pod fates checked on %d sets: %d certain (all matched), %d open (probabilities within %.2f); %d sets fully determined", checked, sets(t), certain, open, tolerance, strict)
}

func describe(a, b *corev1.Pod, ra, rb int) string {
	f := func(p *corev1.Pod, r int) string {
		return p.Name + " uid=" + string(p.UID) + " node=" + p.Spec.NodeName + " phase=" + string(p.Status.Phase) +
			" created=" + p.CreationTimestamp.String() + " rank=" + strconv.Itoa(r) + " conds=" + condString(p) + " ann=" + p.Annotations["controller.kubernetes.io/pod-deletion-cost"]
	}
	return f(a, ra) + "\n" + f(b, rb)
}

func condString(p *corev1.Pod) string {
	s := ""
	for _, c := range p.Status.Conditions {
		s += string(c.Type) + "=" + string(c.Status) + "@" + c.LastTransitionTime.String() + " "
	}
	return s
}
